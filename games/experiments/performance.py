"""The performance experiment (ContractSim paper, App. B.2, App. C.6; the paper's Tables 1–2, 7–10 and Figure 4): a
user's agent — a built-in policy, an external program (`cmd:`) or an LLM (`llm:`) — plays each role against
the rational counterparties RCC, RC and RE on every synthetic contract, and is scored beside the rational
policies on the same contracts and seeds.

Regret's counterfactual τ^RCC (ContractSim paper, App. C.6: the same contract, environment, counterparty and seed with the role
played by RCC) is a game the rational experiment plays anyway, so it is read from that experiment's records
(`rational_records`, the same job store), never simulated again. Every agent game is a job of its own, so an
LLM run that stops half-way (a rate limit, a quota) resumes with the games it had finished.
"""

from __future__ import annotations

from functools import lru_cache, partial
from pathlib import Path

from contractlang.errors import UnknownName
from contractlang.files import make_folder, write_atomically
from contractlang.interpreter.rounds import DEFAULT_FLOORS, RecordedFloors
from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient, LlmModel, LlmUsage
from contractlang.render import relabel
from contractlang.vocab import Frozen
from games.agents import PY_PREFIX, AgentError, agent_name, check, model_of, roles_of, split_label
from games.contractsim.batch import play_batch
from games.contractsim.environments import PlayedIn
from games.contractsim.game import DECISIONS
from games.contractsim.metrics import RoleSummary, convention_line, output_name, summarise
from games.contractsim.play import RunRecord, play
from games.experiments.paper import PAPER_N, cell_text, paper_n, paper_tables, welch_p
from games.experiments.rational import (
    COLUMNS,
    COUNTERPARTIES,
    POLICIES,
    ROLES,
    SEED,
    TITLES,
    RationalJob,
    RationalRecord,
    TableRow,
    counterparty_name,
    is_slice,
    pairing,
    row_cells,
    table_lines,
    table_notes,
    table_row,
    tables,
)
from games.figures import pyplot, save_png, write_json
from games.runner import Phase, stored_records
from solver.dp import TableCache


def check_agents(seats: dict[str, tuple[str, ...]]) -> None:
    """`UnknownName` (or `AgentError`) for the first agent `play` cannot seat in one of its roles (`seats`: agent
    spec → roles, see games/agents.py); two agents under one label are a usage error."""
    agents = list(seats)
    for name, roles in seats.items():
        for role in roles:
            check(name, "contractsim", role, "agent")
    labels = [agent_name(a) for a in agents]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise AgentError(f"two agents are labelled {twice!r}; give each its own LABEL=SPEC")


def agent_key(agent) -> str:
    """How a job names an agent: a Python agent (an object, or a labelled `py:` spec) by its label, so a run from
    Python and one from the shell share its games; any other spec as given."""
    if not isinstance(agent, str):
        return agent_name(agent)
    label, spec = split_label(agent)
    return label if spec.startswith(PY_PREFIX) else agent


def seat_agents(given: list, role: str) -> tuple[dict[str, tuple[str, ...]], dict]:
    """(agent key → the roles it is seated in, the Python agents by key): each agent in those of the roles asked
    for (`role`, or both) that it says it plays (its `roles`; every role when it does not say)."""
    asked = ROLES if role == "both" else (role,)
    seats: dict[str, tuple[str, ...]] = {}
    objects = {}
    for agent in given:
        declared = roles_of(agent, "contractsim") or ROLES
        roles = tuple(r for r in asked if r in declared)
        if not roles:
            raise UnknownName(
                f"agent {agent_name(agent)!r} plays the {' and '.join(declared)} only, not the role asked for ({role})"
            )
        key = agent_key(agent)
        seats[key] = roles
        if key != agent:
            objects[key] = agent
    return seats, objects


def _model(agent: str):
    """The LLM model an agent spec names (after its label), or None."""
    return model_of(agent)


class Case(Frozen):
    """One environment–contract case of ContractSim paper, App. C.6 under one seed and floor rule set ([CS-14a]);
    `p_sat` is the manifest's (Figure 4's bins)."""

    contract: ContractSimIR
    env: int
    p_sat: float
    seed: int = SEED
    floors: RecordedFloors = DEFAULT_FLOORS

    @property
    def rational(self) -> RationalJob:
        """The rational experiment's job on this case: its nine games hold every τ^RCC this case needs."""
        return RationalJob(contract=self.contract, env=self.env, seed=self.seed, floors=self.floors)


class PerformanceJob(Frozen, PlayedIn):
    """One game: `agent` plays `role` against the rational `counterparty`."""

    contract: ContractSimIR
    env: int
    seed: int
    role: str
    counterparty: str
    agent: str
    setting: str | None = None  # the setting the game is told in (Table 11); None: the contract's own
    floors: RecordedFloors = DEFAULT_FLOORS  # the floor rule set the game is played under ([CS-14a])

    @property
    def needs_table(self) -> bool:
        """Whether a rational Supplier (RC or RCC, ContractSim paper, App. C.1) plays: the counterparty of an
        agent Customer, or the agent itself."""
        supplier = self.counterparty if self.role == "customer" else split_label(self.agent)[1]
        return supplier in ("rc", "rcc")

    @classmethod
    def of(cls, case: Case, role: str, counterparty: str, agent: str, setting: str | None = None) -> PerformanceJob:
        return cls(
            contract=case.contract,
            env=case.env,
            seed=case.seed,
            role=role,
            counterparty=counterparty,
            agent=agent,
            setting=setting,
            floors=case.floors,
        )


class PerformanceRecord(Frozen):
    job: PerformanceJob
    run: RunRecord


def run_performance(
    job: PerformanceJob, client: LlmClient | None = None, tables: TableCache | None = None, objects: dict | None = None
) -> PerformanceRecord:
    """The game of `job`: by the batch engine when both players are rational (the same game `play` plays,
    faster), else by `play`; an LLM agent calls the model through `client`, the one client its process's games
    share. A `setting` relabels the contract (`contractlang.render.relabel`: names, and money × the multiplier);
    the record's amounts stay in base units, so its rows compare with the Catering ones. `objects` are Python
    agents by label: the job names one by its label."""
    cache = tables or process_tables()
    env = job.environment
    contract = job.contract if job.setting in (None, job.contract.setting) else relabel(job.contract, job.setting)
    agent = (objects or {}).get(job.agent, job.agent)
    customer, supplier = pairing(job.role, agent, job.counterparty)
    if job.agent in POLICIES and agent == job.agent:
        run = play_batch(contract, env, customer, supplier, [job.seed], cache)[0]
    else:
        run = play(
            contract,
            env,
            customer,
            supplier,
            seed=job.seed,
            keep_log=False,
            tables=cache,
            llm=client if calls_model(job) else None,
        )
    return PerformanceRecord(job=job, run=run)


def calls_model(job: PerformanceJob) -> bool:
    """Whether the game waits on an LLM (its agent is one)."""
    return _model(job.agent) is not None


@lru_cache(maxsize=1)
def process_tables() -> TableCache:
    """One table cache per process (made in the worker, after the fork): its memory keeps the tables of the
    last contracts, and consecutive jobs play the same contract (`jobs_of`), so each table is read from disk
    about once per worker instead of once per game."""
    return TableCache()


def jobs_of(
    cases: list[Case], seats: dict[str, tuple[str, ...]], settings: tuple[str | None, ...] = (None,)
) -> list[PerformanceJob]:
    """Every game of each agent in each role it is seated in (`seats`: agent → roles), the games of one case
    together (see `process_tables`)."""
    return [
        PerformanceJob.of(case, role, other, agent, setting)
        for case in cases
        for agent, roles in seats.items()
        for setting in settings
        for role in roles
        for other in COUNTERPARTIES
    ]


def stored_seats(
    cases: list[Case], settings: tuple[str | None, ...], stores: list[Path]
) -> tuple[dict[str, tuple[str, ...]], dict[PerformanceJob, PerformanceRecord]]:
    """The agents `stores` hold games of on `cases` in `settings`, each with the roles it played there, and
    those games: a report covers every agent of the set, not only the one a run was asked for."""
    keys = {(c.contract, c.env, c.seed, c.floors) for c in cases}
    found: dict[PerformanceJob, PerformanceRecord] = {}
    for path in stores:
        for job, record in stored_records(path, PerformanceRecord, lambda r: r.job, "games").items():
            if (job.contract, job.env, job.seed, job.floors) in keys and job.setting in settings:
                found[job] = record
    seats: dict[str, set[str]] = {}
    for job in found:
        seats.setdefault(job.agent, set()).add(job.role)
    return {a: tuple(r for r in ROLES if r in roles) for a, roles in seats.items()}, found


def performance_phase(
    jobs: list[PerformanceJob], store_path: Path, shared: Path | None = None, objects: dict | None = None
) -> Phase:
    """The agent games as a phase of `games.runner.run_games`: the LLM ones wait on the network, and each
    starts once its case's rational job (its τ^RCC games and the contract's DP table) is stored. `objects`
    (Python agents by label) travel to the workers by pickle."""
    return Phase(
        "agent games",
        store_path,
        PerformanceRecord,
        partial(run_performance, objects=objects),
        jobs,
        shared,
        network=calls_model,
        calls=lambda record: record.run.llm_calls,
        needs=lambda job: RationalJob(contract=job.contract, env=job.env, seed=job.seed),
    )


def model_calls(job: PerformanceJob) -> list[tuple[LlmModel, int]]:
    """(model, calls) of the game's LLM agent, for a run's estimate; none when the agent is no LLM."""
    return [(_model(job.agent), decisions(job))] if calls_model(job) else []


def decisions(job: PerformanceJob) -> int:
    """Model calls the game's LLM agent makes, one per decision of its role (`DECISIONS`, ContractSim paper,
    App. B.2); an answer it must repeat adds calls."""
    return DECISIONS[job.role] if calls_model(job) else 0


class AgentUsage(Frozen):
    """An agent's LLM account over its games. Calls served from the recordings count like the others, so the
    totals are those of the games, however many runs it took to play them."""

    agent: str
    games: int
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None  # None when a model's price is unknown

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    @classmethod
    def of(cls, agent: str, runs: list[RunRecord]) -> AgentUsage:
        usage = LlmUsage.of(c for r in runs for c in r.llm_calls)
        return cls(agent=agent, games=len(runs), **usage.model_dump(exclude={"replayed"}))


class PaperRow(Frozen):
    """A published row (Tables 7–10): an LLM agent the paper evaluated or a rational policy."""

    table: int
    micro: bool
    role: str
    counterparty: str
    policy: str
    cells: tuple[str, ...]
    stats: tuple[tuple[float, float] | None, ...]  # (mean, SD) per cell, n = PAPER_N


class PerformanceReport(Frozen):
    """`performance/tables.json`: the agents' rows, the rational rows of the same cases, the paper's."""

    contracts: int
    seeds: tuple[int, ...]
    agents: tuple[str, ...]
    roles: tuple[str, ...]  # every role some agent is seated in
    rows: tuple[TableRow, ...]  # policy = the agent's label (`entries`)
    rational: tuple[TableRow, ...]
    paper: tuple[PaperRow, ...]  # Tables 7–10 as published: the three LLM agents' rows and the rational ones
    llm: tuple[AgentUsage, ...]  # the LLM agents only
    settings: tuple[str | None, ...] = (None,)  # each agent plays in each; None: the contracts' own
    convention: str = "cs19"  # how a breach bears on later weeks (metrics.CONVENTIONS)
    covers: str = ""  # which contracts of the set (`ContractSlice.describe`)
    floors: RecordedFloors = DEFAULT_FLOORS  # the floor rule set every game was played under ([CS-14a])
    errored: int = 0  # games left out: their model calls failed (a rerun retries them)
    limited: int = 0  # games left out: they reached a per-game limit
    seats: dict[str, tuple[str, ...]] = {}  # agent → the roles it is seated in; absent: every role of `roles`

    def entries(self) -> list[tuple[str, str, str | None]]:
        return entries(list(self.agents), self.settings)

    def seated(self, agent: str, role: str) -> bool:
        """Whether `agent` plays `role` in this report (an agent says which roles it plays)."""
        return role in self.seats.get(agent, self.roles)


def entries(agents: list[str], settings: tuple[str | None, ...]) -> list[tuple[str, str, str | None]]:
    """(label, agent, setting) of every agent in every setting: the label is the agent's name, with the setting
    in parentheses when one is chosen."""
    return [
        (agent_name(agent) if setting is None else f"{agent_name(agent)} ({setting})", agent, setting)
        for agent in agents
        for setting in settings
    ]


def report(
    cases: list[Case],
    seats: dict[str, tuple[str, ...]],
    games: dict[PerformanceJob, PerformanceRecord],
    rational: dict[RationalJob, RationalRecord],
    settings: tuple[str | None, ...] = (None,),
    convention: str = "cs19",
    covers: str = "",
    floors: str = DEFAULT_FLOORS,
    unfinished: dict | None = None,
) -> PerformanceReport:
    """Each agent row summarises its runs over the cases (ContractSim paper, App. C.6: equal case weight), with
    regret against the RCC runs of the rational records (ContractSim paper, App. C.6). Only this run's completed
    games count, in job order (the store may hold others, and holds them in the order they finished); the
    `unfinished` ones (errored, limited: `games.runner.Unfinished`) are counted apart. Regret in another setting
    is against the same RCC games: a setting changes names and money only (ContractSim paper, App. A.1–A.2), and
    the records are in base units. Each agent has rows for the roles it is seated in (`seats`: agent → roles)."""
    agents = list(seats)
    roles = [r for r in ROLES if any(r in seated for seated in seats.values())]
    labelled = entries(agents, settings)
    left = list((unfinished or {}).values())

    def played(role: str, other: str, agent: str, setting: str | None) -> list[tuple[Case, RunRecord]]:
        keys = [(c, PerformanceJob.of(c, role, other, agent, setting)) for c in cases]
        return [(c, games[k].run) for c, k in keys if k in games]

    def runs(role: str, other: str, agent: str, setting: str | None) -> list[RunRecord]:
        return [run for _, run in played(role, other, agent, setting)]

    rows = [
        table_row(
            role,
            other,
            label,
            runs(role, other, agent, setting),
            [rational[c.rational].run(*pairing(role, "rcc", other)) for c, _ in played(role, other, agent, setting)],
            convention,
        )
        for role in roles
        for other in COUNTERPARTIES
        for label, agent, setting in labelled
        if role in seats[agent]
    ]
    per_case = [rational[c.rational] for c in cases]
    llm = [
        AgentUsage.of(
            label, [run for role in roles for other in COUNTERPARTIES for run in runs(role, other, agent, setting)]
        )
        for label, agent, setting in labelled
        if _model(agent) is not None
    ]
    return PerformanceReport(
        contracts=len({(c.contract.name, c.env) for c in cases}),
        seeds=tuple(dict.fromkeys(c.seed for c in cases)),
        agents=tuple(agents),
        roles=tuple(roles),
        rows=tuple(rows),
        rational=tuple(r for r in tables(per_case, convention) if r.role in roles),
        paper=tuple(
            PaperRow(
                table=t.table,
                micro=t.aggregation == "micro",
                role=t.role,
                counterparty=r.counterparty,
                policy=r.agent,
                cells=tuple(cell_text(c) for c in r.cells),
                stats=r.cells,
            )
            for t in paper_tables()
            if t.role in roles
            for r in t.rows
        ),
        llm=tuple(llm),
        settings=settings,
        convention=convention,
        covers=covers,
        floors=floors,
        errored=sum(u.status == "errored" for u in left),
        limited=sum(u.status == "limited" for u in left),
        seats=seats,
    )


def _label(agent: str) -> str:
    return agent.replace("|", "\\|")  # a cmd: program line may hold a pipe


def _paper_label(policy: str) -> str:
    return f"{policy.upper() if policy in POLICIES else policy} (paper)"


SIGNIFICANCE = 0.05
MIN_N = 10
"""Fewer runs than this behind one of our cells and the p table says so (`n<10`) instead of a p."""


def differs(cell: str, n: int | None, stat: tuple[float, float] | None, column: str) -> str:
    """Welch's two-sample t-test of one of our cells (mean ± SD over `n` runs) against a published one in
    `column` (over PAPER_N cases, or the eligible ones a conditional rate's numbers imply: `paper_n`): its
    two-sided p, starred below SIGNIFICANCE; `n<MIN_N` below MIN_N runs; '–' where either side has no mean, no
    spread or no n."""
    mine = parse_cell(cell)
    theirs = None if stat is None else paper_n(column, stat)
    if mine is None or stat is None or n is None:
        return "–"
    if n < MIN_N:
        return f"n<{MIN_N}"
    p = None if theirs is None else welch_p(mine[0], mine[1], n, stat[0], stat[1], theirs)
    if p is None:
        return "–"
    return f"{p:.2g}*" if p < SIGNIFICANCE else f"{p:.2g}"


def cell_ns(s: RoleSummary, micro: bool) -> tuple[int | None, ...]:
    """The runs behind each of a row's cells, in `row_cells` order: a conditional rate's eligible runs only."""
    compliance = (
        (s.compliance_micro, s.conditional_micro, s.exploited_micro, s.tft_micro)
        if micro
        else (s.compliance, s.conditional, s.exploited, s.tft)
    )
    stats = (s.utility, s.compliant_utility, s.regret, s.compliant_regret, *compliance)
    stats += (s.defection, s.unilateral, s.reciprocal)
    return tuple(None if x is None else s.runs if x.n is None else x.n for x in stats)


def parse_cell(cell: str) -> tuple[float, float] | None:
    """(mean, SD) of a printed cell ('–' is None; a cell with no spread has SD 0)."""
    if cell == "–":
        return None
    mean, _, sd = cell.replace("−", "-").partition(" ± ")
    return float(mean), float(sd or 0.0)


def markdown(rep: PerformanceReport) -> str:
    """Tables 7–10 (macro and micro): in each counterparty block the agents' rows, the rational policies' rows
    on the same cases, and the paper's published rows (its three LLM agents and the rational policies); under
    each table, Welch's test of every agent row against every published row of its block; then the LLM agents'
    account."""
    out = [convention_line(rep.convention, rep.floors), *([f"Contracts: {rep.covers}."] if rep.covers else []), ""]
    notes = table_notes(rep.covers)
    for micro in (False, True):
        for role in rep.roles:
            lines, tests = [], []
            for other in COUNTERPARTIES:
                block = [r for r in rep.rows if (r.role, r.counterparty) == (role, other)]
                lines += [(other.upper(), _label(r.policy), row_cells(r.summary, micro)) for r in block]
                rational = [r for r in rep.rational if (r.role, r.counterparty) == (role, other)]
                lines += [
                    (other.upper(), f"{r.policy.upper()} (rational)", row_cells(r.summary, micro)) for r in rational
                ]
                paper = [p for p in rep.paper if (p.role, p.counterparty, p.micro) == (role, other, micro)]
                lines += [(other.upper(), _paper_label(p.policy), p.cells) for p in paper]
                tests += [
                    (
                        other.upper(),
                        f"{_label(r.policy)} vs {_paper_label(p.policy)}",
                        tuple(
                            differs(c, n, s, column)
                            for c, n, s, column in zip(
                                row_cells(r.summary, micro), cell_ns(r.summary, micro), p.stats, COLUMNS
                            )
                        ),
                    )
                    for r in block
                    for p in paper
                ]
            out += table_lines(
                f"## {TITLES[role, micro]}", role, f"{counterparty_name(role)} (counterparty)", lines, notes
            )
            out += table_lines(
                f"### {TITLES[role, micro]}: does each agent differ from the paper's rows? (p)",
                role,
                f"{counterparty_name(role)} (counterparty)",
                tests,
                (notes[0],) if is_slice(rep.covers) else (),
            )
    out.append(
        f"{rep.contracts} contracts × seeds {', '.join(map(str, rep.seeds))}. In each counterparty block: "
        "the agents, then the rational policies on the same contracts and seeds, then the paper's published "
        "rows (Tables 7–10: Claude Opus 5, Gemini 3.6 Flash, GPT–5.6-Sol and the rational policies), marked "
        "(paper). Regret is against the RCC game on the same contract, environment, counterparty and seed "
        "(ContractSim paper, App. C.6). The p tables give the two-sided p of Welch's two-sample t-test from summary statistics "
        f"(each cell's mean and SD over the runs behind it, against the paper's over its {PAPER_N} cases; for "
        "Cond., Expl., Uni. and Rec., rates over the eligible runs only, the paper's n is the smallest its "
        "printed mean and SD imply for 0/1 outcomes, e.g. 66.7 ± 57.7 is 2 of 3, and '–' where they imply "
        f"none); * marks p < {SIGNIFICANCE}; n<{MIN_N} marks a cell of ours over fewer than {MIN_N} runs, too "
        "few for a p; '–' a cell either side leaves undefined or where neither varies."
    )
    if rep.errored or rep.limited:
        out.append(
            f"Completed games only: {rep.errored} errored (their model calls failed; a rerun of the same "
            f"command retries them) and {rep.limited} stopped at a per-game limit are left out of every row."
        )
    if rep.settings != (None,):
        out += setting_table(rep)
    if rep.llm:
        out += [
            "",
            "## LLM usage",
            "",
            "| Agent | Games | Calls | Failed | Input tokens | Output tokens | "
            "Cache read | Cache write | Total tokens | Cost (USD) |",
            "|---|" + "---|" * 9,
        ]
        out += [
            f"| {_label(u.agent)} | {u.games} | {u.calls} | {u.failed} | {u.input_tokens:,} | "
            f"{u.output_tokens:,} | {u.cache_read_tokens:,} | {u.cache_write_tokens:,} | {u.total_tokens:,} | "
            f"{'unknown' if u.cost_usd is None else f'{u.cost_usd:.4f}'} |"
            for u in rep.llm
        ]
    return "\n".join(out) + "\n"


TABLE11_PAYOFFS = ("utility", "compliant_utility", "regret", "compliant_regret")
TABLE11_RATES = ("compliance", "conditional", "exploited", "tft", "defection", "unilateral", "reciprocal")


def setting_table(rep: PerformanceReport) -> list[str]:
    """The paper's Table 11 layout (setting robustness): per agent and setting, each role's payoffs (U, C-U, R,
    C-R; base units) as the mean over the RCC, RC and RE counterparties, then the behavioural rates (%, macro,
    ContractSim paper, App. C.6) pooled over the roles and counterparties as the mean of those rows' means."""

    def mean(values: list) -> str:
        values = [v for v in values if v is not None]
        return f"{sum(values) / len(values):.1f}" if values else "–"

    def stat(row: TableRow, key: str, scale: float = 1.0) -> float | None:
        value = getattr(row.summary, key)
        return None if value is None or value.mean is None else scale * value.mean

    heads = [f"{role.capitalize()} {name}" for role in rep.roles for name in ("U", "C-U", "R", "C-R")]
    heads += ["Compl. %", "Cond. %", "Exploit. %", "TFT %", "Defect. %", "Unilat. %", "Recip. %"]
    out = [
        "",
        "## Table 11 — setting robustness",
        "",
        "| Agent | Setting | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for label, agent, setting in rep.entries():
        mine = [r for r in rep.rows if r.policy == label]
        cells = [mean([stat(r, key) for r in mine if r.role == role]) for role in rep.roles for key in TABLE11_PAYOFFS]
        cells += [mean([stat(r, key, 100.0) for r in mine]) for key in TABLE11_RATES]
        out.append(f"| {_label(agent_name(agent))} | {setting} | " + " | ".join(cells) + " |")
    return out


# --- Figure 4 ------------------------------------------------------------------------------------------------

P_SAT_EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
P_SAT_BINS = ("<0.5", "0.5–0.6", "0.6–0.7", "0.7–0.8", "0.8–0.9", "0.9–0.95", "≥0.95")
"""The synthetic targets ρ ∈ {0.5, …, 0.9} (ContractSim paper, App. C.4), and 0.95, the satisfaction threshold [CS-26]."""


def p_sat_bin(p_sat: float) -> str:
    return P_SAT_BINS[sum(p_sat >= edge for edge in P_SAT_EDGES)]


class FigureBin(Frozen):
    label: str
    runs: int
    compliance: float | None  # pooled-week (micro) compliance, eq. 57
    unilateral: (
        float | None
    )  # run-level unilateral defection (ContractSim paper, App. C.6); None when no run had the opportunity


class FigureSeries(Frozen):
    policy: str
    rational: bool
    role: str
    counterparty: str
    axis: str  # "p_sat" or "contingencies"
    bins: tuple[FigureBin, ...]


def figure4(
    cases: list[Case],
    rep: PerformanceReport,
    games: dict[PerformanceJob, PerformanceRecord],
    rational: dict[RationalJob, RationalRecord],
) -> list[FigureSeries]:
    """The paper's Figure 4 data (Appendix D.4: pooled-week compliance beside run-level unilateral defection)
    for every agent and rational policy, role and counterparty: binned by the contract's P_sat, and by its
    number of contingency clauses (S, PD, RO: CC(ω) of ContractSim paper, App. C.5)."""
    keys = {
        "p_sat": [p_sat_bin(c.p_sat) for c in cases],
        "contingencies": [str(c.contract.contingencies.explicit_count) for c in cases],
    }
    order = {"p_sat": P_SAT_BINS, "contingencies": ("0", "1", "2", "3")}
    out = []
    for role in rep.roles:
        for other in COUNTERPARTIES:
            runs = {
                label: (False, [games.get(PerformanceJob.of(c, role, other, agent, setting)) for c in cases])
                for label, agent, setting in rep.entries()
                if rep.seated(agent, role)
            }
            runs.update(
                {
                    own.upper(): (True, [rational[c.rational].run(*pairing(role, own, other)) for c in cases])
                    for own in POLICIES
                }
            )
            for policy, (is_rational, played) in runs.items():
                played = [r.run if isinstance(r, PerformanceRecord) else r for r in played]
                for axis, key in keys.items():
                    bins = []
                    for label in order[axis]:
                        chosen = [r for r, k in zip(played, key) if k == label and r is not None]
                        if chosen:
                            s = summarise(chosen, role, convention=rep.convention)
                            bins.append(
                                FigureBin(
                                    label=label,
                                    runs=len(chosen),
                                    compliance=s.compliance_micro.mean,
                                    unilateral=s.unilateral.mean,
                                )
                            )
                    out.append(
                        FigureSeries(
                            policy=policy,
                            rational=is_rational,
                            role=role,
                            counterparty=other,
                            axis=axis,
                            bins=tuple(bins),
                        )
                    )
    return out


class Figure4(Frozen):
    """`performance/figure4.json`."""

    series: tuple[FigureSeries, ...]


def plot_figure4(series: list[FigureSeries], path: Path, counterparty: str = "rcc") -> None:
    save_png(figure4_plot(series, counterparty), path)


MARKERS = "osD^vP*X"


def figure4_plot(series: list[FigureSeries], counterparty: str = "rcc"):
    """Compliance (top) and unilateral defection (bottom) in percent against the P_sat bin and the number of
    contingencies, for each role, against `counterparty` (the JSON holds every counterparty). Each policy has
    its own marker and is shifted a little sideways, so that policies with equal values (RC and RCC often are)
    stay visible side by side; the legend is one row under the panels, over no data."""
    plt = pyplot()
    roles = list(dict.fromkeys(s.role for s in series))
    policies = list(dict.fromkeys(s.policy for s in series))
    shift = {p: (i - (len(policies) - 1) / 2) * min(0.08, 0.5 / len(policies)) for i, p in enumerate(policies)}
    axes_order = (
        ("p_sat", P_SAT_BINS, "P_sat of the contract"),
        ("contingencies", ("0", "1", "2", "3"), "contingency clauses (S, PD, RO)"),
    )
    fig, grid = plt.subplots(
        2, 2 * len(roles), figsize=(4.2 * 2 * len(roles), 7), dpi=100, squeeze=False, layout="constrained"
    )
    for col_role, role in enumerate(roles):
        for col_axis, (axis, labels, xlabel) in enumerate(axes_order):
            col = 2 * col_role + col_axis
            shown = [s for s in series if (s.role, s.counterparty, s.axis) == (role, counterparty, axis)]
            present = [label for label in labels if any(b.label == label for s in shown for b in s.bins)]
            for row, metric in enumerate(("compliance", "unilateral")):
                ax = grid[row][col]
                for s in shown:
                    points = [
                        (present.index(b.label) + shift[s.policy], getattr(b, metric))
                        for b in s.bins
                        if getattr(b, metric) is not None
                    ]
                    if points:
                        ax.plot(
                            [x for x, _ in points],
                            [100 * y for _, y in points],
                            "--" if s.rational else "-",
                            marker=MARKERS[policies.index(s.policy) % len(MARKERS)],
                            color=f"C{policies.index(s.policy)}",
                            mfc="none" if s.rational else None,
                            label=s.policy,
                        )
                ax.set_xticks(range(len(present)), present, fontsize=8)
                ax.set_xlim(-0.5, max(len(present), 1) - 0.5)
                ax.set_ylim(-5, 105)
                ax.grid(alpha=0.3)
                what = "compliance (micro) %" if metric == "compliance" else "unilateral defection %"
                ax.set_ylabel(f"{role} {what}", fontsize=8)
                if row == 1:
                    ax.set_xlabel(xlabel, fontsize=8)
    handles, labels = grid[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(
        f"Figure 4 — against {counterparty.upper()} counterparties (every counterparty in figure4.json)", fontsize=10
    )
    return fig


def report_paths(out: Path, convention: str, floors: str = DEFAULT_FLOORS) -> tuple[Path, Path, Path, Path]:
    """`out/performance/`: tables.json, tables.md, figure4.json and figure4.png (named `tables.paper-tables.md`
    and so on under that convention or another floor rule set: `output_name`)."""
    return tuple(
        out / "performance" / output_name(name, convention, floors)
        for name in ("tables.json", "tables.md", "figure4.json", "figure4.png")
    )


def write_report(out: Path, rep: PerformanceReport, series: list[FigureSeries]) -> Path:
    """The report at its `report_paths`, each file written whole from the records in job order, so a resumed run
    writes the same bytes; returns the folder."""
    tables_json, tables_md, figure_json, figure_png = report_paths(out, rep.convention, rep.floors)
    make_folder(tables_json.parent)
    write_json(tables_json, rep)
    write_atomically(tables_md, markdown(rep))
    write_json(figure_json, Figure4(series=tuple(series)))
    plot_figure4(series, figure_png)
    return tables_json.parent
