"""Where a run's jobs play: CPU jobs in worker processes, LLM games in threads of one process, or on Ray."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any

from contractlang.llm.client import LlmClient
from contractlang.llm.errors import CallFailed, GameLimitReached, RunLimitReached, RunStopped
from contractlang.llm.providers import ApiKeys
from games.external import kill_tree
from games.runner.plans import RunOptions
from games.runner.workers import (
    WORKER_END_SECONDS,
    end_pool,
    fork_pool,
    free_large_blocks_to_the_system,
    still_running,
    worker_init,
    worker_lost,
)


def _reachable(address: str, seconds: float = 5.0) -> None:
    """Fail at once, with the address named, when no Ray head answers there (Ray itself waits minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RuntimeError(f"--ray takes 'local', 'auto' or a cluster address HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        raise RuntimeError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from or while handling (agents re-raise a failed call as their
    own error, `from None`, which still keeps it as the context)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _outcome(exc: BaseException) -> tuple[str, Any]:
    """How a game that raised `exc` ended: (kind, reason) — see `_attempt`."""
    chain = list(_chain(exc))
    for kind, wanted in (
        ("run-limit", RunLimitReached),
        ("stopped", RunStopped),
        ("limited", GameLimitReached),
        ("errored", CallFailed),
    ):
        found = next((e for e in chain if isinstance(e, wanted)), None)
        if found is not None:
            return kind, str(found) if kind == "run-limit" else str(exc)
    return "failed", exc


def _attempt(work: Callable, job, client=None, networked: bool = False) -> tuple[str, Any]:
    """One job: ("done", record), or how it ended without one — ("errored" | "limited", reason) for a game,
    ("run-limit", reason) when the run reached its limit, ("stopped", reason) when the run was stopped under
    it, ("failed", exception) for anything else (a broken agent, a bug), which ends the run."""
    try:
        return "done", work(job, client=client) if networked else work(job)
    except Exception as exc:
        return _outcome(exc)


def _attempt_batch(batch: Callable, jobs: list) -> list[tuple[str, Any]]:
    """CPU jobs played together (`Phase.batch`): ("done", record) for each, in order, or how the batch ended
    without them (see `_attempt`), the same for every job."""
    try:
        records = batch(jobs)
    except Exception as exc:
        return [_outcome(exc)] * len(jobs)
    return [("done", record) for record in records]


def each(work: Callable, jobs: list) -> list:
    """The batch of a phase that plays its jobs one by one: `work(job)` for each."""
    return [work(job) for job in jobs]


def _sendable(kind: str, payload):
    """An exception that cannot cross the pipe becomes a RuntimeError with its message."""
    if kind == "failed":
        try:
            pickle.dumps(payload)
        except Exception:
            return RuntimeError(f"{type(payload).__name__}: {payload}")
    return payload


class Processes:
    """The CPU jobs: `size` forked worker processes, one batch of jobs at a time each, every job's result an
    event; without `fork`, one thread of this process. A run with workers forks even for a single job, so that
    this process never starts the compiled kernels' threads (OpenMP aborts a process that forks after starting
    them)."""

    def __init__(self, size: int, events: queue.Queue, fork: bool = True):
        self.events = events
        self.futures: dict = {}  # future → how many jobs it plays
        self.pool = fork_pool(size) if fork else ThreadPoolExecutor(1, thread_name_prefix="job")

    def run(self, i: int, jobs: list, batch: Callable) -> None:
        future = self.pool.submit(_attempt_batch, batch, jobs)
        self.futures[future] = len(jobs)
        future.add_done_callback(partial(self._done, i, jobs))

    def _done(self, i: int, jobs: list, future) -> None:
        self.futures.pop(future, None)
        if future.cancelled():
            return
        try:
            outcomes = future.result()
        except BrokenProcessPool:
            outcomes = [("lost", worker_lost(self.pool))] * len(jobs)
        for job, (kind, payload) in zip(jobs, outcomes):
            self.events.put((kind, i, job, payload, None))

    def halt(self, grace: float) -> None:
        for future in list(self.futures):
            if future.cancel():
                for _ in range(self.futures.pop(future, 0)):
                    self.events.put(("stopped", None, None, None, None))

    def close(self) -> int:
        """End the jobs at once; how many were still running."""
        running = sum(self.futures.values())
        if isinstance(self.pool, ProcessPoolExecutor):
            end_pool(self.pool)
        else:
            self.pool.shutdown(wait=False, cancel_futures=True)
        return running


def process_client(options: RunOptions, earlier: Any = None):
    """The one LLM client of this process's games (None without LLM settings), told what the games this run
    finished before spent (`earlier`, an LlmUsage), so the run's limits count them."""
    if options.llm is None:
        return None
    client = LlmClient(options.llm, ApiKeys.from_environment())
    if earlier is not None and earlier.calls:
        client.count_earlier(earlier)
    return client


class Threads:
    """The games that wait on an LLM: `connections` at once in threads of this process, sharing one client (one
    pooled HTTP client per provider). Every game submitted gives one event, a stopped one included."""

    def __init__(self, options: RunOptions, events, works: list[Callable], earlier: Any = None):
        self.events, self.works = events, works
        free_large_blocks_to_the_system()
        self.client = process_client(options, earlier)
        self.pool = ThreadPoolExecutor(options.connections, thread_name_prefix="game")
        self.halted = threading.Event()

    def play(self, i: int, job) -> None:
        self.pool.submit(self._play, i, job)

    def _play(self, i: int, job) -> None:
        if self.halted.is_set():
            kind, payload = "stopped", None
        else:
            kind, payload = _attempt(self.works[i], job, self.client, networked=True)
        self.events.put((kind, i, job, payload, self.client.totals() if self.client is not None else None))

    def halt(self, grace: float) -> None:
        """Start no game more; the client lets the replies in flight arrive for up to `grace` seconds."""
        self.halted.set()
        if self.client is not None:
            self.client.stop(grace)

    def close(self) -> None:
        self.halted.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self.client is not None:
            self.client.close()


class _Sender:
    """A pipe end several threads send on."""

    def __init__(self, connection):
        self.connection, self.lock = connection, threading.Lock()

    def put(self, message) -> None:
        kind, i, job, payload, totals = message
        with self.lock:
            self.connection.send((kind, i, job, _sendable(kind, payload), totals))


def _serve(connection, options: RunOptions, works: list[Callable], earlier: Any, parent: int) -> None:
    """The game process: plays what the parent sends it in `Threads`, sending back every game's event."""
    worker_init(1, parent)
    threads = Threads(options, _Sender(connection), works, earlier)
    try:
        while True:
            try:
                command, *args = connection.recv()
            except (EOFError, OSError):
                break
            if command == "play":
                threads.play(*args)
            elif command == "halt":
                threads.halt(*args)
            else:
                break
    finally:
        threads.close()
        os._exit(0)  # the game threads still waiting are the parent's to forget, not to join


class GameProcess:
    """`Threads` in one forked process, so this one starts no compiled-kernel threads before forking workers
    (a fork after that can hang); its events are read back by a thread."""

    def __init__(self, options: RunOptions, events: queue.Queue, works: list[Callable], earlier: Any = None):
        mine, theirs = multiprocessing.Pipe()
        self.process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(theirs, options, works, earlier, os.getpid()), daemon=True
        )
        self.process.start()
        theirs.close()
        self.sender = _Sender(mine)
        self.connection = mine
        threading.Thread(target=self._read, args=(events,), daemon=True).start()

    def _read(self, events: queue.Queue) -> None:
        while True:
            try:
                events.put(self.connection.recv())
            except (EOFError, OSError):
                events.put(
                    (
                        "lost",
                        None,
                        None,
                        "the process playing the LLM games died (killed, or out of "
                        "memory); the finished games are kept, and a rerun plays the rest",
                        None,
                    )
                )
                return

    def _send(self, *message) -> None:
        with self.sender.lock:
            self.connection.send(message)

    def play(self, i: int, job) -> None:
        self._send("play", i, job)

    def halt(self, grace: float) -> None:
        self._send("halt", grace)

    def close(self) -> None:
        try:
            self._send("end")
        except OSError:
            pass
        if still_running([self.process], WORKER_END_SECONDS):
            kill_tree(self.process.pid)
        self.process.join()


class _RayPlayer:
    """A Ray actor playing LLM games in threads (a threaded actor) around one client of its own."""

    def __init__(self, options: RunOptions, works: list[Callable], earlier: Any = None):
        self.client, self.works, self.halted = process_client(options, earlier), works, False

    def play(self, i: int, job) -> tuple:
        if self.halted:
            return "stopped", None, None
        kind, payload = _attempt(self.works[i], job, self.client, networked=True)
        return kind, _sendable(kind, payload), self.client.totals() if self.client is not None else None

    def halt(self, grace: float) -> None:
        self.halted = True
        if self.client is not None:
            self.client.stop(grace)


class RayRun:
    """The jobs on Ray: CPU jobs as tasks (a batch each), at most `workers` at once; LLM games on `workers`
    threaded actors, `max_connections` at once over them all. Ray is shut down at the end, an interrupt included, so a local
    cluster this run started leaves no process behind."""

    def __init__(
        self, options: RunOptions, events: queue.Queue, works: list[Callable], workers: int, earlier: Any = None
    ):
        try:
            import ray
        except ImportError:
            raise RuntimeError("--ray needs Ray: pip install 'contractlang[ray]'") from None
        if options.ray not in ("local", "auto"):
            _reachable(options.ray)
        self.ray, self.events, self.works, self.workers = ray, events, works, workers
        self.options, self.earlier = options, earlier
        ray.init(
            address=None if options.ray == "local" else options.ray,
            ignore_reinit_error=True,
            include_dashboard=False,
            log_to_driver=False,
        )
        self.task = ray.remote(_attempt_batch)
        self.actors: list = []
        self.waiting: dict[str, list] = {"cpu": [], "game": []}
        self.running: dict[str, int] = {"cpu": 0, "game": 0}
        self.pending: dict = {}  # object ref → (kind of slot, phase, job)
        self.lock = threading.Lock()
        self.ended = threading.Event()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def run(self, i: int, jobs: list, batch: Callable) -> None:
        with self.lock:
            self.waiting["cpu"].append((i, jobs, batch))
            self._fill()

    def play(self, i: int, job) -> None:
        with self.lock:
            self.waiting["game"].append((i, job, None))
            self._fill()

    def _fill(self) -> None:
        limits = {"cpu": self.workers, "game": self.options.connections}
        for slot, queued in self.waiting.items():
            while queued and self.running[slot] < limits[slot]:
                i, job, batch = queued.pop(0)
                actor = None
                if slot == "cpu":
                    ref = self.task.remote(batch, job)  # `job` is the batch's list of jobs
                else:
                    if not self.actors:
                        share = -(-self.options.connections // self.workers)
                        player = self.ray.remote(max_concurrency=share)(_RayPlayer)
                        # the usage of earlier games counts once, toward the first actor's run limits
                        self.actors = [
                            player.remote(self.options, self.works, self.earlier if n == 0 else None)
                            for n in range(self.workers)
                        ]
                        self.busy = [0] * self.workers
                    actor = self.busy.index(min(self.busy))  # the least busy: its threads are free
                    self.busy[actor] += 1
                    ref = self.actors[actor].play.remote(i, job)
                self.running[slot] += 1
                self.pending[ref] = (slot, actor, i, job)

    def _pump(self) -> None:
        while not self.ended.is_set():
            with self.lock:
                refs = list(self.pending)
            if not refs:
                time.sleep(0.05)
                continue
            done, _ = self.ray.wait(refs, num_returns=1, timeout=0.2)
            for ref in done:
                with self.lock:
                    slot, actor, i, job = self.pending.pop(ref)
                    self.running[slot] -= 1
                    if actor is not None:
                        self.busy[actor] -= 1
                jobs = job if slot == "cpu" else [job]
                try:
                    got = self.ray.get(ref)
                    outcomes = got if slot == "cpu" else [got]
                except Exception as exc:  # the task's process died, or Ray itself failed
                    outcomes = [("lost", f"a Ray task failed: {str(exc).splitlines()[0]}")] * len(jobs)
                for job, (kind, payload, *totals) in zip(jobs, outcomes):
                    self.events.put((kind, i, job, payload, totals[0] if totals else None))
                with self.lock:
                    self._fill()

    def halt(self, grace: float) -> None:
        with self.lock:
            stopped = [item for queued in self.waiting.values() for item in queued]
            for queued in self.waiting.values():
                queued.clear()
        for i, job, batch in stopped:
            for one in job if batch is not None else [job]:
                self.events.put(("stopped", i, one, None, None))
        for actor in self.actors:
            actor.halt.remote(grace)

    def close(self) -> int:
        self.ended.set()
        self.pump.join()
        with self.lock:
            running = sum(len(job) if slot == "cpu" else 1 for slot, _, _, job in self.pending.values())
            for ref, (slot, *_) in self.pending.items():
                if slot == "cpu":
                    self.ray.cancel(ref, force=True)
            self.pending.clear()
        self.ray.shutdown()
        return running
