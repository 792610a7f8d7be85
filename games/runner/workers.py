"""Forked worker processes: their thread pools, their end with the parent, and a pool that never waits on a dead worker."""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import threadpoolctl

from games.external import kill_tree
from games.runner.stores import Job, Record


def limit_threads(threads: int) -> None:
    """Size this process's compiled-kernel and BLAS thread pools to its share of the cores, as a worker runs."""
    numba = sys.modules.get("numba")  # jobs that run compiled kernels imported it before the fork
    if numba is not None:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # the worker processes share the cores
    # BLAS (the DP's spoilage pull-back) keeps the thread pool it sized for the whole machine before the fork:
    # every worker running it on every core oversubscribed them (1.2–1.6× slower solves under load)
    threadpoolctl.threadpool_limits(threads)


def worker_init(threads: int, parent: int) -> None:
    # the parent alone answers Ctrl-C / SIGTERM, and then ends the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    die_with(parent)
    limit_threads(threads)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with(parent: int) -> None:
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


def free_large_blocks_to_the_system() -> None:
    """Blocks of 128 KB or more (a compiled contract's outcome tables) go back to the system when freed: glibc
    otherwise raises that threshold the first time such a block is freed, and then keeps them in the pool of
    each game thread that freed them (measured: a 256-game process grew from 832 to 1,283 MB while what it held
    stayed near 610 MB; with the threshold fixed, 829 to 845 MB). Nothing elsewhere than glibc."""
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
    chunk = chunksize or max(1, len(jobs) // (size * 8))
    pool = fork_pool(size)
    try:
        chunks = [pool.submit(_run_chunk, work, jobs[i : i + chunk]) for i in range(0, len(jobs), chunk)]
        for done in as_completed(chunks):
            try:
                records = done.result()
            except BrokenProcessPool:
                raise RuntimeError(worker_lost(pool)) from None
            yield from records
    finally:
        end_pool(pool)


def fork_pool(size: int) -> ProcessPoolExecutor:
    """`size` forked worker processes, each with its share of the cores for its compiled kernels and BLAS."""
    threads = max(1, (os.cpu_count() or 1) // size)
    return ProcessPoolExecutor(
        size, mp_context=multiprocessing.get_context("fork"), initializer=worker_init, initargs=(threads, os.getpid())
    )


DEATH_SECONDS = 2.0
"""How long the pool's news of a dead worker waits for the worker's exit status, which can come after it."""


def worker_lost(pool: ProcessPoolExecutor) -> str:
    """The run's error line when a worker of `pool` died under it: how the worker ended, by signal or status
    (the others are ended by the pool itself, with SIGTERM, once it sees the death)."""
    processes = list(pool._processes.values())
    deadline = time.monotonic() + DEATH_SECONDS
    while not (codes := [p.exitcode for p in processes if p.exitcode is not None]) and time.monotonic() < deadline:
        time.sleep(0.01)  # the pipe tells of the death before the exit status can be read
    code = next((c for c in codes if c != -signal.SIGTERM), codes[0] if codes else None)
    if code is None:
        how = "died"
    elif code == -signal.SIGKILL:
        how = "was killed (SIGKILL: by hand, or by the system when memory ran out)"
    elif code < 0:
        try:
            how = f"was ended by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was ended by signal {-code}"
    else:
        how = f"exited with status {code}"
    return f"a worker process {how} in the middle of its jobs; the finished jobs are kept, and a rerun runs the rest"


WORKER_END_SECONDS = 5.0
"""How long a terminated worker gets to end itself (and its external agents) before it is killed: its SIGTERM
handler runs only between Python steps, not inside a compiled kernel."""


def end_pool(pool: ProcessPoolExecutor) -> None:
    """End the workers at once, not after their current jobs (shutdown alone would wait for them), and the pool.
    A worker ended while it was sending a record leaves half a message in the result pipe, and the pool's
    manager thread would wait for the rest forever, since this process holds the pipe's other write end
    (`shutdown` and Python's exit both join that thread). Once the workers are gone, closing that end turns
    the wait into an end of file, which the pool takes for a broken worker."""
    processes = list(pool._processes.values())
    for process in processes:
        process.terminate()
    for process in still_running(processes, WORKER_END_SECONDS):
        kill_tree(process.pid)  # with the external agents it could not end itself
    still_running(processes, None)
    pool._result_queue._writer.close()
    pool.shutdown(wait=True, cancel_futures=True)


def still_running(processes: list, seconds: float | None) -> list:
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
