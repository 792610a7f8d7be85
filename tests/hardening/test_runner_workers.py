"""The runner's worker rules: a run with workers forks even for a single job, so the parent never starts the
compiled kernels' threads; a worker that dies is named by how it ended; and every store of a run ends in job
order, whatever order the workers finished in before an interruption."""

from __future__ import annotations

import faulthandler
import os
import signal
from pathlib import Path

import pytest

from contractlang.vocab import Frozen
from games.runner import JobStore, Phase, RunOptions, run_games, stored_records


class Job(Frozen):
    n: int


class Done(Frozen):
    job: Job
    pid: int


def in_which_process(job: Job) -> Done:
    return Done(job=job, pid=os.getpid())


def aborting(job: Job) -> Done:
    faulthandler.disable()  # pytest's dump of every thread would only fill the log
    os.kill(os.getpid(), signal.SIGABRT)  # what libgomp does to a process that forked after starting its threads
    raise AssertionError("not reached")


def phase(path: Path, jobs: list[Job], work=in_which_process) -> Phase:
    return Phase("jobs", path, Done, work, jobs)


@pytest.mark.parametrize("workers", [2, None])
def test_a_run_with_workers_forks_even_for_one_job(tmp_path, workers):
    [played] = run_games([phase(tmp_path / "one.jsonl", [Job(n=1)])], RunOptions(workers=workers))
    assert played.played == 1 and played.records[Job(n=1)].pid != os.getpid()


def test_one_worker_runs_in_this_process(tmp_path):
    [played] = run_games([phase(tmp_path / "one.jsonl", [Job(n=1)])], RunOptions(workers=1))
    assert played.records[Job(n=1)].pid == os.getpid()


def test_a_worker_that_aborts_is_named_by_its_signal(tmp_path):
    with pytest.raises(RuntimeError) as ended:
        run_games([phase(tmp_path / "abort.jsonl", [Job(n=1)], aborting)], RunOptions(workers=2))
    assert "SIGABRT" in str(ended.value) and "memory" not in str(ended.value)


def stored_order(path: Path, record_type: type = Done) -> list[int]:
    return [job.n for job in stored_records(path, record_type, lambda r: r.job, "jobs")]


def test_a_rerun_puts_a_store_left_in_finishing_order_into_job_order(tmp_path):
    """The records of a run killed after its jobs finished stand in the workers' finishing order; the rerun plays
    nothing and still leaves the store in job order."""
    path = tmp_path / "jobs.jsonl"
    jobs = [Job(n=n) for n in range(5)]
    store = JobStore(path, Done, lambda r: r.job, "jobs")
    for n in (3, 0, 4, 1, 2):
        store.add(Done(job=Job(n=n), pid=0))
    store.close()
    [played] = run_games([phase(path, jobs)], RunOptions(workers=2))
    assert played.played == 0 and stored_order(path) == [0, 1, 2, 3, 4]


def test_a_slice_orders_its_own_records_in_their_places_and_leaves_an_ordered_store_alone(tmp_path):
    path = tmp_path / "jobs.jsonl"
    store = JobStore(path, Done, lambda r: r.job, "jobs")
    for n in (9, 3, 8, 1):  # 9 and 8 belong to another slice
        store.add(Done(job=Job(n=n), pid=0))
    store.close()
    run_games([phase(path, [Job(n=1), Job(n=3)])], RunOptions(workers=1))
    assert stored_order(path) == [9, 1, 8, 3]
    before = path.read_bytes(), path.stat().st_mtime_ns
    run_games([phase(path, [Job(n=1), Job(n=3)])], RunOptions(workers=1))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


class Batched(Frozen):
    job: Job
    pid: int
    batch: tuple[int, ...]  # the jobs the worker played in the same call


def together(jobs: list[Job]) -> list[Batched]:
    return [Batched(job=job, pid=os.getpid(), batch=tuple(j.n for j in jobs)) for job in jobs]


def test_a_batched_phase_hands_a_worker_the_jobs_of_one_group_and_stores_each_job_alone(tmp_path):
    """With `Phase.batch`, a worker plays jobs of one group together, in batches small enough for every worker to
    have about four; each job is still its own record, the store in job order."""
    path = tmp_path / "batched.jsonl"
    jobs = [Job(n=n) for n in range(24)]
    batched = Phase("jobs", path, Batched, in_which_process, jobs, batch=together, group=lambda job: job.n % 3)
    [played] = run_games([batched], RunOptions(workers=2))
    assert played.played == 24 and stored_order(path, Batched) == list(range(24))
    batches = {played.records[job].batch for job in jobs}
    assert all(len({n % 3 for n in batch}) == 1 and len(batch) <= 3 for batch in batches)  # 24 jobs / (4 × 2)
    assert sorted(n for batch in batches for n in batch) == list(range(24))
    assert {played.records[job].pid for job in jobs} != {os.getpid()}
