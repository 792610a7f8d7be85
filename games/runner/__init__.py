"""Experiments as independent jobs: run in local processes (default) or on Ray through one code path, their
results appended to a store that survives interruption.

A job is a frozen value whose fields say everything its result depends on, so it is its own content key:
equal jobs are one job, and a rerun into the same store runs only the jobs it does not hold yet. Results
arrive in completion order; callers that write outputs order them by job, and a run that played jobs rewrites
its store in job order at the end, so two runs with any number of workers, or an interrupted and resumed one,
write the same bytes.
"""

from contractlang.progress import Advance as Progress
from games.runner.hosts import process_client
from games.runner.locks import StoreLock
from games.runner.plans import (
    Left,
    Phase,
    Played,
    RunEstimate,
    RunOptions,
    RunPlan,
    Status,
    Unfinished,
    estimate,
    game_limits,
    limits_path,
    plan,
    unfinished_path,
)
from games.runner.run import run_games, run_phase, spend_note
from games.runner.stores import Job, JobStore, Record, Records, read_records, seal_store, shared_store, stored_records
from games.runner.workers import M_MMAP_THRESHOLD, PR_SET_PDEATHSIG, WORKER_END_SECONDS, limit_threads, run_jobs

__all__ = [
    "Progress",
    "limit_threads",
    "PR_SET_PDEATHSIG",
    "M_MMAP_THRESHOLD",
    "run_jobs",
    "WORKER_END_SECONDS",
    "StoreLock",
    "Job",
    "Record",
    "Records",
    "JobStore",
    "read_records",
    "stored_records",
    "seal_store",
    "shared_store",
    "Status",
    "Unfinished",
    "game_limits",
    "Left",
    "limits_path",
    "unfinished_path",
    "RunOptions",
    "Phase",
    "Played",
    "RunPlan",
    "plan",
    "RunEstimate",
    "estimate",
    "run_phase",
    "run_games",
    "spend_note",
    "process_client",
]
