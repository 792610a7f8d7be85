"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from contractlang.files import check_writable, write_atomically
from contractlang.llm import ApiKeys, LlmClient, LlmSettings, LlmUsage
from contractlang.progress import Advance
from contractlang.vocab import BoardSet, Frozen, RuleSet
from games.agents import check as check_agent
from games.ctbench.board import benchmark_board
from games.ctbench.metrics import TableRow, summarise
from games.ctbench.play import GameRecord, check_judge, play
from games.runner import JobStore, run_jobs


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
        return cls(board_id=record.board_id, board_set=record.board_set, condition=record.condition, mode=record.mode,
                   red=record.red_agent, blue=record.blue_agent, seed=record.seed, repeat=record.repeat,
                   visible=record.visible,
                   judge=record.judge, rules=record.rules)


MAX_GAMES = 100_000  # a sweep's records are held in memory and summarised together


def sweep_specs(boards: list[tuple[str, int]], conditions: list[str], modes: list[str], pairs: list[tuple[str, str]],
                repeats: int, seed: int = 0, visible: bool = True, judge: str = "rules",
                rules: str = "authors") -> list[GameSpec]:
    """Every game of a sweep on `boards` ((board set, ID) pairs), each once; a sweep of more than MAX_GAMES games
    is refused before any is listed."""
    count = len(boards) * len(conditions) * len(modes) * len(pairs) * repeats
    if count > MAX_GAMES:
        raise ValueError(f"a sweep of {count:,} games is more than {MAX_GAMES:,}; split it into sweeps with their "
                         "own --out")
    return list(dict.fromkeys(
        GameSpec(board_id=i, board_set=board_set, condition=c, mode=m, red=r, blue=b, seed=seed, repeat=k,
                 visible=visible, judge=judge, rules=rules)
        for board_set, i in boards for c in conditions for m in modes for r, b in pairs for k in range(repeats)))


def run_spec(spec: GameSpec, llm: LlmSettings | None = None, objects: dict | None = None) -> GameRecord:
    """One game; LLM players and judges get a client of their own made from `llm` (in whichever process).
    `objects` are Python agents by label: a spec names one by its label."""
    client = LlmClient(llm, ApiKeys.from_environment()) if llm is not None else None
    red, blue = ((objects or {}).get(name, name) for name in (spec.red, spec.blue))
    return play(benchmark_board(spec.board_id, spec.board_set), spec.condition, spec.mode, red, blue,
                     spec.seed, visible=spec.visible, keep_log=True, repeat=spec.repeat, llm=client, judge=spec.judge,
                     rules=spec.rules)


def run_specs(specs: list[GameSpec], workers: int | None = None, ray_address: str | None = None,
              llm: LlmSettings | None = None, objects: dict | None = None) -> Iterator[GameRecord]:
    """Yield records as games finish (order not guaranteed); `workers=1` runs in this process. With LLM
    agents, `workers` also bounds the requests in flight. `objects` (Python agents by label) travel to the
    workers by pickle."""
    return run_jobs(partial(run_spec, llm=llm, objects=objects), specs, workers, ray_address)


def record_store(directory: Path) -> JobStore[GameSpec, GameRecord]:
    """`games.jsonl` of a sweep directory: the games already finished, and an append-only writer."""
    return JobStore(directory / "games.jsonl", GameRecord, GameSpec.of, "game")


def check_names(pairs: list[tuple[str, str]], judge: str, objects: dict | None = None) -> None:
    """`UnknownName` unless every agent of the (red, blue) `pairs` (but the Python `objects`, by label) and the
    `judge` name ones `play` plays."""
    for name in dict.fromkeys(n for pair in pairs for n in pair if n not in (objects or {})):
        check_agent(name, "ctbench")
    check_judge(judge)


class SweepResult(Frozen):
    """A sweep's records in the order of its specs, how many were played now, and where they are kept."""

    records: tuple[GameRecord, ...]
    rows: tuple[TableRow, ...]
    played: int
    store: Path
    summary: Path
    llm_usage: LlmUsage  # every game's LLM calls, those of the games played before included


def sweep(specs: list[GameSpec], out: Path, workers: int | None, ray_address: str | None,
          llm: LlmSettings | None, progress: Advance, notice: Callable[[str], None],
          objects: dict | None = None) -> SweepResult:
    """Play the games of `specs` that `out/games.jsonl` does not hold yet, appending each as it ends, and write
    the summary rows of all of them to `out/summary.json`; `notice` hears what the store held before."""
    store = record_store(out)
    todo = store.missing(specs)
    summary_path = out / "summary.json"
    try:
        check_writable(summary_path)  # refused now, not after the games
        if todo:
            summary_path.unlink(missing_ok=True)  # it would describe a record set this run is about to change
    except BaseException:
        store.close()
        raise
    if store.dropped_cut_line:
        notice(f"{store.path}: dropped its last line, cut short by an interrupted run")
    if len(todo) < len(specs):
        notice(f"{len(specs) - len(todo)} of {len(specs)} games already in {store.path}; playing {len(todo)}")
    try:
        games = run_specs(todo, workers=workers, ray_address=ray_address, llm=llm, objects=objects)
        try:
            if todo:
                progress("games", 0, len(todo))
            for played, record in enumerate(games, 1):
                store.add(record)
                progress("games", played, len(todo))
        finally:
            games.close()
        if todo:  # a run that played nothing leaves the store as it found it
            store.put_in_order(specs)
    finally:
        store.close()
    records = tuple(store.records[s] for s in specs)
    rows = tuple(summarise(list(records)))
    write_atomically(summary_path, json.dumps([r.model_dump(mode="json") for r in rows], indent=1) + "\n")
    return SweepResult(records=records, rows=rows, played=len(todo), store=store.path, summary=summary_path,
                       llm_usage=LlmUsage.of(c for r in records for c in r.llm_calls))
