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
import pickle
import queue
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import threadpoolctl
from pydantic import BaseModel, Field

from contractlang.errors import RunEnded
from contractlang.files import (
    FileError,
    make_folder,
    open_for_appending,
    open_sealed_line,
    read_capped,
    read_lines_capped,
    refuse_link,
    sealed_line,
    sealed_lines,
    write_atomically,
)
from contractlang.llm import GameLimits
from contractlang.progress import Advance as Progress
from contractlang.vocab import Frozen
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


M_MMAP_THRESHOLD = -3  # <malloc.h>


def _free_large_blocks_to_the_system() -> None:
    """Blocks of 128 KB or more (a compiled contract's outcome tables) go back to the system when freed: glibc
    otherwise raises that threshold the first time such a block is freed, and then keeps them in the pool of
    each game thread that freed them (issue #47 measured a 256-game process growing from 832 to 1,283 MB while
    what it held stayed near 610 MB; with the threshold fixed, 829 to 845 MB). Nothing elsewhere than glibc."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError):
        pass


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _end_worker(signum, frame) -> None:
    """A worker the parent ends takes the external agents it started with it (they would play on, orphaned)."""
    kill_tree(os.getpid(), include_root=False)
    os._exit(128 + signum)


def run_jobs(
    work: Callable[[Job], Record], jobs: list[Job], workers: int | None = None, chunksize: int | None = None
) -> Iterator[Record]:
    """Yield `work(job)` for every job as it finishes (order not guaranteed). `workers=1` runs them in this
    process; otherwise they run in forked worker processes, even a single job, so that this process never
    starts the compiled kernels' threads (a fork after that can hang) and can fork again for a later phase.
    `work` must be picklable (a module-level function or a partial of one). A worker takes `chunksize` jobs
    at a time and hands their records back together when the last one ends; None means about 8 chunks per
    worker, which suits many short jobs.

    Closing the iterator (or an interrupt while it waits) terminates the worker processes at once; a worker
    that dies (killed, out of memory) ends the run with a RuntimeError instead of leaving it waiting forever."""
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
    pool = ProcessPoolExecutor(
        size, mp_context=multiprocessing.get_context("fork"), initializer=_worker_init, initargs=(threads, os.getpid())
    )
    try:
        chunks = [pool.submit(_run_chunk, work, jobs[i : i + chunk]) for i in range(0, len(jobs), chunk)]
        for done in as_completed(chunks):
            try:
                records = done.result()
            except BrokenProcessPool:
                raise RuntimeError(
                    "a worker process died in the middle of its jobs (killed, or out of memory); "
                    "the finished jobs are kept, and a rerun runs the rest"
                ) from None
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
                    raise FileError(
                        f"{path.parent}: another run (pid {owner}) is writing {what} there; wait for "
                        "it to end or choose another --out"
                    ) from None
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


class Records(MutableMapping[Job, Record]):
    """Finished records by job, each kept as its JSON text and read again (as a store's line is) when asked for:
    a run holds every record it stored, and a record's Python objects take several times its JSON (an LLM game's
    45 KB against 10 KB, issue #47)."""

    def __init__(self, record_type: type[Record], records: Iterable[tuple[Job, Record]] = ()):
        self._type = record_type
        self._text: dict[Job, str] = {}
        for job, record in records:
            self[job] = record

    def __getitem__(self, job: Job) -> Record:
        return self._type.model_validate_json(self._text[job], strict=True)

    def __setitem__(self, job: Job, record: Record) -> None:
        self.put_data(job, record.model_dump(mode="json"))

    def put_data(self, job: Job, data: dict) -> None:
        """Keep the record whose JSON data (`model_dump(mode="json")`) is `data`."""
        self._text[job] = json.dumps(data)

    def __delitem__(self, job: Job) -> None:
        del self._text[job]

    def __iter__(self) -> Iterator[Job]:
        return iter(self._text)

    def __len__(self) -> int:
        return len(self._text)

    def __contains__(self, job: object) -> bool:
        return job in self._text

    def reordered(self, jobs: Iterable[Job]) -> Records[Job, Record]:
        """The records of `jobs`, in that order."""
        records = Records(self._type)
        records._text = {j: self._text[j] for j in jobs}
        return records

    def data(self) -> Iterator[dict]:
        """Each record as JSON data, in order."""
        return (json.loads(text) for text in self._text.values())


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
        self.records: Records[Job, Record] = Records(record_type)
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
        records, self._check, self.dropped_cut_line = read_records(path, lines, record_type, self._job_of, what)
        self.records = Records(record_type, records.items())
        if self.dropped_cut_line:
            write_atomically(path, b"".join(lines[:-1]))

    def missing(self, jobs: Iterable[Job]) -> list[Job]:
        return [j for j in dict.fromkeys(jobs) if j not in self.records]

    def add(self, record: Record, replace: bool = False) -> None:
        """Append `record`; a job is stored once, its first record, unless `replace` (the store is rewritten
        with the new one in its place)."""
        job = self._job_of(record)
        if job in self.records:
            if replace and record != self.records[job]:
                self.records[job] = record
                self._rewrite()
            return
        dumped = record.model_dump(mode="json")
        data, check = sealed_line(dumped, self._check)
        created = False
        try:
            if self._fd is None:
                self._fd, created = open_for_appending(self.path)
            before = os.fstat(self._fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                os.ftruncate(self._fd, before)
                if created and before == 0:
                    os.close(self._fd)
                    self._fd = None
                    self.path.unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise FileError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.records.put_data(job, dumped)
        self._check = check

    def put_in_order(self, jobs: Iterable[Job], drop: Iterable[Job] = ()) -> None:
        """Rewrite the store with the records of `jobs` first, in that order, then any others it holds, as they
        were, leaving out those of `drop`: once every job has ended, its bytes no longer depend on which worker
        finished first."""
        gone = set(drop)
        order = [*dict.fromkeys(j for j in jobs if j in self.records), *self.records]
        ordered = [j for j in dict.fromkeys(order) if j not in gone]
        if ordered == list(self.records):
            return
        self.records = self.records.reordered(ordered)
        self._rewrite()

    def _rewrite(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if not self.records:
            self.path.unlink(missing_ok=True)  # no empty store is left behind
            self._check = ""
            return
        data, self._check = sealed_lines(self.records.data())
        write_atomically(self.path, data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._lock.release()


def read_records(
    path: Path, lines: list[bytes], record_type: type[Record], job_of: Callable[[Record], Job], what: str
) -> tuple[dict[Job, Record], str, bool]:
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
            raise FileError(
                f"{where}: a second record of the same job; the store was edited or joined from two "
                "runs (move it away, or remove the line)"
            )
        records[job] = record
    return records, check, False


def _validated(record_type: type[Record], data: dict) -> Record:
    return record_type.model_validate_json(json.dumps(data), strict=True)  # JSON's types, not Python's


def stored_records(
    path: Path, record_type: type[Record], job_of: Callable[[Record], Job], what: str
) -> dict[Job, Record]:
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


# --- runs of games: CPU work in worker processes, network waits in threads around one client ------------------

Status = Literal["errored", "limited"]


class Unfinished(Frozen, Generic[Job]):
    """A game that ended without a result: `errored` when its model calls still failed after the client's
    retries, `limited` when it reached a per-game limit (the reason names which). Kept in a store of its own
    beside the finished games (`unfinished_path`), so tables count the finished ones only and say how many
    did not finish, and a rerun retries the errored ones."""

    job: Job
    status: Status
    reason: str
    # a limited game's per-game limits: a run under others plays it again (not written for an errored game)
    limits: GameLimits | None = Field(None, exclude_if=lambda limits: limits is None)


def game_limits(llm: Any) -> GameLimits:
    """The per-game limits of a run's LLM settings (none without LLM settings)."""
    return getattr(llm, "game_limits", None) or GameLimits()


class Left(NamedTuple):
    """A phase's games left unfinished before, by what a run does with them: `errored` and `relimited` (stopped
    at per-game limits other than this run's) are played again, `limited` (stopped at this run's) are kept."""

    errored: list
    relimited: list
    limited: list

    @classmethod
    def of(cls, jobs: Iterable, left: dict, limits: GameLimits) -> Left:
        errored, relimited, limited = [], [], []
        for job in jobs:
            if job in left:
                u = left[job]
                (errored if u.status == "errored" else limited if u.limits == limits else relimited).append(job)
        return cls(errored, relimited, limited)


def limits_path(path: Path) -> Path:
    """`jobs/performance.jsonl` → `jobs/performance.limits.json`: the in-flight limit's history of its games."""
    return path.with_name(f"{path.stem}.limits.json")


def unfinished_path(path: Path) -> Path:
    """`jobs/performance.jsonl` → `jobs/performance.unfinished.jsonl`."""
    return path.with_name(f"{path.stem}.unfinished{path.suffix}")


class RunOptions(Frozen):
    """How a run plays its jobs: CPU work in `workers` processes (1: in this one), the games that wait on an LLM
    `llm.max_connections` at once in threads of one process sharing one client; or on Ray."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    workers: int | None = None  # None: every core
    ray: str | None = None
    llm: Any = None  # LlmSettings of the LLM players and judges (connections, run and game limits); None: no LLM
    fail_on_error: float | None = None  # errored games the run allows: a count (0, 1, 2, …) or a share (0 < s < 1)
    grace_seconds: float = 5.0  # how long replies in flight at an interrupt are waited for, to be recorded

    @property
    def connections(self) -> int:
        return max(1, getattr(self.llm, "max_connections", 10))


class Phase(NamedTuple):
    """One kind of job of a run. `network(job)` says which jobs wait on an LLM (played `work(job, client=…)` in
    threads); the others are CPU work (`work(job)` in the worker processes). A job whose `needs(job)` (a job of
    the phase before) is still to run starts once that job's record is stored: games play while the tables of
    later contracts are being solved."""

    name: str
    path: Path
    record_type: type
    work: Callable
    jobs: list
    shared: Path | None = None
    network: Callable[[Any], bool] | None = None
    needs: Callable[[Any], Any] | None = None
    job_of: Callable[[Any], Any] = attrgetter("job")
    calls: Callable[[Any], Any] | None = None  # a record's LLM calls (its ledger), which count toward run limits
    what: str | None = None  # what a record is called in a store's errors (default: `name`)

    @property
    def records_of(self) -> str:
        return self.what or self.name


class Played(NamedTuple):
    """A phase's finished records by job (stored before, reused or played now), how many were played now, and
    the games that did not finish (errored or limited) by job."""

    records: dict
    played: int
    unfinished: dict


class RunPlan(Frozen):
    """What a phase has to do: its jobs, those already finished (stored or reused), the errored ones a run
    retries, the limited ones it plays again under other per-game limits, and those it keeps."""

    jobs: int
    stored: int
    errored: int
    relimited: int
    limited: int


def plan(phase: Phase, limits: GameLimits = GameLimits()) -> tuple[RunPlan, list]:
    """`phase`'s `RunPlan` under the per-game `limits` and the jobs a run would play, read from its stores without
    taking their locks."""
    finished = _reused(phase) | stored_records(phase.path, phase.record_type, phase.job_of, phase.records_of)
    every = list(dict.fromkeys(phase.jobs))
    jobs = [j for j in every if j not in finished]
    left = Left.of(jobs, _unfinished_records(phase), limits)
    kept = set(left.limited)
    return (
        RunPlan(
            jobs=len(every),
            stored=len(every) - len(jobs),
            errored=len(left.errored),
            relimited=len(left.relimited),
            limited=len(left.limited),
        ),
        [j for j in jobs if j not in kept],
    )


class RunEstimate(Frozen):
    """What a run would do (`--estimate`): its games (stored, errored to retry, limited under other per-game limits
    to play again, limited and kept, to play now), the LLM calls those to play are expected to make, and their
    tokens and cost, with where the per-call figures come from."""

    games: int
    stored: int
    errored: int
    relimited: int  # stopped at per-game limits other than this run's: played again
    limited: int
    to_play: int
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when a model's price is unknown
    source: str  # recorded averages or the prices table, per model

    def text(self) -> str:
        cost = "cost unknown (no price for the model)" if self.cost_usd is None else f"about ${self.cost_usd:,.2f}"
        return (
            f"{self.games} games: {self.stored} stored, {self.errored} errored to retry, "
            + (f"{self.relimited} stopped at other per-game limits to play again, " if self.relimited else "")
            + f"{self.limited} stopped at a per-game limit (kept); {self.to_play} to play now, about "
            f"{self.calls:,} LLM calls, {self.input_tokens:,} input and {self.output_tokens:,} output tokens, {cost} ({self.source})"
        )


def estimate(phase: Phase, calls_of: Callable[[Any], list], llm: Any) -> RunEstimate:
    """`phase`'s `RunEstimate`: `calls_of(job)` lists (model, calls) of the game's LLM players and judges (the
    decisions a game of its length takes); the tokens and cost per call come from `contractlang.llm.
    estimate_cost` (the recordings' averages, else its defaults priced by the prices table)."""
    from contractlang.llm import Recordings, estimate_cost

    counts, todo = plan(phase, game_limits(llm))
    calls: dict = {}
    for job in todo:
        for model, n in calls_of(job):
            calls[model] = calls.get(model, 0) + n
    path = getattr(llm, "recordings", None)
    recordings = Recordings(path) if path is not None and Path(path).exists() else None
    costs = {model: estimate_cost(model, n, recordings) for model, n in calls.items()}
    if recordings is not None:
        recordings.close()
    prices = [c.cost_usd for c in costs.values()]
    return RunEstimate(
        games=counts.jobs,
        stored=counts.stored,
        errored=counts.errored,
        relimited=counts.relimited,
        limited=counts.limited,
        to_play=len(todo),
        calls=sum(calls.values()),
        input_tokens=sum(c.input_tokens for c in costs.values()),
        output_tokens=sum(c.output_tokens for c in costs.values()),
        cost_usd=None if None in prices else round(sum(prices), 6),
        source="; ".join(f"{m.label}: {c.source}" for m, c in costs.items()) or "no LLM calls",
    )


def _reused(phase: Phase) -> dict:
    return stored_records(phase.shared, phase.record_type, phase.job_of, phase.records_of) if phase.shared else {}


def _unfinished_type(phase: Phase) -> type:
    return Unfinished[type(phase.jobs[0])] if phase.jobs else Unfinished[Any]


def _unfinished_records(phase: Phase) -> dict:
    path = unfinished_path(phase.path)
    return (
        stored_records(path, _unfinished_type(phase), attrgetter("job"), f"unfinished {phase.records_of}")
        if phase.network is not None
        else {}
    )


def run_phase(
    name: str,
    path: Path,
    record_type: type[Record],
    work: Callable[[Job], Record],
    jobs: list[Job],
    workers: int | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
    shared: Path | None = None,
) -> tuple[dict[Job, Record], int]:
    """Every job's record — read from the store at `path` or from the read-only store `shared` (the shipped
    set's, when a run on it writes elsewhere), or run now in worker processes and appended to `path` — and how
    many ran now (`run_games` with one CPU phase). Records carry their job as `.job`."""
    [played] = run_games(
        [Phase(name, path, record_type, work, jobs, shared)], RunOptions(workers=workers, ray=ray_address), progress
    )
    return played.records, played.played


def run_games(
    phases: list[Phase],
    options: RunOptions = RunOptions(),
    progress: Progress | None = None,
    notice: Callable[[str], None] | None = None,
) -> list[Played]:
    """Play every job of `phases` not finished yet, storing each record as its job ends, and return each phase's
    `Played`. CPU jobs run in `options.workers` processes; jobs that wait on an LLM run `max_connections` at once
    in threads of one process around one client (a forked process when there are workers, so that this one
    never starts the compiled kernels' threads; this process itself with one worker). A game whose calls fail
    is stored as errored and the run goes on (`fail_on_error` ends it); a game that reaches a per-game limit as
    limited; a run limit or an interrupt stops starting games, lets the replies in flight arrive (for up to
    `grace_seconds`), stores what finished and raises `RunEnded`. Stores are rewritten in job order at the end,
    so any number of workers or connections, or an interrupted and resumed run, writes the same bytes."""
    with ExitStack() as stack:
        run = stack.enter_context(_Run(phases, options, progress, notice))
        return run.play()


class _Run:
    """The state of one `run_games` call: the stores, what is left to do, what is in flight."""

    def __init__(
        self, phases: list[Phase], options: RunOptions, progress: Progress | None, notice: Callable[[str], None] | None
    ):
        self.phases, self.options, self.progress = phases, options, progress
        self.limits = game_limits(options.llm)
        self.notice = notice or (lambda text: None)
        self.stores: list[JobStore] = []
        self.unfinished: list[JobStore | None] = []
        self.reused: list[dict] = []
        self.events: queue.Queue = queue.Queue()
        self.in_flight = 0
        self.played = [0] * len(phases)
        self.retried: list[set] = [set() for _ in phases]
        self.errored_now = 0
        self.stopping: RunEnded | None = None
        self.last_error = ""
        self.totals = None
        self.cpu = self.host = None

    def __enter__(self) -> _Run:
        try:
            for phase in self.phases:
                self.reused.append(_reused(phase))
                self.stores.append(JobStore(phase.path, phase.record_type, phase.job_of, phase.records_of))
                self.unfinished.append(
                    JobStore(
                        unfinished_path(phase.path),
                        _unfinished_type(phase),
                        attrgetter("job"),
                        f"unfinished {phase.records_of}",
                    )
                    if phase.network is not None
                    else None
                )
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for part in {id(p): p for p in (self.host, self.cpu) if p is not None}.values():
            part.close()
        for store in [*self.stores, *(u for u in self.unfinished if u is not None)]:
            store.close()

    def finished(self, i: int, job) -> bool:
        return job in self.stores[i].records or job in self.reused[i]

    def play(self) -> list[Played]:
        todo = []
        for i, phase in enumerate(self.phases):
            if self.stores[i].dropped_cut_line:
                self.notice(f"{self.stores[i].path}: dropped its last line, cut short by an interrupted run")
            jobs = [j for j in dict.fromkeys(phase.jobs) if not self.finished(i, j)]
            left = Left.of(jobs, self.unfinished[i].records if self.unfinished[i] is not None else {}, self.limits)
            if left.errored:
                self.notice(f"retrying {len(left.errored)} errored {phase.name}")
            if left.relimited:
                self.notice(
                    f"playing again {len(left.relimited)} {phase.name} stopped before at per-game limits other "
                    "than this run's"
                )
            if left.limited:
                self.notice(f"{len(left.limited)} {phase.name} stopped at this run's per-game limits before are kept")
            limited = set(left.limited)
            todo.append([j for j in jobs if j not in limited])
        self.to_play = [len(t) for t in todo]
        for i in range(len(self.phases)):
            self._advance(i)
        self._start(todo)
        waiting: dict[tuple[int, Any], list] = {}
        try:
            for i, jobs in enumerate(todo):
                before = set(todo[i - 1]) if i else set()
                for job in jobs:
                    need = self.phases[i].needs(job) if self.phases[i].needs is not None else None
                    if need is not None and need in before:
                        waiting.setdefault((i - 1, need), []).append((i, job))
                    else:
                        self._submit(i, job)
            while self.in_flight:
                self._handle(self._next(), waiting)
        except KeyboardInterrupt:
            self._wind_down(waiting)
            raise RunEnded(f"interrupted; {self._stored_text()}; rerun the same command to resume", 130) from None
        if self.stopping is not None:
            self._wind_down(waiting)
            raise self.stopping
        out = []
        for i, phase in enumerate(self.phases):
            self._put_in_order(i)
            left = self.unfinished[i].records if self.unfinished[i] is not None else {}
            out.append(
                Played(
                    records={j: self.reused[i][j] for j in phase.jobs if j in self.reused[i]}
                    | dict(self.stores[i].records),
                    played=self.played[i],
                    unfinished={j: left[j] for j in phase.jobs if j in left},
                )
            )
        return out

    def _start(self, todo: list[list]) -> None:
        network = sum(1 for i, jobs in enumerate(todo) for j in jobs if self._networked(i, j))
        cpu = sum(len(jobs) for jobs in todo) - network
        workers = self.options.workers or os.cpu_count() or 1
        earlier = self._earlier_usage()
        if self.options.ray is not None:
            if network or cpu:
                self.cpu = self.host = _RayRun(self.options, self.events, self.works, workers, earlier)
            return
        if network:  # before the worker processes: it forks from a process that has run nothing compiled
            make = _Threads if workers == 1 else _GameProcess
            self.host = make(self.options, self.events, self.works, earlier)
        if cpu:
            self.cpu = _Processes(min(workers, cpu), self.events)

    @property
    def works(self) -> list[Callable]:
        return [phase.work for phase in self.phases]

    def _earlier_usage(self):
        """What the LLM games this run finished before spent (they count toward its limits), or None."""
        if self.options.llm is None:
            return None
        from contractlang.llm import LlmUsage

        calls = [
            c
            for i, phase in enumerate(self.phases)
            if phase.calls is not None
            for j in dict.fromkeys(phase.jobs)
            if self.finished(i, j)
            for c in phase.calls(self.stores[i].records.get(j) or self.reused[i][j])
        ]
        return LlmUsage.of(calls)

    def _networked(self, i: int, job) -> bool:
        network = self.phases[i].network
        return network is not None and bool(network(job))

    def _submit(self, i: int, job) -> None:
        self.in_flight += 1
        if self._networked(i, job):
            self.host.play(i, job)
        else:
            self.cpu.run(i, job, self.phases[i].work)

    def _next(self):
        while True:
            try:
                return self.events.get(timeout=0.5)  # a timeout, so an interrupt is seen at once
            except queue.Empty:
                continue

    def _handle(self, event, waiting: dict) -> None:
        kind, i, job, payload, totals = event
        self.in_flight -= 1
        if totals is not None:
            self.totals = totals
        if kind == "done":
            self.stores[i].add(payload)
            self.played[i] += 1
            if self.unfinished[i] is not None and job in self.unfinished[i].records:
                self.retried[i].add(job)
            for later in waiting.pop((i, job), []):
                if self.stopping is None:
                    self._submit(*later)
        elif kind in ("errored", "limited"):
            limits = self.limits if kind == "limited" else None
            unfinished = _unfinished_type(self.phases[i])(job=job, status=kind, reason=payload, limits=limits)
            self.unfinished[i].add(unfinished, replace=True)
            if kind == "errored":
                self.errored_now += 1
                self.last_error = payload
                self._check_errors()
        elif kind == "run-limit":
            self._stop(RunEnded(f"{payload} ({self._stored_text()})", 3))  # it says how to go on
        elif kind == "failed":
            raise payload
        elif kind == "lost":
            raise RuntimeError(payload)
        self._advance(i)

    def _check_errors(self) -> None:
        limit = self.options.fail_on_error
        if limit is None or self.stopping is not None:
            return
        games = sum(n for n, phase in zip(self.to_play, self.phases) if phase.network is not None)
        count = limit == 0 or limit >= 1
        allowed = limit if count else limit * games
        if self.errored_now > allowed:
            what = f"{limit:g}" if count else f"{limit:.0%} of the {games} games to play"
            self._stop(
                RunEnded(
                    f"{self.errored_now} games errored, more than --fail-on-error {what} allows (the "
                    f"last: {self.last_error}); {self._stored_text()}; rerun the same command to retry "
                    "the errored games",
                    1,
                )
            )

    def _stop(self, ended: RunEnded) -> None:
        if self.stopping is None:
            self.stopping = ended
            if self.host is not None:
                self.host.halt(self.options.grace_seconds)
            if self.cpu is not None and self.cpu is not self.host:
                self.cpu.halt(self.options.grace_seconds)

    def _wind_down(self, waiting: dict) -> None:
        """Stop starting jobs; let the games in flight end (the client lets their replies arrive for up to the
        grace period, then fails their next calls), storing those that finish; CPU jobs are ended at once."""
        if self.host is not None:
            self.host.halt(self.options.grace_seconds)
        if self.cpu is not None and self.cpu is not self.host:
            self.in_flight -= self.cpu.close()
            self.cpu = None
        deadline = time.monotonic() + self.options.grace_seconds + WORKER_END_SECONDS
        try:
            while self.in_flight > 0 and time.monotonic() < deadline:
                try:
                    event = self.events.get(timeout=0.2)
                except queue.Empty:
                    continue
                if event[0] in ("failed", "lost", "run-limit"):
                    self.in_flight -= 1
                    continue
                self._handle(event, {})
        except KeyboardInterrupt:
            pass  # a second interrupt: stop waiting
        for i in range(len(self.phases)):
            self._put_in_order(i)

    def _put_in_order(self, i: int) -> None:
        if self.phases[i].network is not None and self.totals is not None and self.totals.history:
            # the adaptive limit's changes, lowered on 429/529 and raised on success, for a person or a benchmark
            history = {
                model: [change.model_dump() for change in changes] for model, changes in self.totals.history.items()
            }
            write_atomically(limits_path(self.phases[i].path), json.dumps({"limit_history": history}, indent=1) + "\n")
        if self.played[i] or self.retried[i]:
            self.stores[i].put_in_order(self.phases[i].jobs)
        unfinished = self.unfinished[i]
        if unfinished is not None and unfinished.records:
            unfinished.put_in_order(self.phases[i].jobs, drop=[*self.stores[i].records, *self.reused[i]])

    def _stored_text(self) -> str:
        """What the run stored, in the terms of its last phase (the games; those before prepare them)."""
        name, store = self.phases[-1].name, self.stores[-1]
        return f"{self.played[-1]} {name} played now, {len(store.records)} stored in {store.path}"

    def _advance(self, i: int) -> None:
        if self.progress is None:
            return
        left = self.unfinished[i].records if self.unfinished[i] is not None else {}
        jobs = self.phases[i].jobs
        done = sum(self.finished(i, j) or j in left for j in jobs)
        note = spend_note(self.totals) if i == len(self.phases) - 1 else ""
        if note:
            self.progress(self.phases[i].name, done, len(jobs), note)
        else:
            self.progress(self.phases[i].name, done, len(jobs))


def spend_note(totals) -> str:
    """The LLM part of a progress line: spend, tokens and requests in flight against the current limit."""
    if totals is None:
        return ""
    limits = ", ".join(str(limit) for limit in totals.limits.values()) or str(totals.max_connections)
    return (
        f"${totals.cost_usd:,.2f}"
        + (f" (+{totals.unpriced} calls unpriced)" if totals.unpriced else "")
        + f", {totals.tokens:,} tokens, {totals.in_flight} in flight (limit {limits})"
    )


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
    from contractlang.llm import CallFailed, GameLimitReached, RunLimitReached, RunStopped

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


def _sendable(kind: str, payload):
    """An exception that cannot cross the pipe becomes a RuntimeError with its message."""
    if kind == "failed":
        try:
            pickle.dumps(payload)
        except Exception:
            return RuntimeError(f"{type(payload).__name__}: {payload}")
    return payload


class _Processes:
    """The CPU jobs: `workers` forked worker processes (one: a thread of this process), one job at a time each,
    every result an event."""

    def __init__(self, workers: int, events: queue.Queue):
        self.events = events
        self.futures: set = set()
        if workers == 1:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="job")
        else:
            threads = max(1, (os.cpu_count() or 1) // workers)
            self.pool = ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_worker_init,
                initargs=(threads, os.getpid()),
            )

    def run(self, i: int, job, work: Callable) -> None:
        future = self.pool.submit(_attempt, work, job)
        self.futures.add(future)
        future.add_done_callback(partial(self._done, i, job))

    def _done(self, i: int, job, future) -> None:
        self.futures.discard(future)
        if future.cancelled():
            return
        try:
            kind, payload = future.result()
        except BrokenProcessPool:
            kind, payload = (
                "lost",
                (
                    "a worker process died in the middle of its jobs (killed, or out of memory); "
                    "the finished jobs are kept, and a rerun runs the rest"
                ),
            )
        self.events.put((kind, i, job, payload, None))

    def halt(self, grace: float) -> None:
        for future in list(self.futures):
            if future.cancel():
                self.futures.discard(future)
                self.events.put(("stopped", None, None, None, None))

    def close(self) -> int:
        """End the jobs at once; how many were still running."""
        running = len(self.futures)
        if isinstance(self.pool, ProcessPoolExecutor):
            _end_pool(self.pool)
        else:
            self.pool.shutdown(wait=False, cancel_futures=True)
        return running


def process_client(options: RunOptions, earlier: Any = None):
    """The one LLM client of this process's games (None without LLM settings), told what the games this run
    finished before spent (`earlier`, an LlmUsage), so the run's limits count them."""
    if options.llm is None:
        return None
    from contractlang.llm import ApiKeys, LlmClient

    client = LlmClient(options.llm, ApiKeys.from_environment())
    if earlier is not None and earlier.calls:
        client.count_earlier(earlier)
    return client


class _Threads:
    """The games that wait on an LLM: `connections` at once in threads of this process, sharing one client (one
    pooled HTTP client per provider). Every game submitted gives one event, a stopped one included."""

    def __init__(self, options: RunOptions, events, works: list[Callable], earlier: Any = None):
        self.events, self.works = events, works
        _free_large_blocks_to_the_system()
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
    """The game process: plays what the parent sends it in `_Threads`, sending back every game's event."""
    _worker_init(1, parent)
    threads = _Threads(options, _Sender(connection), works, earlier)
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


class _GameProcess:
    """`_Threads` in one forked process, so this one starts no compiled-kernel threads before forking workers
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
        if _still_running([self.process], WORKER_END_SECONDS):
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


class _RayRun:
    """The jobs on Ray: CPU jobs as tasks, at most `workers` at once; LLM games on `workers` threaded actors,
    `max_connections` at once over them all. Ray is shut down at the end, an interrupt included, so a local
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
        self.task = ray.remote(_attempt)
        self.actors: list = []
        self.waiting: dict[str, list] = {"cpu": [], "game": []}
        self.running: dict[str, int] = {"cpu": 0, "game": 0}
        self.pending: dict = {}  # object ref → (kind of slot, phase, job)
        self.lock = threading.Lock()
        self.ended = threading.Event()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def run(self, i: int, job, work: Callable) -> None:
        with self.lock:
            self.waiting["cpu"].append((i, job))
            self._fill()

    def play(self, i: int, job) -> None:
        with self.lock:
            self.waiting["game"].append((i, job))
            self._fill()

    def _fill(self) -> None:
        limits = {"cpu": self.workers, "game": self.options.connections}
        for slot, queued in self.waiting.items():
            while queued and self.running[slot] < limits[slot]:
                i, job = queued.pop(0)
                actor = None
                if slot == "cpu":
                    ref = self.task.remote(self.works[i], job)
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
                try:
                    kind, payload, *totals = self.ray.get(ref)
                except Exception as exc:  # the task's process died, or Ray itself failed
                    kind, payload, totals = "lost", f"a Ray task failed: {str(exc).splitlines()[0]}", []
                self.events.put((kind, i, job, payload, totals[0] if totals else None))
                with self.lock:
                    self._fill()

    def halt(self, grace: float) -> None:
        with self.lock:
            stopped = [item for queued in self.waiting.values() for item in queued]
            for queued in self.waiting.values():
                queued.clear()
        for i, job in stopped:
            self.events.put(("stopped", i, job, None, None))
        for actor in self.actors:
            actor.halt.remote(grace)

    def close(self) -> int:
        self.ended.set()
        self.pump.join()
        with self.lock:
            running = len(self.pending)
            for ref, (slot, *_) in self.pending.items():
                if slot == "cpu":
                    self.ray.cancel(ref, force=True)
            self.pending.clear()
        self.ray.shutdown()
        return running
