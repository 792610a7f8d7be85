"""One run of games: every phase's jobs played, stored as they end, and the stores put in job order at the end."""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

from contractlang.errors import RunEnded
from contractlang.files import (
    write_atomically,
)
from contractlang.llm.usage import LlmUsage
from contractlang.progress import Advance as Progress
from games.runner.hosts import GameProcess, Processes, RayRun, Threads, each
from games.runner.plans import (
    Left,
    Phase,
    Played,
    RunOptions,
    game_limits,
    limits_path,
    reused_records,
    unfinished_path,
    unfinished_type,
)
from games.runner.stores import Job, JobStore, Record
from games.runner.workers import WORKER_END_SECONDS


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
        self.errored_now = 0
        self.stopping: RunEnded | None = None
        self.last_error = ""
        self.totals = None
        self.cpu = self.host = None

    def __enter__(self) -> _Run:
        try:
            for phase in self.phases:
                self.reused.append(reused_records(phase))
                self.stores.append(JobStore(phase.path, phase.record_type, phase.job_of, phase.records_of))
                self.unfinished.append(
                    JobStore(
                        unfinished_path(phase.path),
                        unfinished_type(phase),
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
        self.ended = [
            {j for j in phase.jobs if self.finished(i, j) or (u is not None and j in u.records)}
            for i, (phase, u) in enumerate(zip(self.phases, self.unfinished))
        ]
        for i in range(len(self.phases)):
            self._advance(i)
        self._start(todo)
        waiting: dict[tuple[int, Any], list] = {}
        try:
            for i, jobs in enumerate(todo):
                before = set(todo[i - 1]) if i else set()
                ready = []
                for job in jobs:
                    need = self.phases[i].needs(job) if self.phases[i].needs is not None else None
                    if need is not None and need in before:
                        waiting.setdefault((i - 1, need), []).append((i, job))
                    elif self._networked(i, job):
                        self._submit(i, job)
                    else:
                        ready.append(job)
                for batch in self._batches(i, ready):
                    self._run(i, batch)
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
        workers = self.workers = self.options.workers or os.cpu_count() or 1
        earlier = self._earlier_usage()
        if self.options.ray is not None:
            if network or cpu:
                self.cpu = self.host = RayRun(self.options, self.events, self.works, workers, earlier)
            return
        if network:  # before the worker processes: it forks from a process that has run nothing compiled
            make = Threads if workers == 1 else GameProcess
            self.host = make(self.options, self.events, self.works, earlier)
        if cpu:
            self.cpu = Processes(min(workers, cpu), self.events, fork=workers > 1)

    @property
    def works(self) -> list[Callable]:
        return [phase.work for phase in self.phases]

    def _earlier_usage(self):
        """What the LLM games this run finished before spent (they count toward its limits), or None."""
        if self.options.llm is None:
            return None
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
        if self._networked(i, job):
            self.in_flight += 1
            self.host.play(i, job)
        else:
            self._run(i, [job])

    def _run(self, i: int, jobs: list) -> None:
        phase = self.phases[i]
        self.in_flight += len(jobs)
        self.cpu.run(i, jobs, phase.batch or partial(each, phase.work))

    def _batches(self, i: int, jobs: list) -> list[list]:
        """The CPU jobs of phase `i` as a worker takes them: one by one, or with `Phase.batch` the jobs of each
        group in batches small enough that every worker has about four to take (so none idles at the end)."""
        phase = self.phases[i]
        if phase.batch is None:
            return [[job] for job in jobs]
        groups: dict = {}
        for job in jobs:
            groups.setdefault(phase.group(job) if phase.group is not None else None, []).append(job)
        most = -(-len(jobs) // (4 * self.workers))
        out = []
        for group in groups.values():
            size = -(-len(group) // -(-len(group) // most))  # even batches of at most `most` jobs
            out += [group[k : k + size] for k in range(0, len(group), size)]
        return out

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
        if kind in ("done", "errored", "limited"):
            self.ended[i].add(job)
        if kind == "done":
            self.stores[i].add(payload)
            self.played[i] += 1
            for later in waiting.pop((i, job), []):
                if self.stopping is None:
                    self._submit(*later)
        elif kind in ("errored", "limited"):
            limits = self.limits if kind == "limited" else None
            unfinished = unfinished_type(self.phases[i])(job=job, status=kind, reason=payload, limits=limits)
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
        self.stores[i].put_in_order(self.phases[i].jobs)  # a run killed before its end left finishing order
        unfinished = self.unfinished[i]
        if unfinished is not None and unfinished.records:
            unfinished.put_in_order(self.phases[i].jobs, drop=[*self.stores[i].records, *self.reused[i]])

    def _stored_text(self) -> str:
        """What the run stored, in the terms of its last phase (the games; those before prepare them)."""
        name, store = self.phases[-1].name, self.stores[-1]
        return f"{self.played[-1]} {name} played now, {len(store.records)} stored in {store.path}"

    def _advance(self, i: int | None) -> None:
        if self.progress is None or i is None:  # a stopped job names no phase
            return
        jobs = self.phases[i].jobs
        done = len(self.ended[i])  # the jobs finished or left unfinished, counted as they end
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
