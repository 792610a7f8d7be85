"""The negotiation experiment (ContractSim paper, Sec. 3, App. C.5, Sec. 4.2; the paper's Figures 2, 3, 5, 11): every
ordered Customer × Supplier pairing of the given agents, in every environment, `repeats` times (the paper: 3 ×
3 × 3 × 6 = 162 negotiations), under each prompt-guidance condition and setting asked for.

Every negotiation is a job of `games.runner.run_games`, so a run written into a directory resumes where it
stopped and a rerun plays nothing twice; the tables and figures are computed from the records in job order, so
a resumed run writes the same bytes as an uninterrupted one.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import computed_field

from contractlang.files import make_folder, write_atomically
from contractlang.ir import ContractSimIR
from contractlang.llm import LlmClient
from contractlang.render import relabel
from contractlang.vocab import SETTINGS, Frozen
from games.agents import model_of
from games.contractsim.environments import environment
from games.contractsim.game import DECISIONS
from games.contractsim.negotiation import EPS, MAX_ROUNDS
from games.contractsim.session import NegotiatedRun, negotiate_and_perform
from games.experiments.frontier import DETERMINISTIC, Frontier, draw, frontiers
from games.experiments.performance import process_tables
from games.figures import pyplot, save_png, write_json
from games.runner import Phase, Progress, RunOptions, run_games
from solver.dp import TableCache

ROLES = ("customer", "supplier")
CONTROL = "control"
MAX_NEGOTIATIONS = 100_000
"""A bound on one command's jobs: the paper's experiment is 162, its ablations and settings a few times that."""


class NegotiationJob(Frozen):
    """One negotiation and the performance games on its agreement: everything its record depends on."""

    env: int
    customer: str
    supplier: str
    repeat: int
    guidance: tuple[str, ...]
    setting: str
    offers: tuple[ContractSimIR, ...]  # the scripted Supplier's candidates, in `setting`
    translator: str
    perform: tuple[str, str]
    seeds: tuple[int, ...]

    @property
    def condition(self) -> str:
        return "+".join(self.guidance) or CONTROL


class NegotiationJobRecord(Frozen):
    job: NegotiationJob
    run: NegotiatedRun


class Plan(Frozen):
    """What one `negotiate` command plays: the job grid, in the order its records are reported."""

    envs: tuple[int, ...]
    customers: tuple[str, ...]
    suppliers: tuple[str, ...]
    repeats: int
    conditions: tuple[tuple[str, ...], ...]  # guidance per condition; () is the control
    settings: tuple[str, ...]
    offers: tuple[ContractSimIR, ...]  # in their own setting; relabelled per setting
    translator: str
    perform: tuple[str, str]
    seeds: tuple[int, ...]

    @property
    def size(self) -> int:
        """How many jobs `jobs` makes, counted without making them."""
        return (
            len(self.conditions)
            * len(self.settings)
            * len(self.envs)
            * len(self.customers)
            * len(self.suppliers)
            * self.repeats
        )

    def jobs(self) -> list[NegotiationJob]:
        out = []
        for guidance in self.conditions:
            for setting in self.settings:
                offers = tuple(ir if ir.setting == setting else relabel(ir, setting) for ir in self.offers)
                out += [
                    NegotiationJob(
                        env=env,
                        customer=c,
                        supplier=s,
                        repeat=r,
                        guidance=guidance,
                        setting=setting,
                        offers=offers,
                        translator=self.translator,
                        perform=self.perform,
                        seeds=self.seeds,
                    )
                    for env in self.envs
                    for c in self.customers
                    for s in self.suppliers
                    for r in range(self.repeats)
                ]
        return out


def play_job(
    job: NegotiationJob, client: LlmClient | None = None, tables: TableCache | None = None
) -> NegotiationJobRecord:
    """The negotiation of `job`; LLM negotiators, translators and performers call the model through `client`,
    the one client its process's games share."""
    run = negotiate_and_perform(
        environment(job.env),
        job.customer,
        job.supplier,
        list(job.offers),
        tables or process_tables(),
        job.translator,
        job.perform,
        job.seeds,
        client,
        job.guidance,
        job.repeat,
    )
    return NegotiationJobRecord(job=job, run=run)


def calls_model(job: NegotiationJob) -> bool:
    """Whether the negotiation waits on an LLM (a negotiator, the translator or a performer is one)."""
    return any(model_of(name) is not None for name in (job.customer, job.supplier, job.translator, *job.perform))


def llm_calls(record: NegotiationJobRecord) -> tuple:
    """Every model call of a negotiation and of the performance games on its agreement."""
    return record.run.negotiation.llm_calls + tuple(c for r in record.run.performances for c in r.llm_calls)


def negotiation_phase(jobs: list[NegotiationJob], store_path: Path) -> Phase:
    """The negotiations as a phase of `games.runner.run_games`, the LLM ones waiting on the network."""
    return Phase("negotiations", store_path, NegotiationJobRecord, play_job, jobs, network=calls_model, calls=llm_calls)


def decisions(job: NegotiationJob) -> list:
    """(model, calls) of each LLM of the negotiation, from its length: a negotiator speaks in every other of up
    to MAX_ROUNDS rounds, half of which an agreement usually leaves unplayed; the translator reads each
    proposal (about one a turn of the Supplier's); a performer takes its role's `DECISIONS` a game."""
    turns = MAX_ROUNDS // 4
    models = [
        (job.customer, turns),
        (job.supplier, turns),
        (job.translator, turns),
        (job.perform[0], DECISIONS["customer"] * len(job.seeds)),
        (job.perform[1], DECISIONS["supplier"] * len(job.seeds)),
    ]
    return [(model_of(name), n) for name, n in models if model_of(name) is not None]


def negotiation_records(
    jobs: list[NegotiationJob], store_path: Path, options: RunOptions, progress: Progress | None, notice=None
) -> tuple[list[tuple[NegotiationJob, NegotiatedRun]], int, int]:
    """Every completed job and its run, in job order, from the store or played now (and appended to it); how
    many were played now; how many errored or were limited (left out, see `games.runner.run_games`)."""
    [played] = run_games([negotiation_phase(jobs, store_path)], options, progress, notice)
    return ([(j, played.records[j].run) for j in jobs if j in played.records], played.played, len(played.unfinished))


# --- ContractSim paper, App. C.5 metrics by role --------------------------------------------------------------------------------------


def _mean(values: list) -> float | None:
    return sum(values) / len(values) if values else None


class RoleMetrics(Frozen):
    """ContractSim paper, App. C.5 for the negotiations in which an agent (or a group of them) held `role`. Proposal feasibility is
    pooled over the role's proposals; the others average over the agreed negotiations. Gains in Catering base
    dollars, whatever the setting (the paper's tables)."""

    negotiations: int
    agreed: int
    proposal_feasibility: float | None  # PF = Σ_h Σ_{k∈J_i(h)} Feas / Σ_h #J_i(h)
    acceptance_regret: float | None  # mean AR_i(h)
    mutual_benefit: float | None  # mean MB(ω)
    p_sat: float | None
    meets_threshold: float | None  # share of agreements with P_sat ≥ 0.95 [CS-26]
    completeness: float | None
    contingencies: float | None  # mean CC(ω)
    gain: float | None  # mean G_i(ω) = U_i(ω) − u_i(⊥)

    @classmethod
    def of(cls, runs: list[tuple[NegotiationJob, NegotiatedRun]], role: str) -> RoleMetrics:
        made = [r.metrics.feasible_proposals[role] for _, r in runs]
        agreed = [(j, r.metrics) for j, r in runs if r.metrics.agreed]
        multiplier = {j.setting: SETTINGS[j.setting].multiplier for j, _ in agreed}
        total = sum(n for _, n in made)
        return cls(
            negotiations=len(runs),
            agreed=len(agreed),
            proposal_feasibility=sum(f for f, _ in made) / total if total else None,
            acceptance_regret=_mean([float(m.acceptance_regret[role]) for _, m in agreed]),
            mutual_benefit=_mean([float(m.mutual_benefit) for _, m in agreed]),
            p_sat=_mean([m.p_sat for _, m in agreed]),
            meets_threshold=_mean([float(m.p_sat >= 0.95 - EPS) for _, m in agreed]),
            completeness=_mean([m.completeness for _, m in agreed]),
            contingencies=_mean([float(m.contingency_count) for _, m in agreed]),
            gain=_mean([getattr(m, f"gain_{role}") / multiplier[j.setting] for j, m in agreed]),
        )


FIGURE_METRICS = (
    ("proposal_feasibility", "proposal feasibility %"),
    ("acceptance_regret", "acceptance regret %"),
    ("mutual_benefit", "mutually beneficial %"),
    ("p_sat", "P_sat %"),
)
"""The four panels of the paper's Figure 3 (and of Figure 5's negotiation half)."""


class AgentBar(Frozen):
    role: str
    agent: str
    metrics: RoleMetrics


class Figure3(Frozen):
    """`figure3.json`: ContractSim paper, App. C.5 by role and agent (the agent holding that role), over the plan's first condition and
    setting."""

    condition: str
    setting: str
    bars: tuple[AgentBar, ...]


class ConditionBar(Frozen):
    condition: str
    role: str
    metrics: RoleMetrics


class Figure5(Frozen):
    """`figure5.json`: ContractSim paper, App. C.5 by role under each guidance condition, all agents pooled; `control` appends no
    clause."""

    setting: str
    bars: tuple[ConditionBar, ...]


class PairingPoint(Frozen):
    """One pairing's agreed contracts in one environment, averaged over its repeats (Catering base dollars)."""

    customer: str
    supplier: str
    negotiations: int
    agreed: int
    u_customer: float | None
    u_supplier: float | None
    p_sat: float | None


class FrontierPanel(Frozen):
    env: int
    frontier: Frontier | None  # None: no frontier for this environment in the synthetic set (`experiment frontier`)

    @computed_field
    @property
    def exact(self) -> bool:
        """Enumerated (Envs 1–2) rather than drawn from a synthetic set's pool."""
        return self.env in DETERMINISTIC

    pairings: tuple[PairingPoint, ...]


class Figure2(Frozen):
    """`figure2.json`: per environment, the F1/F2 frontiers (exact in Envs 1–2, `frontier.enumeration`;
    elsewhere those `experiment frontier` drew from a synthetic set's pool) and each pairing's mean agreed
    (U_Cust, U_Supp, P_sat)."""

    condition: str
    setting: str
    panels: tuple[FrontierPanel, ...]


class SettingRow(Frozen):
    setting: str
    customer: RoleMetrics
    supplier: RoleMetrics


class NegotiationReport(Frozen):
    """`negotiation/tables.json`."""

    negotiations: int
    figure3: Figure3
    figure5: Figure5 | None  # when the plan holds guidance conditions beside the control
    figure2: Figure2
    settings: tuple[SettingRow, ...]  # Table 11 / Figure 11: one row per setting of the plan, first condition


def report(
    plan: Plan, jobs: list[NegotiationJob], runs: list[NegotiatedRun], drawn: tuple[Frontier, ...] = ()
) -> NegotiationReport:
    """The tables and figures of a negotiation sweep; `drawn` are a synthetic set's frontiers (`read_frontiers`),
    which Figure 2 shows in the stochastic environments."""
    pairs = list(zip(jobs, runs))
    first, setting = plan.conditions[0], plan.settings[0]

    def chosen(condition=first, setting_=setting) -> list[tuple[NegotiationJob, NegotiatedRun]]:
        return [(j, r) for j, r in pairs if j.guidance == condition and j.setting == setting_]

    main = chosen()
    agents = {"customer": plan.customers, "supplier": plan.suppliers}
    bars = [
        AgentBar(
            role=role, agent=agent, metrics=RoleMetrics.of([(j, r) for j, r in main if getattr(j, role) == agent], role)
        )
        for role in ROLES
        for agent in agents[role]
    ]
    figure5 = None
    if len(plan.conditions) > 1:
        figure5 = Figure5(
            setting=setting,
            bars=tuple(
                ConditionBar(condition="+".join(g) or CONTROL, role=role, metrics=RoleMetrics.of(chosen(g), role))
                for g in plan.conditions
                for role in ROLES
            ),
        )
    panels = []
    for env in plan.envs:
        points = []
        for c in plan.customers:
            for s in plan.suppliers:
                played = [r for j, r in main if (j.env, j.customer, j.supplier) == (env, c, s)]
                agreed = [r.metrics for r in played if r.metrics.agreed]
                m = SETTINGS[setting].multiplier
                budget = environment(env).budget
                points.append(
                    PairingPoint(
                        customer=c,
                        supplier=s,
                        negotiations=len(played),
                        agreed=len(agreed),
                        u_customer=_mean([a.gain_customer / m + budget for a in agreed]),
                        u_supplier=_mean([a.gain_supplier / m for a in agreed]),
                        p_sat=_mean([a.p_sat for a in agreed]),
                    )
                )
        frontier = (
            frontiers([], [], (env,))[0] if env in DETERMINISTIC else next((f for f in drawn if f.env == env), None)
        )
        panels.append(FrontierPanel(env=env, frontier=frontier, pairings=tuple(points)))
    condition = "+".join(first) or CONTROL
    return NegotiationReport(
        negotiations=len(runs),
        figure3=Figure3(condition=condition, setting=setting, bars=tuple(bars)),
        figure5=figure5,
        figure2=Figure2(condition=condition, setting=setting, panels=tuple(panels)),
        settings=tuple(
            SettingRow(
                setting=s,
                customer=RoleMetrics.of(chosen(first, s), "customer"),
                supplier=RoleMetrics.of(chosen(first, s), "supplier"),
            )
            for s in plan.settings
        ),
    )


# --- tables.md --------------------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _label(name: str) -> str:
    return name.replace("|", "\\|")  # a cmd: program line may hold a pipe


METRIC_COLUMNS = (
    "Negotiations | Agreed | Feasible proposals % | Acceptance regret % | Mutually beneficial % | "
    "P_sat % | P_sat ≥ 0.95 % | Completeness % | Contingencies | Expected gain"
)


def _cells(m: RoleMetrics) -> str:
    return (
        f"{m.negotiations} | {m.agreed} | {_pct(m.proposal_feasibility)} | {_pct(m.acceptance_regret)} | "
        f"{_pct(m.mutual_benefit)} | {_pct(m.p_sat)} | {_pct(m.meets_threshold)} | {_pct(m.completeness)} | "
        f"{_num(m.contingencies)} | {_num(m.gain)}"
    )


def markdown(rep: NegotiationReport, setting_given: bool) -> str:
    """Figure 3's numbers by role and agent; Figure 5's by condition (with guidance conditions); Table 11's
    layout for negotiation (Figure 11) side by side per setting when `--setting` was given."""
    rule = "|---|---|" + "---|" * 10
    f3 = rep.figure3
    out = [
        f"## Negotiation metrics by role and agent (Figure 3; {f3.condition}, {f3.setting})",
        "",
        f"| Role | Agent | {METRIC_COLUMNS} |",
        rule,
    ]
    out += [f"| {b.role} | {_label(b.agent)} | {_cells(b.metrics)} |" for b in f3.bars]
    if rep.figure5 is not None:
        out += [
            "",
            f"## Prompt guidance against the control (Figure 5; {rep.figure5.setting})",
            "",
            f"| Condition | Role | {METRIC_COLUMNS} |",
            rule,
        ]
        out += [f"| {b.condition} | {b.role} | {_cells(b.metrics)} |" for b in rep.figure5.bars]
    if setting_given:
        out += [
            "",
            f"## Setting robustness (Table 11 / Figure 11; {f3.condition})",
            "",
            f"| Setting | Role | {METRIC_COLUMNS} |",
            rule,
        ]
        out += [f"| {row.setting} | {role} | {_cells(getattr(row, role))} |" for row in rep.settings for role in ROLES]
    out += [
        "",
        f"{rep.negotiations} negotiations. Feasibility is pooled over the role's proposals; the other "
        "metrics average over the agreed negotiations in which the agent held the role (ContractSim paper, App. C.5). Expected gains "
        "are in Catering base dollars in every setting.",
    ]
    return "\n".join(out) + "\n"


# --- figures ----------------------------------------------------------------------------------------------------


def _bar_panels(
    title: str, groups: dict[str, list[str]], series: dict[str, dict[tuple[str, str], RoleMetrics]], path: Path
) -> None:
    """One panel per ContractSim paper, App. C.5 metric (columns) and role (rows): a bar group per `groups[role]` entry, one bar per
    series (`series[name][role, group]`); a metric with no value (nothing agreed) draws no bar."""
    plt = pyplot()
    fig, grid = plt.subplots(
        len(ROLES), len(FIGURE_METRICS), figsize=(3.6 * len(FIGURE_METRICS), 6.0), dpi=100, squeeze=False
    )
    width = 0.8 / len(series)
    for row, role in enumerate(ROLES):
        for col, (key, what) in enumerate(FIGURE_METRICS):
            ax = grid[row][col]
            for k, (name, values) in enumerate(series.items()):
                heights = [100 * (getattr(values[role, g], key) or 0.0) for g in groups[role]]
                ax.bar(
                    [g + (k - (len(series) - 1) / 2) * width for g in range(len(groups[role]))],
                    heights,
                    width,
                    label=name,
                )
            ax.set_xticks(range(len(groups[role])), [_short(g) for g in groups[role]], fontsize=7, rotation=20)
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3, axis="y")
            ax.set_ylabel(f"{role} {what}", fontsize=8)
    if len(series) > 1:
        grid[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_png(fig, path)


def _short(name: str) -> str:
    return name if len(name) <= 24 else name[:23] + "…"  # a cmd: program line can be long


def plot_figure3(figure: Figure3, path: Path) -> None:
    """Feasibility, acceptance regret, mutual benefit and P_sat by role (rows) and agent (bars)."""
    groups = {role: [b.agent for b in figure.bars if b.role == role] for role in ROLES}
    _bar_panels(
        f"Figure 3 — negotiation metrics by role and agent ({figure.condition}, {figure.setting})",
        groups,
        {"agent": {(b.role, b.agent): b.metrics for b in figure.bars}},
        path,
    )


def plot_figure5(figure: Figure5, path: Path) -> None:
    """One bar group per guidance clause: the control's value beside the clause's, for every metric and role."""
    by = {(b.condition, b.role): b.metrics for b in figure.bars}
    clauses = [c for c in dict.fromkeys(b.condition for b in figure.bars) if c != CONTROL]
    series = {
        CONTROL: {(role, c): by[CONTROL, role] for role in ROLES for c in clauses},
        "with the clause": {(role, c): by[c, role] for role in ROLES for c in clauses},
    }
    _bar_panels(
        f"Figure 5 — each prompt-guidance clause against the control ({figure.setting})",
        {role: clauses for role in ROLES},
        series,
        path,
    )


def plot_figure2(figure: Figure2, path: Path) -> None:
    """One panel per environment: its F1/F2 frontiers (exact in Envs 1–2, a synthetic set's elsewhere) or, when
    that set has none for it, the agreed points alone; each pairing's mean agreed contract as a black diamond
    labelled with its P_sat."""
    plt = pyplot()
    cols = min(3, len(figure.panels))
    rows = -(-len(figure.panels) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(5.0 * cols, 4.0 * rows), dpi=100, squeeze=False)
    for ax in grid.flat[len(figure.panels) :]:
        ax.set_visible(False)
    for ax, panel in zip(grid.flat, figure.panels):
        if panel.frontier is not None:
            draw(ax, panel.frontier)
            source = "exact" if panel.exact else "synthetic set's"
            ax.set_title(f"Environment {panel.env}: {source} F1/F2 frontiers, P_sat ≥ 0.95", fontsize=9)
        else:
            ax.plot([environment(panel.env).budget], [0], "kx", label="disagreement (B, 0)")
            ax.set_xlabel("U_Cust")
            ax.set_ylabel("U_Supp")
            ax.grid(alpha=0.3)
            ax.set_title(
                f"Environment {panel.env}: agreed contracts only (the synthetic set has no frontier\n"
                "for it yet: `experiment frontier`)",
                fontsize=9,
            )
        shown = [p for p in panel.pairings if p.agreed]
        ax.plot([p.u_customer for p in shown], [p.u_supplier for p in shown], "kD", ms=5, label="pairings (mean)")
        # pairings often agree on the same contract: numbers at the points, names in a key, so no label
        # covers another
        for number, p in enumerate(shown, start=1):
            ax.annotate(
                str(number),
                (p.u_customer, p.u_supplier),
                fontsize=7,
                xytext=(4, 2 + 7 * (number - 1)),
                textcoords="offset points",
            )
        key = "\n".join(
            f"{n}: {_short(p.customer)} × {_short(p.supplier)}, P_sat {p.p_sat:.2f}"
            for n, p in enumerate(shown, start=1)
        )
        if key:
            ax.text(
                0.02,
                0.02,
                key,
                transform=ax.transAxes,
                fontsize=6,
                va="bottom",
                bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8},
            )
        ax.legend(fontsize=7)
    fig.suptitle(
        f"Figure 2 — agreed contracts against the Pareto frontiers ({figure.condition}, {figure.setting}; "
        "Catering base dollars)",
        fontsize=10,
    )
    fig.tight_layout()
    save_png(fig, path)


def report_paths(out: Path) -> tuple[Path, ...]:
    """The files every report writes in `out/negotiation/` (figure5's only with guidance conditions)."""
    return tuple(
        out / "negotiation" / name
        for name in ("tables.json", "tables.md", "figure2.json", "figure2.png", "figure3.json", "figure3.png")
    )


def write_report(out: Path, rep: NegotiationReport, setting_given: bool) -> Path:
    """`out/negotiation/`: tables.md, tables.json, figure2/3 (and figure5 with guidance conditions) as PNG and
    JSON, each written whole from the records in job order; returns the folder."""
    folder = out / "negotiation"
    make_folder(folder)
    write_json(folder / "tables.json", rep)
    write_atomically(folder / "tables.md", markdown(rep, setting_given))
    for name, figure, plot in (
        ("figure2", rep.figure2, plot_figure2),
        ("figure3", rep.figure3, plot_figure3),
        ("figure5", rep.figure5, plot_figure5),
    ):
        if figure is not None:
            write_json(folder / f"{name}.json", figure)
            plot(figure, folder / f"{name}.png")
    return folder
