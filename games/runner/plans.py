"""A run's phases and options, what each phase has left to play, and what playing it would cost."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from pathlib import Path
from typing import Any, Generic, Literal, NamedTuple

from pydantic import Field

from contractlang.llm.estimates import estimate_cost
from contractlang.llm.recordings import Recordings
from contractlang.llm.settings import GameLimits
from contractlang.vocab import Frozen
from games.runner.stores import Job, stored_records

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
    later contracts are being solved. With `batch`, a worker takes the CPU jobs of one `group(job)` at a time
    and `batch(jobs)` plays them together, one record per job in their order: each job is still stored, resumed
    and reused on its own, only the work of a worker's visit is shared (a table read once, one compiled call
    for many games)."""

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
    batch: Callable[[list], list] | None = None  # the records of CPU jobs played together, in their order
    group: Callable[[Any], Any] | None = None  # which jobs a batch may hold: those of one key (None: any)

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
    finished = reused_records(phase) | stored_records(phase.path, phase.record_type, phase.job_of, phase.records_of)
    every = list(dict.fromkeys(phase.jobs))
    jobs = [j for j in every if j not in finished]
    left = Left.of(jobs, unfinished_records(phase), limits)
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


def reused_records(phase: Phase) -> dict:
    return stored_records(phase.shared, phase.record_type, phase.job_of, phase.records_of) if phase.shared else {}


def unfinished_type(phase: Phase) -> type:
    return Unfinished[type(phase.jobs[0])] if phase.jobs else Unfinished[Any]


def unfinished_records(phase: Phase) -> dict:
    path = unfinished_path(phase.path)
    return (
        stored_records(path, unfinished_type(phase), attrgetter("job"), f"unfinished {phase.records_of}")
        if phase.network is not None
        else {}
    )
