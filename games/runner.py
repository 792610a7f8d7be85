"""Experiments as independent jobs: run in local processes (default) or on Ray through one code path, their
results appended to a store that survives interruption.

A job is a frozen value whose fields say everything its result depends on, so it is its own content key:
equal jobs are one job, and a rerun into the same store runs only the jobs it does not hold yet. Results
arrive in completion order; callers that write outputs order them by job, and a run that played jobs rewrites
its store in job order at the end, so two runs with any number of workers, or an interrupted and resumed one,
write the same bytes.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from pathlib import Path
from typing import Generic, TypeVar

import threadpoolctl
from pydantic import BaseModel

from contractlang.files import (FileError, make_folder, open_for_appending, open_sealed_line, read_capped,
                                read_lines_capped, refuse_link, sealed_line, sealed_lines, write_atomically)
from contractlang.progress import Advance as Progress
from games.external import kill_tree

Job = TypeVar("Job", bound=Hashable)
Record = TypeVar("Record", bound=BaseModel)


def limit_threads(threads: int) -> None:
    """Size this process's compiled-kernel and BLAS thread pools to its share of the cores, as a worker runs."""
    numba = sys.modules.get("numba")  # jobs that run compiled kernels imported it before the fork
    if numba is not None:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # the worker processes share the cores
    # BLAS (the DP's spoilage pull-back) keeps the thread pool it sized for the whole machine before the fork:
    # every worker running it on every core oversubscribed them (issue #34: 1.2–1.6× slower solves under load)
    threadpoolctl.threadpool_limits(threads)


def _worker_init(threads: int, parent: int) -> None:
    # the parent alone answers Ctrl-C / SIGTERM, and then ends the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    _die_with(parent)
    limit_threads(threads)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with(parent: int) -> None:
    """A worker whose parent dies, even by SIGKILL (which no handler sees), is sent SIGTERM, and so ends with its
    external agents: the kernel's parent-death signal on Linux, elsewhere a thread watching the parent's pid. A
    parent already gone before this ran ends the worker at once."""
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "prctl") and libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0:
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
        return
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _end_worker(signum, frame) -> None:
    """A worker the parent ends takes the external agents it started with it (they would play on, orphaned)."""
    kill_tree(os.getpid(), include_root=False)
    os._exit(128 + signum)


def run_jobs(work: Callable[[Job], Record], jobs: list[Job], workers: int | None = None,
             ray_address: str | None = None, chunksize: int | None = None) -> Iterator[Record]:
    """Yield `work(job)` for every job as it finishes (order not guaranteed). `workers=1` runs them in this
    process; otherwise they run in forked worker processes, even a single job, so that this process never
    starts the compiled kernels' threads (a fork after that can hang) and can fork again for a later phase.
    `work` must be picklable (a module-level function or a partial of one). A worker takes `chunksize` jobs
    at a time and hands their records back together when the last one ends; None means about 8 chunks per
    worker, which suits many short jobs.

    Closing the iterator (or an interrupt while it waits) terminates the worker processes at once; a worker
    that dies (killed, out of memory) ends the run with a RuntimeError instead of leaving it waiting forever."""
    if ray_address is not None:
        yield from _run_ray(work, jobs, ray_address)
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for job in jobs:
            yield work(job)
        return
    if not jobs:
        return
    size = min(workers, len(jobs))
    threads = max(1, (os.cpu_count() or 1) // size)
    chunk = chunksize or max(1, len(jobs) // (size * 8))
    pool = ProcessPoolExecutor(size, mp_context=multiprocessing.get_context("fork"), initializer=_worker_init,
                               initargs=(threads, os.getpid()))
    try:
        chunks = [pool.submit(_run_chunk, work, jobs[i:i + chunk]) for i in range(0, len(jobs), chunk)]
        for done in as_completed(chunks):
            try:
                records = done.result()
            except BrokenProcessPool:
                raise RuntimeError("a worker process died in the middle of its jobs (killed, or out of memory); "
                                   "the finished jobs are kept, and a rerun runs the rest") from None
            yield from records
    finally:
        _end_pool(pool)


WORKER_END_SECONDS = 5.0
"""How long a terminated worker gets to end itself (and its external agents) before it is killed: its SIGTERM
handler runs only between Python steps, not inside a compiled kernel."""


def _end_pool(pool: ProcessPoolExecutor) -> None:
    """End the workers at once, not after their current jobs (shutdown alone would wait for them), and the pool.
    A worker ended while it was sending a record leaves half a message in the result pipe, and the pool's
    manager thread would wait for the rest forever, since this process holds the pipe's other write end
    (`shutdown` and Python's exit both join that thread). Once the workers are gone, closing that end turns
    the wait into an end of file, which the pool takes for a broken worker."""
    processes = list(pool._processes.values())
    for process in processes:
        process.terminate()
    for process in _still_running(processes, WORKER_END_SECONDS):
        kill_tree(process.pid)  # with the external agents it could not end itself
    _still_running(processes, None)
    pool._result_queue._writer.close()
    pool.shutdown(wait=True, cancel_futures=True)


def _still_running(processes: list, seconds: float | None) -> list:
    """Wait until every process has ended or `seconds` have passed (None: no limit); those still running."""
    running = {p.sentinel: p for p in processes}
    deadline = None if seconds is None else time.monotonic() + seconds
    while running:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        for sentinel in multiprocessing.connection.wait(list(running), left):
            del running[sentinel]
    return list(running.values())


def _run_chunk(work: Callable, jobs: list) -> list:
    return [work(job) for job in jobs]


def _reachable(address: str, seconds: float = 5.0) -> None:
    """Fail at once, with the address named, when no Ray head answers there (Ray itself waits minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RuntimeError(f"--ray takes 'local', 'auto' or a cluster address HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as exc:
        raise RuntimeError(f"cannot reach a Ray cluster at {address}: {exc.strerror or exc}") from None


def _call(work: Callable, job):
    return work(job)


def _run_ray(work: Callable, jobs: list, address: str) -> Iterator:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'contractlang[ray]'") from None
    if address not in ("local", "auto"):
        _reachable(address)
    ray.init(address=None if address == "local" else address, ignore_reinit_error=True,
             include_dashboard=False, log_to_driver=False)
    remote = ray.remote(_call)
    pending = [remote.remote(work, job) for job in jobs]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


class StoreLock:
    """`path` held by this process for as long as it writes there: the file holds the owner's pid, so a second
    run into the same place refuses at once, and a lock left by a run that died (its pid gone) is taken over.
    A lock that is a link, a directory or anything but a small file of ours is refused, never followed or
    removed."""

    def __init__(self, path: Path, what: str):
        self.path = path
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:
                owner = self._owner()
                if owner is not None and owner != os.getpid() and _alive(owner):
                    raise FileError(f"{path.parent}: another run (pid {owner}) is writing {what} there; wait for "
                                    "it to end or choose another --out") from None
                path.unlink(missing_ok=True)  # its owner is gone: a stale lock
                continue
            except OSError as exc:
                raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
            try:
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError as exc:
                path.unlink(missing_ok=True)
                raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
            return
        raise FileError(f"{path}: cannot take the lock; remove the file if no run is writing there")

    def _owner(self) -> int | None:
        """The pid in the lock, None when it holds none (a lock cut short); not a regular file: refused."""
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise FileError(f"cannot use the lock {self.path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "not a file"
            raise FileError(f"{self.path}: the lock is {kind}; remove it if no run is writing there")
        try:
            text = read_capped(self.path, 32).decode("ascii", "replace").strip()
        except FileError:
            return None
        return int(text) if text.isdigit() else None

    def release(self) -> None:
        try:
            mine = self._owner() == os.getpid()
        except FileError:
            return  # replaced by something else while we ran: not ours to remove
        if mine:
            self.path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class JobStore(Generic[Job, Record]):
    """A JSON-lines file of finished records, one complete line each, appended to as jobs finish.

    Every line carries `sealed_line`'s check, chained to the line before, so a changed number, a line repeated,
    swapped or removed from the middle, or a line from another store stops the reader with its line number. Only
    the last line can be cut short by an interrupted run: it is dropped (the file is rewritten without it) so
    that new lines never follow a partial one. A write that fails (a full disk) takes back what it wrote, so the
    file never ends in half a line, and a store this run created and never wrote to is not left behind empty.
    The store, like every output, is never read or written through a link. While open, the store is locked
    (`StoreLock`) against a second run writing into it."""

    def __init__(self, path: Path, record_type: type[Record], job_of: Callable[[Record], Job], what: str):
        self.path = path
        self.records: dict[Job, Record] = {}
        self.dropped_cut_line = False
        self._job_of = job_of
        self._fd: int | None = None
        self._check = ""
        make_folder(path.parent)
        refuse_link(path)
        self._lock = StoreLock(path.with_name(path.name + ".lock"), f"{what} records")
        try:
            self._read(record_type, what)
        except BaseException:
            self._lock.release()
            raise

    def _read(self, record_type: type[Record], what: str) -> None:
        path = self.path
        lines = read_lines_capped(path) if path.exists() else []
        self.records, self._check, self.dropped_cut_line = read_records(path, lines, record_type, self._job_of, what)
        if self.dropped_cut_line:
            write_atomically(path, b"".join(lines[:-1]))

    def missing(self, jobs: Iterable[Job]) -> list[Job]:
        return [j for j in dict.fromkeys(jobs) if j not in self.records]

    def add(self, record: Record) -> None:
        job = self._job_of(record)
        if job in self.records:
            return  # a job is stored once: its first record
        data, check = sealed_line(record.model_dump(mode="json"), self._check)
        created = False
        try:
            if self._fd is None:
                self._fd, created = open_for_appending(self.path)
            before = os.fstat(self._fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError:
                os.ftruncate(self._fd, before)
                if created and before == 0:
                    os.close(self._fd)
                    self._fd = None
                    self.path.unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise FileError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.records[job] = record
        self._check = check

    def put_in_order(self, jobs: Iterable[Job]) -> None:
        """Rewrite the store with the records of `jobs` first, in that order, then any others it holds, as they
        were: once every job has ended, its bytes no longer depend on which worker finished first."""
        order = [*dict.fromkeys(j for j in jobs if j in self.records), *self.records]
        ordered = {j: self.records[j] for j in dict.fromkeys(order)}
        if list(ordered) == list(self.records):
            return
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        data, self._check = sealed_lines(r.model_dump(mode="json") for r in ordered.values())
        write_atomically(self.path, data)
        self.records = ordered

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._lock.release()


def read_records(path: Path, lines: list[bytes], record_type: type[Record], job_of: Callable[[Record], Job],
             what: str) -> tuple[dict[Job, Record], str, bool]:
    """A store's records, the check of its last line and whether that line is cut short (an interrupted write,
    or one still under way: a line without its end that starts as every record does); any other line that is
    not a sealed record of this version, or that repeats a job, stops the reader with its number."""
    records: dict[Job, Record] = {}
    check = ""
    read = partial(_validated, record_type)
    for number, line in enumerate(lines, start=1):
        if number == len(lines) and not line.endswith(b"\n") and line.startswith(b'{"'):
            return records, check, True
        where = f"{path}:{number}"
        record, check = open_sealed_line(line, check, where, f"{what} record", read)
        job = job_of(record)
        if job in records:
            raise FileError(f"{where}: a second record of the same job; the store was edited or joined from two "
                            "runs (move it away, or remove the line)")
        records[job] = record
    return records, check, False


def _validated(record_type: type[Record], data: dict) -> Record:
    return record_type.model_validate_json(json.dumps(data), strict=True)  # JSON's types, not Python's


def stored_records(path: Path, record_type: type[Record], job_of: Callable[[Record], Job],
                   what: str) -> dict[Job, Record]:
    """The records a store holds now, checked but read without its lock or any repair, so a running generation
    can be watched and read: a line still being appended is left out."""
    lines = read_lines_capped(path) if path.exists() else []
    return read_records(path, lines, record_type, job_of, what)[0]


def seal_store(path: Path) -> int:
    """Give every line of a store written before stores carried checks its check (lines already sealed are
    checked and kept); how many lines it holds. The records are the user's to vouch for: nothing can tell an
    unsealed store from one whose checks were removed to hide an edit."""
    refuse_link(path)
    lock = StoreLock(path.with_name(path.name + ".lock"), "records")
    try:
        records = []
        check = ""
        for number, line in enumerate(read_lines_capped(path), start=1):
            data, check = open_sealed_line(line, check, f"{path}:{number}", "record", dict, unsealed=True)
            records.append(data)
        data, _ = sealed_lines(records)
        write_atomically(path, data)
        return len(records)
    finally:
        lock.release()


def shared_store(source: Path | None, out: Path, name: str) -> Path | None:
    """The store `jobs/NAME` of the set `source` a run reads, to reuse read-only while the run writes into `out`;
    None when there is no such set or the run writes into it."""
    if source is None or source.resolve() == out.resolve():
        return None
    return source / "jobs" / name


def run_phase(name: str, path: Path, record_type: type[Record], work: Callable[[Job], Record], jobs: list[Job],
              workers: int | None = None, ray_address: str | None = None,
              progress: Progress | None = None, shared: Path | None = None) -> tuple[dict[Job, Record], int]:
    """Every job's record — read from the store at `path` or from the read-only store `shared` (the shipped
    set's, when a run on it writes elsewhere), or run now and appended to `path` — and how many ran now.
    Records carry their job as `.job`."""
    reused = stored_records(shared, record_type, lambda r: r.job, name) if shared is not None else {}
    store: JobStore = JobStore(path, record_type, lambda r: r.job, name)
    todo = [job for job in store.missing(jobs) if job not in reused]
    done = len(jobs) - len(todo)
    try:
        if progress is not None:
            progress(name, done, len(jobs))
        # one job at a time: these jobs take seconds to minutes, and each record should reach the store (and
        # the progress line) when its job ends, not wait in a worker for its chunk and be lost with it
        results = run_jobs(work, todo, workers, ray_address, chunksize=1)
        try:
            for record in results:
                store.add(record)
                done += 1
                if progress is not None:
                    progress(name, done, len(jobs))
        finally:
            results.close()
        if todo:  # a run that played nothing leaves the store as it found it
            store.put_in_order(jobs)
    finally:
        store.close()
    return {job: reused[job] for job in jobs if job in reused} | store.records, len(todo)
