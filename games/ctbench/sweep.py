"""Offline sweeps: boards × conditions × modes × agent pairings, run in local processes (default) or Ray."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from contractlang.vocab import Frozen
from games.ctbench.board import benchmark_board
from games.ctbench.play import GameRecord, play_game


class GameSpec(Frozen):
    board_id: int
    condition: str
    mode: str
    red: str
    blue: str
    seed: int = 0


def run_spec(spec: GameSpec) -> GameRecord:
    return play_game(benchmark_board(spec.board_id), spec.condition, spec.mode, spec.red, spec.blue, spec.seed)


def run_specs(specs: list[GameSpec], workers: int | None = None,
              ray_address: str | None = None) -> Iterator[GameRecord]:
    """Yield records as games finish (order not guaranteed); `workers=1` runs in this process."""
    if ray_address is not None:
        yield from _run_ray(specs, ray_address)
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for spec in specs:
            yield run_spec(spec)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(run_spec, specs, chunksize=max(1, len(specs) // (workers * 8)))


def _run_ray(specs: list[GameSpec], address: str) -> Iterator[GameRecord]:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'contractlang[ray]'") from None
    ray.init(address=None if address == "local" else address, ignore_reinit_error=True,
             include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_spec)
    pending = [remote.remote(s) for s in specs]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


class JsonlWriter:
    """Appends one complete JSON line per record and flushes, so an interrupted sweep keeps every finished game."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")

    def write(self, record: Frozen) -> None:
        self._file.write(json.dumps(record.model_dump(mode="json")) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
