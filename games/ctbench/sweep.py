"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from contractlang.files import write_atomically
from contractlang.llm import LlmClient, LlmSettings
from contractlang.progress import Advance
from contractlang.vocab import Frozen
from games.ctbench.agents import check_agent
from games.ctbench.board import benchmark_board
from games.ctbench.metrics import TableRow, summarise
from games.ctbench.play import GameRecord, check_judge, play_game
from games.runner import JobStore, run_jobs


class GameSpec(Frozen):
    """One game of a sweep; also its key in the record store (equal specs are one game)."""
    board_id: int
    condition: str
    mode: str
    red: str
    blue: str
    seed: int = 0
    repeat: int = 0
    visible: bool = True
    judge: str = "rules"

    @classmethod
    def of(cls, record: GameRecord) -> GameSpec:
        return cls(board_id=record.board_id, condition=record.condition, mode=record.mode, red=record.red_agent,
                   blue=record.blue_agent, seed=record.seed, repeat=record.repeat, visible=record.visible,
                   judge=record.judge)


def run_spec(spec: GameSpec, llm: LlmSettings | None = None) -> GameRecord:
    """One game; LLM players and judges get a client of their own made from `llm` (in whichever process)."""
    client = LlmClient(llm, os.environ.get("ANTHROPIC_API_KEY")) if llm is not None else None
    return play_game(benchmark_board(spec.board_id), spec.condition, spec.mode, spec.red, spec.blue, spec.seed,
                     visible=spec.visible, keep_log=True, repeat=spec.repeat, llm=client, judge=spec.judge)


def run_specs(specs: list[GameSpec], workers: int | None = None, ray_address: str | None = None,
              llm: LlmSettings | None = None) -> Iterator[GameRecord]:
    """Yield records as games finish (order not guaranteed); `workers=1` runs in this process. With LLM
    agents, `workers` also bounds the requests in flight."""
    return run_jobs(partial(run_spec, llm=llm), specs, workers, ray_address)


def record_store(directory: Path) -> JobStore[GameSpec, GameRecord]:
    """`games.jsonl` of a sweep directory: the games already finished, and an append-only writer."""
    return JobStore(directory / "games.jsonl", GameRecord, GameSpec.of, "game")


def check_names(pairs: list[tuple[str, str]], judge: str) -> None:
    """`UnknownName` unless every agent of the (red, blue) `pairs` and the `judge` name ones `play_game` plays."""
    for name in dict.fromkeys(n for pair in pairs for n in pair):
        check_agent(name)
    check_judge(judge)


class SweepResult(Frozen):
    """A sweep's records in the order of its specs, how many were played now, and where they are kept."""

    records: tuple[GameRecord, ...]
    rows: tuple[TableRow, ...]
    played: int
    store: Path
    summary: Path


def sweep(specs: list[GameSpec], out: Path, workers: int | None, ray_address: str | None,
          llm: LlmSettings | None, progress: Advance, notice: Callable[[str], None]) -> SweepResult:
    """Play the games of `specs` that `out/games.jsonl` does not hold yet, appending each as it ends, and write
    the summary rows of all of them to `out/summary.json`; `notice` hears what the store held before."""
    store = record_store(out)
    todo = store.missing(specs)
    summary_path = out / "summary.json"
    if todo:
        summary_path.unlink(missing_ok=True)  # it would describe a record set this run is about to change
    if store.dropped_cut_line:
        notice(f"{store.path}: dropped its last line, cut short by an interrupted run")
    if len(todo) < len(specs):
        notice(f"{len(specs) - len(todo)} of {len(specs)} games already in {store.path}; playing {len(todo)}")
    try:
        games = run_specs(todo, workers=workers, ray_address=ray_address, llm=llm)
        try:
            if todo:
                progress("games", 0, len(todo))
            for played, record in enumerate(games, 1):
                store.add(record)
                progress("games", played, len(todo))
        finally:
            games.close()
    finally:
        store.close()
    records = tuple(store.records[s] for s in specs)
    rows = tuple(summarise(list(records)))
    write_atomically(summary_path, json.dumps([r.model_dump(mode="json") for r in rows], indent=1) + "\n")
    return SweepResult(records=records, rows=rows, played=len(todo), store=store.path, summary=summary_path)
