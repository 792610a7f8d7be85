"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from operator import attrgetter
from pathlib import Path

from contractlang.files import check_writable, make_folder, write_atomically
from contractlang.llm import LlmClient, LlmModel, LlmUsage
from contractlang.progress import Advance
from contractlang.vocab import BoardSet, Frozen, RuleSet
from games.agents import check as check_agent
from games.agents import model_of
from games.ctbench.board import SHORTEST_PATH, benchmark_board
from games.ctbench.metrics import TableRow, summarise
from games.ctbench.negotiation import MAX_MESSAGES
from games.ctbench.play import GameRecord, check_judge, play
from games.runner import Phase, RunOptions, game_limits, plan, run_games, run_jobs


class GameSpec(Frozen):
    """One game of a sweep; also its key in the record store (equal specs are one game)."""

    board_id: int
    board_set: BoardSet = "ours"
    condition: str
    mode: str
    red: str
    blue: str
    seed: int = 0
    repeat: int = 0
    visible: bool = True
    judge: str = "rules"
    rules: RuleSet = "authors"

    @classmethod
    def of(cls, record: GameRecord) -> GameSpec:
        return cls(
            board_id=record.board_id,
            board_set=record.board_set,
            condition=record.condition,
            mode=record.mode,
            red=record.red_agent,
            blue=record.blue_agent,
            seed=record.seed,
            repeat=record.repeat,
            visible=record.visible,
            judge=record.judge,
            rules=record.rules,
        )


MAX_GAMES = 100_000  # a sweep's records are held in memory and summarised together


def sweep_specs(
    boards: list[tuple[str, int]],
    conditions: list[str],
    modes: list[str],
    pairs: list[tuple[str, str]],
    repeats: int,
    seed: int = 0,
    visible: bool = True,
    judge: str = "rules",
    rules: str = "authors",
) -> list[GameSpec]:
    """Every game of a sweep on `boards` ((board set, ID) pairs), each once; a sweep of more than MAX_GAMES games
    is refused before any is listed."""
    count = len(boards) * len(conditions) * len(modes) * len(pairs) * repeats
    if count > MAX_GAMES:
        raise ValueError(
            f"a sweep of {count:,} games is more than {MAX_GAMES:,}; split it into sweeps with their own --out"
        )
    return list(
        dict.fromkeys(
            GameSpec(
                board_id=i,
                board_set=board_set,
                condition=c,
                mode=m,
                red=r,
                blue=b,
                seed=seed,
                repeat=k,
                visible=visible,
                judge=judge,
                rules=rules,
            )
            for board_set, i in boards
            for c in conditions
            for m in modes
            for r, b in pairs
            for k in range(repeats)
        )
    )


def run_spec(spec: GameSpec, client: LlmClient | None = None, objects: dict | None = None) -> GameRecord:
    """One game; LLM players and judges call the model through `client`, the one client its process's games
    share. `objects` are Python agents by label: a spec names one by its label."""
    red, blue = ((objects or {}).get(name, name) for name in (spec.red, spec.blue))
    return play(
        benchmark_board(spec.board_id, spec.board_set),
        spec.condition,
        spec.mode,
        red,
        blue,
        spec.seed,
        visible=spec.visible,
        keep_log=True,
        repeat=spec.repeat,
        llm=client,
        judge=spec.judge,
        rules=spec.rules,
    )


def run_specs(specs: list[GameSpec], workers: int | None = None) -> Iterator[GameRecord]:
    """Yield the records of games without LLM players or judges as they finish (order not guaranteed), storing
    none: the benchmarks' timing runs; `workers=1` runs in this process."""
    return run_jobs(run_spec, specs, workers)


def calls_model(spec: GameSpec) -> bool:
    """Whether the game waits on an LLM (a player or the judge is one)."""
    return any(model_of(name) is not None for name in (spec.red, spec.blue, spec.judge))


def decisions(spec: GameSpec) -> list[tuple[LlmModel, int]]:
    """(model, calls) of each LLM player and judge of the game, from its length: a player moves about once a
    turn along a shortest path (SHORTEST_PATH turns), and under a contract condition speaks about half of a
    negotiation's MAX_MESSAGES and confirms once; the judge reads each of those messages and moves."""
    talk = MAX_MESSAGES // 2 + 1 if spec.condition != "none" else 0
    players = [(model_of(name), SHORTEST_PATH + talk) for name in (spec.red, spec.blue)]
    judge = [(model_of(spec.judge), 2 * (SHORTEST_PATH + talk))]
    return [(model, n) for model, n in players + judge if model is not None]


def sweep_phase(specs: list[GameSpec], directory: Path, objects: dict | None = None) -> Phase:
    """A sweep's games as a phase of `games.runner.run_games`, stored in `directory/games.jsonl` one by one as
    each ends. `objects` (Python agents by label) travel to the workers by pickle."""
    return Phase(
        "games",
        directory / "games.jsonl",
        GameRecord,
        partial(run_spec, objects=objects),
        specs,
        network=calls_model,
        job_of=GameSpec.of,
        calls=attrgetter("llm_calls"),
        what="game",
    )


def check_names(pairs: list[tuple[str, str]], judge: str, objects: dict | None = None) -> None:
    """`UnknownName` unless every agent of the (red, blue) `pairs` (but the Python `objects`, by label) and the
    `judge` name ones `play` plays."""
    for name in dict.fromkeys(n for pair in pairs for n in pair if n not in (objects or {})):
        check_agent(name, "ctbench")
    check_judge(judge)


class SweepResult(Frozen):
    """A sweep's completed records in the order of its specs, how many were played now, how many did not
    finish, and where they are kept."""

    records: tuple[GameRecord, ...]
    rows: tuple[TableRow, ...]
    played: int
    store: Path
    summary: Path
    llm_usage: LlmUsage  # every game's LLM calls, those of the games played before included
    errored: int = 0  # games left out of `records`: their model calls failed (a rerun retries them)
    limited: int = 0  # games left out of `records`: they reached a per-game limit

    @property
    def null_actions(self) -> int:
        """LLM replies that were invalid twice and became the null action [CT-12], over `records`."""
        return sum(n for r in self.records for n in r.llm_null_actions.values())


def sweep(
    specs: list[GameSpec],
    out: Path,
    options: RunOptions,
    progress: Advance,
    notice: Callable[[str], None],
    objects: dict | None = None,
) -> SweepResult:
    """Play the games of `specs` that `out/games.jsonl` does not hold yet, appending each as it ends (see
    `games.runner.run_games` for how, and what a failed call or a limit does), and write the summary rows of the
    completed ones to `out/summary.json`; `notice` hears what the store held before."""
    phase = sweep_phase(specs, out, objects)
    counts, todo = plan(phase, game_limits(options.llm))
    summary_path = out / "summary.json"
    make_folder(out)
    check_writable(summary_path)  # refused now, not after the games
    if todo:
        summary_path.unlink(missing_ok=True)  # it would describe a record set this run is about to change
    if counts.stored:
        notice(f"{counts.stored} of {len(specs)} games already in {phase.path}; playing {len(todo)}")
    [played] = run_games([phase], options, progress, notice)
    records = tuple(played.records[s] for s in specs if s in played.records)
    rows = tuple(summarise(list(records)))
    write_atomically(summary_path, json.dumps([r.model_dump(mode="json") for r in rows], indent=1) + "\n")
    left = list(played.unfinished.values())
    return SweepResult(
        records=records,
        rows=rows,
        played=played.played,
        store=phase.path,
        summary=summary_path,
        llm_usage=LlmUsage.of(c for r in records for c in r.llm_calls),
        errored=sum(u.status == "errored" for u in left),
        limited=sum(u.status == "limited" for u in left),
    )
