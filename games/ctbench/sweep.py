"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from contractlang.llm import LlmClient, LlmSettings
from contractlang.vocab import Frozen
from games.ctbench.board import benchmark_board
from games.ctbench.play import GameRecord, play_game
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


MAX_GAMES = 100_000  # a sweep's records are held in memory and summarised together


def sweep_specs(boards: list[int], conditions: list[str], modes: list[str], pairs: list[tuple[str, str]],
                repeats: int, seed: int = 0, visible: bool = True, judge: str = "rules") -> list[GameSpec]:
    """Every game of a sweep, each once; a sweep of more than MAX_GAMES games is refused before any is listed."""
    count = len(boards) * len(conditions) * len(modes) * len(pairs) * repeats
    if count > MAX_GAMES:
        raise ValueError(f"a sweep of {count:,} games is more than {MAX_GAMES:,}; split it into sweeps with their "
                         "own --out")
    return list(dict.fromkeys(
        GameSpec(board_id=i, condition=c, mode=m, red=r, blue=b, seed=seed, repeat=k, visible=visible, judge=judge)
        for i in boards for c in conditions for m in modes for r, b in pairs for k in range(repeats)))


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
