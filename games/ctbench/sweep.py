"""Offline sweeps: boards × conditions × modes × agent pairings × repeats, in local processes (default) or Ray.

A sweep is resumable: `games.jsonl` is appended to, one complete line per finished game; a rerun into the
same directory reads it, keeps every complete record and plays only the games still missing.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path

from pydantic import ValidationError

from contractlang.files import FileError, write_atomically
from contractlang.llm import LlmClient, LlmSettings
from contractlang.vocab import Frozen
from games.ctbench.board import benchmark_board
from games.ctbench.play import GameRecord, play_game


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


def _worker_init() -> None:
    # the parent alone answers Ctrl-C / SIGTERM, and then ends the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_specs(specs: list[GameSpec], workers: int | None = None, ray_address: str | None = None,
              llm: LlmSettings | None = None) -> Iterator[GameRecord]:
    """Yield records as games finish (order not guaranteed); `workers=1` runs in this process. With LLM
    agents, `workers` also bounds the requests in flight.

    Closing the iterator (or an interrupt while it waits) terminates the worker processes at once."""
    if ray_address is not None:
        yield from _run_ray(specs, ray_address, llm)
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(specs) <= 1:
        for spec in specs:
            yield run_spec(spec, llm)
        return
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init)
    try:
        yield from pool.imap_unordered(partial(run_spec, llm=llm), specs,
                                       chunksize=max(1, len(specs) // (workers * 8)))
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _reachable(address: str, seconds: float = 5.0) -> None:
    """Fail at once, with the address named, when no Ray head answers there (Ray itself waits minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RuntimeError(f"--ray takes 'local', 'auto' or a cluster address HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        raise RuntimeError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


def _run_ray(specs: list[GameSpec], address: str, llm: LlmSettings | None) -> Iterator[GameRecord]:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'contractlang[ray]'") from None
    if address not in ("local", "auto"):
        _reachable(address)
    ray.init(address=None if address == "local" else address, ignore_reinit_error=True,
             include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_spec)
    pending = [remote.remote(s, llm) for s in specs]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


class RecordStore:
    """`games.jsonl` of a sweep directory: the records already finished, and an append-only writer.

    Only the last line can be cut short by an interrupted run: it is dropped (the file is rewritten
    without it) so that new lines never follow a partial one. Any other line that is not a game record
    stops the sweep with its line number, and nothing is rewritten. A repeated game keeps its first record."""

    def __init__(self, directory: Path):
        self.path = directory / "games.jsonl"
        self.records: dict[GameSpec, GameRecord] = {}
        self.dropped_cut_line = False
        try:
            directory.mkdir(parents=True, exist_ok=True)
            raw = self.path.read_bytes() if self.path.exists() else b""
        except OSError as exc:
            raise FileError(f"cannot use {directory} for the sweep: {exc.strerror or exc}") from None
        lines = raw.splitlines(keepends=True)
        for number, line in enumerate(lines, start=1):
            record = _parse(line)
            if record is not None:
                self.records.setdefault(GameSpec.of(record), record)
            elif number == len(lines) and not line.endswith(b"\n"):
                self.dropped_cut_line = True
                write_atomically(self.path, raw[: len(raw) - len(line)])
            elif line.strip():
                raise FileError(f"{self.path}:{number}: not a game record of this version; move the file away or "
                                "choose another --out")
        try:
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise FileError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def missing(self, specs: Iterable[GameSpec]) -> list[GameSpec]:
        return [s for s in dict.fromkeys(specs) if s not in self.records]

    def add(self, record: GameRecord) -> None:
        self._file.write(json.dumps(record.model_dump(mode="json")) + "\n")
        self._file.flush()
        self.records.setdefault(GameSpec.of(record), record)

    def close(self) -> None:
        self._file.close()


def _parse(line: bytes) -> GameRecord | None:
    if not line.strip():
        return None
    try:
        return GameRecord.model_validate_json(line)
    except ValidationError:
        return None
