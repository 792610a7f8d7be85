"""`cl.experiments`: the ContractSim experiments (ContractSim paper, App. C.4–C.6) on a synthetic set or a slice of it, with the
job stores of the CLI, so a run from Python and one from the command line share their finished games."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contractlang.api.results import Rows, flat
from contractlang.errors import UnknownName

Progress = Callable[[str, int, int], None] | None


DEFAULT_OUT = Path("contractlang-out")
"""Where a run on the shipped set writes unless told: the working directory, never the package."""


def synthetic_set(directory: str | Path | None) -> Path:
    """The set an experiment reads: `directory`, else the set shipped in the repository (read-only input)."""
    from games.contractsim.synth import SHIPPED

    return SHIPPED if directory is None else Path(directory)


def output_dir(out: str | Path | None, directory: str | Path | None, command: str) -> Path:
    """Where a run writes: `out`, else the set it was given, else `./contractlang-out/COMMAND` (also for the
    shipped set named by its folder: it is installed with the package, read-only input)."""
    from games.contractsim.synth import SHIPPED

    if out is not None:
        return Path(out)
    if directory is None or Path(directory).resolve() == SHIPPED.resolve():
        return DEFAULT_OUT / command
    return Path(directory)


def contract_slice(contracts: str | None = None, envs=None, variants=None, rhos=None, limit: int | None = None):
    """The `ContractSlice` of the options (each None: all)."""
    from games.contractsim.experiments import ContractSlice

    if limit is not None and limit < 1:
        raise ValueError(f"limit {limit}: a slice holds at least one contract")
    return ContractSlice(
        contracts=contracts,
        envs=None if envs is None else tuple(envs),
        variants=None if variants is None else tuple(variants),
        rhos=None if rhos is None else tuple(rhos),
        limit=limit,
    )


def sliced_contracts(directory: Path, chosen) -> tuple[list, str]:
    """(manifest entry, IR) of every contract of the set in the slice, read back from its file, and the line that
    says which slice it is ('' for the whole set); a slice that keeps nothing is an error."""
    from games.contractsim.synth import set_contracts

    pairs = set_contracts(directory)[1]
    if not pairs:
        raise UnknownName(f"{directory / 'manifest.json'}: lists no contract; nothing to play")
    by_name = {entry.name: (entry, ir) for entry, ir in pairs}
    kept = chosen.select([entry for entry, _ in pairs])
    if not kept:
        raise UnknownName(f"no contract of {directory} is in the slice ({chosen.describe(0, len(pairs))})")
    covers = "" if chosen.whole else chosen.describe(len(kept), len(pairs))
    return [by_name[entry.name] for entry in kept], covers


def check_choices(convention: str, floors: str) -> None:
    """`UnknownName` for a scoring convention ([CS-19], [CS-19a]) or a floor rule set ([CS-14a]) with no such name."""
    from contractlang.interpreter.rounds import FLOOR_RULES
    from games.contractsim.metrics import CONVENTIONS

    for value, allowed, what in ((convention, CONVENTIONS, "convention"), (floors, FLOOR_RULES, "floor rule set")):
        if value not in allowed:
            raise UnknownName(f"unknown {what} {value!r}; choose from {', '.join(allowed)}")


class RationalResult(Rows):
    """`experiment rational`: Tables 7–10 rows, the identities E1–E13, where the tables were written."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    report: Any  # games.contractsim.experiments.RationalReport
    played_now: int
    tables: Path
    markdown: str

    def rows(self) -> list[dict]:
        return [flat("", r.model_dump(mode="json")) for r in self.report.rows]


def rational(
    directory: str | Path | None = None,
    out: str | Path | None = None,
    contracts: str | None = None,
    envs=None,
    variants=None,
    rhos=None,
    limit: int | None = None,
    convention: str = "cs19",
    workers: int | None = None,
    ray: str | None = None,
    progress: Progress = None,
    floors: str = "cs14",
) -> RationalResult:
    """All nine RC/RCC/RE pairings on every contract of the set (or the slice) with seed 42 (ContractSim paper,
    App. C.6, D.3) under the floor rule set `floors` ([CS-14a]); outputs in `out` (`output_dir`), finished games
    of the set's own store reused read-only (those of the same rule set only: it is part of every job)."""
    from contractlang.files import check_outputs
    from games.contractsim.experiments import (
        RationalJob,
        RationalReport,
        identities,
        rational_records,
        report_paths,
        tables,
        tables_markdown,
        write_report,
    )
    from games.runner import shared_store

    check_choices(convention, floors)
    out = output_dir(out, directory, "rational")
    directory = synthetic_set(directory)
    chosen, covers = sliced_contracts(directory, contract_slice(contracts, envs, variants, rhos, limit))
    jobs = [RationalJob(contract=ir, env=entry.env, floors=floors) for entry, ir in chosen]
    check_outputs(report_paths(out, convention, floors))  # refused now, not after the games
    records, played = rational_records(
        jobs, out / "jobs" / "rational.jsonl", workers, ray, progress, shared_store(directory, out, "rational.jsonl")
    )
    rows = tables(records, convention)
    checks = identities(records, rows, {ir.name: entry.p_sat for entry, ir in chosen}, convention)
    report = RationalReport(
        contracts=len(records),
        rows=tuple(rows),
        identities=tuple(checks),
        convention=convention,
        covers=covers,
        floors=floors,
    )
    markdown = tables_markdown(rows, convention, covers, floors)
    return RationalResult(
        report=report, played_now=played, tables=write_report(out, report, markdown), markdown=markdown
    )


class PerformanceResult(Rows):
    """`experiment performance`: the report (agents' rows, rational rows, the paper's), the games played now, and
    where tables.md, tables.json and Figure 4 were written."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    report: Any  # games.contractsim.performance.PerformanceReport
    played_rational: int
    played_agents: int
    folder: Path
    tables: Path
    figure: Path
    markdown: str

    def rows(self) -> list[dict]:
        """The agents' rows then the rational rows, one flat dict each (`summary.utility.mean`, …)."""
        return [
            {"rational": rational, **flat("", r.model_dump(mode="json"))}
            for rational, rows in ((False, self.report.rows), (True, self.report.rational))
            for r in rows
        ]


def performance(
    agent=None,
    agents=(),
    directory: str | Path | None = None,
    out: str | Path | None = None,
    role: str = "both",
    seeds=(42,),
    settings=None,
    contracts: str | None = None,
    envs=None,
    variants=None,
    rhos=None,
    limit: int | None = None,
    convention: str = "cs19",
    workers: int | None = None,
    ray: str | None = None,
    llm=None,
    progress: Progress = None,
    notice: Callable[[str], None] | None = None,
    floors: str = "cs14",
    fail_on_error: float | None = None,
    estimate: bool = False,
):
    """Each agent (`agent`, and every one of `agents`: an object with `act`, a class, a factory, a built-in name
    or a spec, `LABEL=SPEC` to label it) in `role` (with "both", the roles every agent plays: an agent may say
    which in its `roles` attribute) against RCC, RC and RE on every contract of the set or the
    slice (ContractSim paper, App. B.2, C.6), every game under the floor rule set `floors` ([CS-14a]): Tables
    7–10 with the rational rows of the same cases, Figure 4, the LLM account. An
    object is labelled by its `name` and must pickle for `workers` > 1. `llm` is an `LlmSettings` for `llm:`
    agents (its `max_connections` games wait on the model at once, in threads; `workers` processes solve and
    play the rational games meanwhile); `notice` hears, before a cold start, how many DP tables must be solved
    and an estimate, and which errored games are retried. A game whose model calls fail is left out as errored
    (`fail_on_error`: a count, or a share under 1, of errored games that ends the run with `RunEnded`).
    `estimate`: return the run's `games.runner.RunEstimate` instead, playing nothing. Resumable: the games are
    jobs in `DIRECTORY/jobs/`, shared with the CLI."""
    from contractlang.files import check_outputs
    from contractlang.llm import agent_model
    from contractlang.vocab import SETTINGS
    from games.agents import agent_name, roles_of
    from games.contractsim.experiments import ROLES, rational_phase
    from games.contractsim.metrics import output_name
    from games.contractsim.performance import (
        Case,
        check_agents,
        decisions,
        figure4,
        jobs_of,
        markdown,
        performance_phase,
        report,
        report_paths,
        write_report,
    )
    from games.runner import RunOptions, run_games, shared_store
    from games.runner import estimate as run_estimate

    given = ([agent] if agent is not None else []) + list(agents)
    if not given:
        raise ValueError("name an agent: agent=... or agents=[...]")
    check_choices(convention, floors)
    if role not in (*ROLES, "both"):
        raise UnknownName(f"unknown role {role!r}; choose from customer, supplier, both")
    roles = [
        r
        for r in (ROLES if role == "both" else (role,))
        if all(r in (roles_of(a, "contractsim") or ROLES) for a in given)
    ]
    if not roles:
        raise UnknownName(f"no agent given plays every one of the roles asked for ({role})")
    objects = {agent_name(a): a for a in given if not isinstance(a, str)}
    names = list(dict.fromkeys(a if isinstance(a, str) else agent_name(a) for a in given))
    check_agents([n for n in names if n not in objects], roles)
    seed_list = list(dict.fromkeys(seeds))
    if any(s < 0 for s in seed_list):
        raise ValueError(f"seeds are 0 or more, not {seed_list}")
    for s in settings or ():
        if s not in SETTINGS:
            raise UnknownName(f"unknown setting {s!r}; choose from {', '.join(SETTINGS)}")
    game_settings = tuple(dict.fromkeys(settings)) if settings else (None,)
    out = output_dir(out, directory, "performance")
    directory = synthetic_set(directory)
    chosen, covers = sliced_contracts(directory, contract_slice(contracts, envs, variants, rhos, limit))
    cases = [  # a contract's seeds one after another: its games share one compiled contract in each process
        Case(contract=ir, env=entry.env, p_sat=entry.p_sat, seed=s, floors=floors)
        for entry, ir in chosen
        for s in seed_list
    ]
    rational_jobs = list(dict.fromkeys(c.rational for c in cases))
    jobs = out / "jobs"
    agent_jobs = jobs_of(cases, names, roles, game_settings)
    games_phase = performance_phase(
        agent_jobs, jobs / "performance.jsonl", shared_store(directory, out, "performance.jsonl"), objects
    )
    if estimate:
        return run_estimate(
            games_phase, lambda job: [(agent_model(job.agent), decisions(job))] if decisions(job) else [], llm
        )
    check_outputs(report_paths(out, convention, floors))  # refused now, not after the games
    rational_store = shared_store(directory, out, "rational.jsonl")
    if notice is not None:
        # a clone holds the shipped set's rational games but no table: the agent games solve them, so both count
        from games.contractsim.experiments import RationalRecord, solving_plan, unplayed
        from games.contractsim.performance import PerformanceRecord
        from solver.dp import TableCache

        tables = TableCache()
        rational_stores, agent_stores = (
            [p for p in (jobs / name, shared_store(directory, out, name)) if p]
            for name in ("rational.jsonl", "performance.jsonl")
        )
        plan = solving_plan(
            [
                *unplayed(rational_jobs, rational_stores, RationalRecord),
                *unplayed(agent_jobs, agent_stores, PerformanceRecord),
            ],
            tables,
        )
        if plan.to_solve:
            notice(plan.text(tables.directory))
    rational, games = run_games(
        [rational_phase(rational_jobs, jobs / "rational.jsonl", rational_store), games_phase],
        RunOptions(workers=workers, ray=ray, llm=llm, fail_on_error=fail_on_error),
        progress,
        notice,
    )
    rational_by_job = {job: rational.records[job] for job in rational_jobs}
    rep = report(
        cases, names, roles, games.records, rational_by_job, game_settings, convention, covers, floors, games.unfinished
    )
    folder = write_report(out, rep, figure4(cases, rep, games.records, rational_by_job))
    return PerformanceResult(
        report=rep,
        played_rational=rational.played,
        played_agents=games.played,
        folder=folder,
        tables=folder / output_name("tables.md", convention, floors),
        figure=folder / output_name("figure4.png", convention, floors),
        markdown=markdown(rep),
    )


def negotiate(
    env: int,
    customer: str = "scripted",
    supplier: str = "scripted",
    offers=None,
    translator: str = "rules",
    perform: tuple[str, str] = ("rcc", "rcc"),
    seeds=(42,),
    llm=None,
    guidance: tuple[str, ...] = (),
    repeat: int = 0,
):
    """One ContractSim negotiation (ContractSim paper, Sec. 4) in environment `env`, scored by the paper's negotiation metrics and performed on the agreed contract
    (`perform`, one game per seed): the `NegotiatedRun`. Negotiators are `scripted`, specs (`py:`, `cmd:`,
    `llm:`) or objects; `offers` are the contracts (files or checked) the scripted Supplier may offer (default
    the bundled catering-*.contract examples). `llm` is an `LlmClient`."""
    from contractlang.api.language import as_checked
    from games.contractsim.environments import environment
    from games.contractsim.session import negotiate_and_perform
    from solver.dp import TableCache

    files = offers if offers is not None else sorted(EXAMPLES.glob("catering*.contract"))
    irs = [as_checked(f).ir for f in files]
    return negotiate_and_perform(
        environment(env),
        customer,
        supplier,
        irs,
        TableCache(),
        translator,
        tuple(perform),
        tuple(seeds),
        llm,
        tuple(guidance),
        repeat,
    )


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
