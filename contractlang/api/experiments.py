"""`cl.experiments`: the ContractSim experiments (ContractSim paper, App. C.4–C.6) on a synthetic set or a slice of it, with the
job stores of the CLI, so a run from Python and one from the command line share their finished games."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from contractlang.api.results import Rows, flat
from contractlang.errors import BadArgument, BadData, Count, Flag, Seed, Text, UnknownName, Workers, checked

__all__ = [
    "FrontierResult",
    "Metrics",
    "Negotiations",
    "PerformanceResult",
    "RationalResult",
    "frontier",
    "metrics",
    "negotiate",
    "negotiations",
    "performance",
    "rational",
    "seal",
    "synth",
]
"""The verbs and result types of this part of the face (its other functions are their helpers)."""


Progress = Callable[[str, int, int], None] | None
Folder = str | Path
Envs = Annotated[Sequence[Annotated[int, Field(strict=True)]], Field(min_length=1)]
"""ContractSim environments, at least one (a number that names none is `UnknownName` where it is looked up)."""
SearchEnvs = Annotated[Sequence[Annotated[int, Field(ge=1, le=6, strict=True)]], Field(min_length=1)]
"""ContractSim environments to search in, each 1..6."""
Probabilities = Annotated[Sequence[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]], Field(min_length=1)]
Names = Annotated[Sequence[Text], Field(min_length=1)]
"""One name or more (never one text, which would be read letter by letter)."""
Share = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A count of games (a whole number) or a share of them (under 1)."""


DEFAULT_OUT = Path("contractlang-out")
"""Where a run on the shipped set writes unless told: the working directory, never the package."""


def synthetic_set(directory: str | Path | None) -> Path:
    """The set an experiment reads: `directory`, else the set shipped in the repository (read-only input)."""
    from games.experiments.synth import SHIPPED

    return SHIPPED if directory is None else Path(directory)


def output_dir(out: str | Path | None, directory: str | Path | None, folder: str | None = None) -> Path:
    """Where a run writes: `out`, else the set it was given, else `./contractlang-out` laid out as a set is (an
    experiment's tables in its own folder there, the games in `jobs/`), or its `folder` there (`synth`'s set).
    The shipped set, named by its folder, is read-only input installed with the package: never written into."""
    from games.experiments.synth import SHIPPED

    if out is not None:
        return Path(out)
    if directory is not None and Path(directory).resolve() != SHIPPED.resolve():
        return Path(directory)
    return DEFAULT_OUT / folder if folder else DEFAULT_OUT


def contract_slice(contracts: str | None = None, envs=None, variants=None, rhos=None, limit: int | None = None):
    """The `ContractSlice` of the options (each None: all)."""
    from games.experiments.rational import ContractSlice

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
    from games.experiments.synth import set_contracts

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

    report: Any
    """The `RationalReport`: Tables 7–10 rows, the identities E1–E13, the slice covered."""
    played_now: int
    """Contracts played now (the others were in the job store)."""
    tables: Path
    """Where tables.md and tables.json were written."""
    markdown: str
    """The tables as Markdown."""

    def rows(self) -> list[dict]:
        """One row per role and pairing of Tables 7–10, flat (`summary.utility.mean`, …)."""
        return [flat("", r.model_dump(mode="json")) for r in self.report.rows]


@checked
def rational(
    directory: Folder | None = None,
    out: Folder | None = None,
    contracts: Text | None = None,
    envs: Envs | None = None,
    variants: Names | None = None,
    rhos: Probabilities | None = None,
    limit: Count | None = None,
    convention: Text = "cs19",
    workers: Workers | None = None,
    ray: Text | None = None,
    progress: Progress = None,
    floors: Text = "cs14",
) -> RationalResult:
    """All nine RC/RCC/RE pairings on every contract of the set (or the slice) with seed 42 (ContractSim paper,
    App. C.6, D.3) under the floor rule set `floors` ([CS-14a]); outputs in `out` (`output_dir`), finished games
    of the set's own store reused read-only (those of the same rule set only: it is part of every job)."""
    from contractlang.files import check_outputs
    from games.experiments.rational import (
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
    out = output_dir(out, directory)
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

    report: Any
    """The `PerformanceReport`: the agents' rows, the rational rows of the same cases, the paper's, LLM use."""
    played_rational: int
    """Rational jobs played now."""
    played_agents: int
    """The agents' games played now."""
    folder: Path
    """The folder of the report."""
    tables: Path
    """tables.md in it."""
    figure: Path
    """Figure 4's PNG in it."""
    markdown: str
    """The tables as Markdown."""

    def rows(self) -> list[dict]:
        """The agents' rows then the rational rows, one flat dict each (`summary.utility.mean`, …)."""
        return [
            {"rational": rational, **flat("", r.model_dump(mode="json"))}
            for rational, rows in ((False, self.report.rows), (True, self.report.rational))
            for r in rows
        ]


def agent_specs(agents: Sequence[str]) -> list[str]:
    """The spec of each agent named `LABEL=SPEC` or by its spec alone, as `performance` reads them."""
    from games.agents import split_label

    return [split_label(a)[1] for a in agents]


@checked
def performance(
    agent: Any = None,
    agents: Sequence[Any] = (),
    directory: Folder | None = None,
    out: Folder | None = None,
    role: Text = "both",
    seeds: Annotated[Sequence[Seed], Field(min_length=1)] = (42,),
    settings: Names | None = None,
    contracts: Text | None = None,
    envs: Envs | None = None,
    variants: Names | None = None,
    rhos: Probabilities | None = None,
    limit: Count | None = None,
    convention: Text = "cs19",
    workers: Workers | None = None,
    ray: Text | None = None,
    llm: Any = None,
    progress: Progress = None,
    notice: Callable[[str], None] | None = None,
    floors: Text = "cs14",
    fail_on_error: Share | None = None,
    estimate: Flag = False,
):
    """Each agent (`agent`, and every one of `agents`: an object with `act`, a class, a factory, a built-in name
    or a spec, `LABEL=SPEC` to label it) in each role of `role` (customer, supplier or both) that it says it plays
    (its `roles` attribute; every role when it does not say) against RCC, RC and RE on every contract of the set or
    the slice (ContractSim paper, App. B.2, C.6), every game under the floor rule set `floors` ([CS-14a]): Tables
    7–10 with the rational rows of the same cases, for every agent the set's stores hold games of on them (a Python
    agent known by its label, so a run from Python and one from the shell share its games), Figure 4, the LLM
    account. An
    object is labelled by its `name` and must pickle for `workers` > 1. `llm` is an `LlmSettings` for `llm:`
    agents (its `max_connections` games wait on the model at once, in threads; `workers` processes solve and
    play the rational games meanwhile); `notice` hears, before a cold start, how many DP tables must be solved
    and an estimate, and which errored games are retried. A game whose model calls fail is left out as errored
    (`fail_on_error`: a count, or a share under 1, of errored games that ends the run with `RunEnded`).
    `estimate`: return the run's `games.runner.RunEstimate` instead, playing nothing. Resumable: the games are
    jobs in `DIRECTORY/jobs/`, shared with the CLI."""
    from contractlang.files import check_outputs
    from contractlang.vocab import SETTINGS
    from games.contractsim.metrics import output_name
    from games.experiments.performance import (
        Case,
        agent_key,
        check_agents,
        figure4,
        jobs_of,
        markdown,
        model_calls,
        performance_phase,
        report,
        report_paths,
        seat_agents,
        stored_seats,
        write_report,
    )
    from games.experiments.rational import ROLES, rational_phase
    from games.runner import RunOptions, run_games, shared_store
    from games.runner import estimate as run_estimate

    given = ([agent] if agent is not None else []) + list(agents)
    if not given:
        raise ValueError("name an agent: agent=... or agents=[...]")
    check_choices(convention, floors)
    if role not in (*ROLES, "both"):
        raise UnknownName(f"unknown role {role!r}; choose from customer, supplier, both")
    seats, objects = seat_agents(given, role)
    check_agents({a: seats[agent_key(a)] for a in given if isinstance(a, str)})
    seed_list = list(dict.fromkeys(seeds))
    for s in settings or ():
        if s not in SETTINGS:
            raise UnknownName(f"unknown setting {s!r}; choose from {', '.join(SETTINGS)}")
    game_settings = tuple(dict.fromkeys(settings)) if settings else (None,)
    out = output_dir(out, directory)
    directory = synthetic_set(directory)
    chosen, covers = sliced_contracts(directory, contract_slice(contracts, envs, variants, rhos, limit))
    cases = [  # a contract's seeds one after another: its games share one compiled contract in each process
        Case(contract=ir, env=entry.env, p_sat=entry.p_sat, seed=s, floors=floors)
        for entry, ir in chosen
        for s in seed_list
    ]
    rational_jobs = list(dict.fromkeys(c.rational for c in cases))
    jobs = out / "jobs"
    agent_jobs = jobs_of(cases, seats, game_settings)
    games_phase = performance_phase(
        agent_jobs, jobs / "performance.jsonl", shared_store(directory, out, "performance.jsonl"), objects
    )
    if estimate:
        return run_estimate(games_phase, model_calls, llm)
    check_outputs(report_paths(out, convention, floors))  # refused now, not after the games
    rational_store = shared_store(directory, out, "rational.jsonl")
    if notice is not None:
        # a clone holds the shipped set's rational games but no table: the agent games solve them, so both count
        from games.experiments.performance import PerformanceRecord
        from games.experiments.rational import RationalRecord, solving_plan, unplayed
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
    stores = [p for p in (jobs / "performance.jsonl", shared_store(directory, out, "performance.jsonl")) if p]
    others, stored = stored_seats(cases, game_settings, stores)  # the tables cover every agent of the set
    seats |= {a: r for a, r in others.items() if a not in seats}
    played = ChainMap(games.records, stored)
    rep = report(cases, seats, played, rational_by_job, game_settings, convention, covers, floors, games.unfinished)
    folder = write_report(out, rep, figure4(cases, rep, played, rational_by_job))
    return PerformanceResult(
        report=rep,
        played_rational=rational.played,
        played_agents=games.played,
        folder=folder,
        tables=folder / output_name("tables.md", convention, floors),
        figure=folder / output_name("figure4.png", convention, floors),
        markdown=markdown(rep),
    )


@checked
def negotiate(
    env: Annotated[int, Field(ge=1, le=6, strict=True)],
    customer: Any = "scripted",
    supplier: Any = "scripted",
    offers: Annotated[Sequence[Any], Field(min_length=1)] | None = None,
    translator: Text = "rules",
    perform: tuple[Text, Text] = ("rcc", "rcc"),
    seeds: Annotated[Sequence[Seed], Field(min_length=1)] = (42,),
    llm: Any = None,
    guidance: Sequence[Text] = (),
    repeat: Annotated[int, Field(ge=0, strict=True)] = 0,
):
    """One ContractSim negotiation (ContractSim paper, Sec. 4) in environment `env`, scored by the paper's negotiation metrics and performed on the agreed contract
    (`perform`, one game per seed): the `NegotiatedRun`. Negotiators are `scripted`, specs (`py:`, `cmd:`,
    `llm:`) or objects; `offers` are the contracts (files or checked) the scripted Supplier may offer (default
    the bundled catering-*.contract examples). `llm` is an `LlmClient`."""
    from games.contractsim.environments import environment
    from games.contractsim.session import negotiate_and_perform
    from solver.dp import TableCache

    irs = offered(offers)
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
"""The bundled examples, whose catering-*.contract files are the scripted Supplier's default offers."""


def offered(offers) -> list:
    """The IRs of the ContractSim contracts the scripted Supplier may offer: every one of the files (all their
    contracts) and checked contracts in `offers`, else of the bundled catering-*.contract examples."""
    from contractlang import load
    from contractlang.ir import CheckedContract, ContractSimIR

    files = offers if offers is not None else sorted(EXAMPLES.glob("catering*.contract"))
    checked_contracts = [c for f in files for c in ([f] if isinstance(f, CheckedContract) else load(f))]
    irs = [c.ir for c in checked_contracts if isinstance(c.ir, ContractSimIR)]
    if not irs:
        raise BadData("no ContractSim contract to offer; give candidate contracts (files or checked contracts)")
    own = sorted({ir.setting for ir in irs})
    if len(own) > 1:
        raise BadData(f"the candidates mix settings ({', '.join(own)}); one negotiation is in one setting")
    return irs


class Negotiations(Rows):
    """`contractlang negotiate`: the plan, every job with its negotiated run in job order, their summary, and — for
    a run into `out` — the report folder, how many were played now and how many were left out as errored."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    plan: Any
    """The job grid played (`Plan`)."""
    jobs: tuple[Any, ...]
    """Every negotiation job with a run, in job order."""
    runs: tuple[Any, ...]
    """The `NegotiatedRun` of each job: the negotiation, its metrics, the performance games."""
    summary: Any
    """The `NegotiationSummary`: how many agreed, mean gains and P_sat, LLM use."""
    budgets: dict[int, int]
    """Each environment's budget, against which a proposal is feasible."""
    folder: Path | None = None
    """The report folder of a run into `out`."""
    played_now: int | None = None
    """Negotiations played now, in a run into `out`."""
    unfinished: int | None = None
    """Negotiations left out as errored or limited, in a run into `out`."""

    def rows(self) -> list[dict]:
        """One row per negotiation: its job's environment, pairing, repeat, condition, setting, and its metrics."""
        return [
            {"env": j.env, "customer": j.customer, "supplier": j.supplier, "repeat": j.repeat}
            | {"condition": j.condition, "setting": j.setting, **flat("", r.metrics.model_dump(mode="json"))}
            for j, r in zip(self.jobs, self.runs)
        ]


@checked
def negotiations(
    envs: Literal["all"] | Envs,
    customers: Names = ("scripted",),
    suppliers: Names = ("scripted",),
    repeats: Annotated[int, Field(ge=1, le=1000, strict=True)] = 1,
    translator: Text = "rules",
    candidates: Annotated[Sequence[Any], Field(min_length=1)] | None = None,
    settings: Names | None = None,
    perform: tuple[Text, Text] = ("rcc", "rcc"),
    seed: Seed = 42,
    games: Annotated[int, Field(ge=1, le=1000, strict=True)] = 1,
    guidance: Sequence[Text] = (),
    ablation: Flag = False,
    out: Folder | None = None,
    frontiers: Folder | None = None,
    workers: Workers | None = None,
    ray: Text | None = None,
    llm: Any = None,
    client: Any = None,
    progress: Progress = None,
    notice: Callable[[str], None] | None = None,
    fail_on_error: Share | None = None,
    estimate: Flag = False,
):
    """Every Customer meets every Supplier in every environment of `envs` (or "all"), `repeats` times (ContractSim paper, Sec. 3): each
    negotiation scored (App. C.5) and its agreed contract performed (`perform`, `games` seeds from `seed`).
    `candidates` are the scripted Supplier's offers (`offered`), `settings` relabel them (Table 11); `ablation`
    plays the control and each `guidance` clause alone (Figure 5). With `out` the negotiations are jobs in
    `out/jobs/negotiations.jsonl` (resumable, `workers`/`ray`, `llm` the `LlmSettings`) and the tables and
    Figures 2, 3 and 5 are written to `out/negotiation/` (Figure 2's frontiers in Envs 3–6 from the synthetic set
    `frontiers`, default the shipped one); without it they play here with `client` (an `LlmClient`).
    `estimate`: the `RunEstimate` of the run into `out`, playing nothing."""
    from contractlang.files import check_outputs
    from contractlang.vocab import SETTINGS
    from games.contractsim.environments import ENVIRONMENTS, environment
    from games.contractsim.llm_agents import guidance_for
    from games.contractsim.session import NegotiationSummary, check_names
    from games.experiments.negotiate import MAX_NEGOTIATIONS, Plan, play_job
    from solver.dp import TableCache

    customers, suppliers = tuple(dict.fromkeys(customers)), tuple(dict.fromkeys(suppliers))
    for c in customers:
        for s in suppliers:
            check_names(c, s, translator, perform)
    clauses = tuple(dict.fromkeys(guidance))
    guidance_for(clauses, "negotiation", "customer")
    if ablation and not clauses:
        raise BadArgument("ablation compares guidance clauses with the control; give guidance", "ablation")
    env_ids = tuple(environment(e).id for e in dict.fromkeys(ENVIRONMENTS if envs == "all" else envs))
    offers = offered(candidates)
    chosen = [s for s in dict.fromkeys(settings or [offers[0].setting])]
    for s in chosen:
        if s not in SETTINGS:
            raise UnknownName(f"unknown setting {s!r}; choose from {', '.join(SETTINGS)}")
    plan = Plan(
        envs=env_ids,
        customers=customers,
        suppliers=suppliers,
        repeats=repeats,
        conditions=((), *((c,) for c in clauses)) if ablation else (clauses,),
        settings=tuple(chosen),
        offers=tuple(offers),
        translator=translator,
        perform=perform,
        seeds=tuple(range(seed, seed + games)),
    )
    if plan.size > MAX_NEGOTIATIONS:
        raise BadArgument(f"{plan.size:,} negotiations asked for; one run plays at most {MAX_NEGOTIATIONS:,}")
    jobs = plan.jobs()
    if estimate:
        from games.experiments.negotiate import decisions, negotiation_phase
        from games.runner import estimate as run_estimate

        if out is None:
            raise BadArgument("estimate applies to a run into out (a stored sweep)", "estimate")
        return run_estimate(negotiation_phase(jobs, Path(out) / "jobs" / "negotiations.jsonl"), decisions, llm)
    drawn = () if out is None else _frontiers(frontiers)
    advance = progress or (lambda *a: None)
    played_now = unfinished = folder = None
    if out is None:
        tables = TableCache()
        runs = []
        advance("negotiating", 0, len(jobs))
        for job in jobs:
            runs.append(play_job(job, client=client, tables=tables).run)
            advance("negotiating", len(runs), len(jobs))
    else:
        from games.experiments.negotiate import negotiation_records, report, report_paths, write_report
        from games.runner import RunOptions

        out = Path(out)
        check_outputs(report_paths(out))  # refused now, not after the negotiations
        options = RunOptions(workers=workers, ray=ray, llm=llm, fail_on_error=fail_on_error)
        done, played_now, unfinished = negotiation_records(
            jobs, out / "jobs" / "negotiations.jsonl", options, advance, notice
        )
        jobs, runs = [j for j, _ in done], [r for _, r in done]
        folder = write_report(out, report(plan, jobs, runs, drawn), settings is not None)
    return Negotiations(
        plan=plan,
        jobs=tuple(jobs),
        runs=tuple(runs),
        summary=NegotiationSummary.of(runs),
        budgets={e: environment(e).budget for e in env_ids},
        folder=folder,
        played_now=played_now,
        unfinished=unfinished,
    )


def _frontiers(directory: Folder | None) -> tuple:
    """Figure 2's frontiers for Envs 3–6: a given set must have them; the shipped one may not yet."""
    from games.experiments.frontier import read_frontiers

    drawn = read_frontiers(synthetic_set(directory))
    if directory is not None and not drawn:
        raise BadData(
            f"frontiers: {directory} has no frontiers/frontiers.json; run `contractlang experiment frontier "
            f"{directory}` first"
        )
    return drawn


class Metrics(Rows):
    """`contractlang metrics`: a summary per role and policy over run records (ContractSim paper, App. C.6), and
    the floor rule set ([CS-14a]) they were all played under."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    roles: tuple[Any, ...]
    """A `RoleSummary` per role and policy, in order of first appearance."""
    floors: str
    """The floor rule set every record was played under ([CS-14a])."""

    def rows(self) -> list[dict]:
        """One row per role and policy: `utility.mean`, `compliance.mean`, …"""
        return [flat("", s.model_dump(mode="json")) for s in self.roles]

    def print_table(self, console=None) -> None:
        """Tables 7–10's columns as one rich table on `console` (default stdout)."""
        from games.contractsim.story import print_metrics

        print_metrics(list(self.roles), console)


@checked
def metrics(
    logs: Annotated[Sequence[Folder], Field(min_length=1)],
    allow_commands: Flag = False,
    convention: Text = "cs19",
    progress: Callable[..., None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> Metrics:
    """The ContractSim performance metrics (ContractSim paper, App. C.6) over the run records in `logs` (JSON
    lines of `run --json`): utilities, regret and compliant regret — each run replayed with the role played by
    RCC (same contract, environment, counterparty, seed and floor rule set) — compliance, defection, reciprocity.
    Amounts in Catering base units; scoring by `convention` ([CS-19], [CS-19a]). External agents (`cmd:`) the
    records name start in the replays only with `allow_commands`."""
    from contractlang.files import read_capped
    from games.contractsim.metrics import CONVENTIONS, performance_metrics
    from games.contractsim.play import read_run_records
    from solver.dp import TableCache

    if convention not in CONVENTIONS:
        raise UnknownName(f"unknown convention {convention!r}; choose from {', '.join(CONVENTIONS)}")
    runs = [r for path in logs for r in read_run_records(read_capped(Path(path)), str(path))]
    if not runs:
        raise BadData("no run records found")
    floors = sorted({r.floors for r in runs})
    if len(floors) > 1:
        raise BadData(
            f"the records were played under different floor rule sets [CS-14a]: {', '.join(floors)}; "
            "summarise each rule set's records apart"
        )
    if convention != "cs19" and any(r.contract_ir is None for r in runs):
        raise BadData(
            f"convention {convention} needs the contract's terms in every record; records from "
            "`run --json` of this version hold them"
        )
    summaries = performance_metrics(
        runs, TableCache(), progress or (lambda *a: None), notice or (lambda note: None), allow_commands, convention
    )
    return Metrics(roles=tuple(summaries), floors=floors[0])


@checked
def synth(
    out: Folder | None = None,
    starts: Annotated[int, Field(ge=1, le=1000, strict=True)] = 20,
    search_envs: SearchEnvs = (3, 4, 5, 6),
    rhos: Probabilities = (0.9, 0.8, 0.7, 0.6, 0.5),
    workers: Workers | None = None,
    ray: Text | None = None,
    progress: Progress = None,
):
    """The synthetic performance contracts (ContractSim paper, App. C.4) into `out` (default
    ./contractlang-out/synth, reusing the shipped set's finished jobs): base contracts by multi-start coordinate
    ascent in `search_envs`, reused in Envs 1–2, six contingency variants each, every one re-solved; E14 checked.
    The `SynthRun`; resumable."""
    from games.experiments.synth import SHIPPED, SynthPlan, synthesize

    reuse = SHIPPED if out is None else None
    folder = output_dir(out, None, "synth")
    plan = SynthPlan(starts=starts, search_envs=tuple(dict.fromkeys(search_envs)), rhos=tuple(dict.fromkeys(rhos)))
    return synthesize(folder, plan, workers, ray, progress, reuse)


class FrontierResult(Rows):
    """`experiment frontier`: the frontiers F1 and F2 per environment, where they were written, the pool jobs run
    now."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    frontiers: tuple[Any, ...]
    """A `Frontier` per environment: its F1 and F2 points and the pools they were drawn from."""
    folder: Path
    """Where the PNGs and the points were written."""
    ran: int
    """Pool jobs run now."""

    def rows(self) -> list[dict]:
        """One row per environment: pool sizes, frontier sizes, the best joint utility on each."""
        return [
            {"env": f.env, "pool_f1": f.pool_f1, "pool_f2": f.pool_f2, "f1": len(f.f1), "f2": len(f.f2)}
            | {
                f"best_{name}": max((p.joint_utility for p in pts), default=None)
                for name, pts in (("f1", f.f1), ("f2", f.f2))
            }
            for f in self.frontiers
        ]


@checked
def frontier(
    directory: Folder | None = None,
    out: Folder | None = None,
    envs: Envs | None = None,
    f2_seeds: Annotated[int, Field(ge=0, le=1000, strict=True)] = 8,
    workers: Workers | None = None,
    ray: Text | None = None,
    progress: Progress = None,
) -> FrontierResult:
    """Pareto frontiers F1 (grim only) and F2 (all contingencies) per environment [CS-35] (ContractSim paper,
    eq. 4) over contracts valued exactly: the `synth` searches' pool in Envs 3–6 (with the variants of
    `f2_seeds` grim-only contracts per P_sat band in F2's), an enumeration in Envs 1–2; a Figure-2 style PNG
    per environment and the points as JSON. Resumable."""
    from games.experiments.frontier import DETERMINISTIC, frontiers, pool_jobs, pool_records, write_report
    from games.experiments.synth import search_records, set_contracts
    from games.runner import shared_store

    out = output_dir(out, directory)
    directory = synthetic_set(directory)
    manifest, _ = set_contracts(directory)  # the frontiers draw on the searches; the set is checked whole all the same
    covered = manifest.plan.envs
    chosen = covered if envs is None else tuple(dict.fromkeys(envs))
    if any(e not in covered for e in chosen):
        raise BadData(f"envs: this contract set covers environments {', '.join(map(str, covered))}")
    searched = tuple(sorted({manifest.plan.terms_env(e) for e in chosen if e not in DETERMINISTIC}))
    search = search_records(directory, manifest.plan, searched)
    jobs = pool_jobs(search, chosen, f2_seeds)
    pools, ran = pool_records(
        jobs, out / "jobs" / "frontier.jsonl", workers, ray, progress, shared_store(directory, out, "frontier.jsonl")
    )
    found = frontiers(search, pools, chosen)
    folder = write_report(out, found, keep=tuple(e for e in covered if e not in chosen), source=directory)
    return FrontierResult(frontiers=tuple(found), folder=folder, ran=ran)


@checked
def seal(stores: Annotated[Sequence[Folder], Field(min_length=1)]) -> dict[str, int]:
    """Give every line of each job store written before stores carried checks its check, so runs read it again
    (lines sealed, by store): only for stores you trust, since nothing can tell an old store from one whose checks
    were removed."""
    from games.runner import seal_store

    return {str(path): seal_store(Path(path)) for path in stores}
