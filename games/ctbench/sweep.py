"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from contractlang.llm import ApiKeys, LlmClient, LlmSettings
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


def run_spec(spec: GameSpec, llm: LlmSettings | None = None) -> GameRecord:
    """One game; LLM players and judges get a client of their own made from `llm` (in whichever process)."""
    client = LlmClient(llm, ApiKeys.from_environment()) if llm is not None else None
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
