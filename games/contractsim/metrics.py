"""Performance metrics of ContractSim paper, App. C.6 (eqs. 31–60), computed from run records only."""

from __future__ import annotations

import math
from collections.abc import Callable

from contractlang.files import FileError
from contractlang.interpreter.rounds import DEFAULT_FLOORS
from contractlang.progress import Advance
from contractlang.vocab import Frozen
from games.agents import model_of
from games.contractsim.play import RunRecord, regret_replays, week_utility_deltas
from solver.dp import TableCache


class RoleRun(Frozen):
    """One run seen from one role: the per-run quantities the aggregates are built from."""

    utility: int
    compliant_utility: float
    eval_weeks: int
    compliance: float | None
    pre_weeks: int
    post_weeks: int
    pre_compliance: float | None
    post_compliance: float | None
    tft: float | None
    defected: bool
    e_pre: bool
    e_resp: bool
    z_uni: bool
    z_rec: bool


CONVENTIONS = {
    "cs19": "[CS-19]: after a breach, every later week keeps its due",
    "paper-tables": "[CS-19a]: in a contract with a deduction or rollover clause, the Customer owes nothing after "
    "the first breach, as the paper's published rows imply",
}
"""How a breach bears on the weeks after it, by the name `--convention` takes."""


def convention_line(convention: str, floors: str = DEFAULT_FLOORS) -> str:
    """The sentences a report opens with, saying how its games were scored and under which floor rule set
    ([CS-14a]) they were played."""
    return (
        f"Scored under the {convention} convention, {CONVENTIONS[convention]}. Played under the {floors} floor "
        "rule set [CS-14a]."
    )


def output_name(stem: str, convention: str, floors: str = DEFAULT_FLOORS) -> str:
    """A report file's name: `tables.md` under the default convention and floor rule set, with the others' names
    inserted (`tables.paper-tables.md`, `tables.no-deduction-floor.md`), so every combination sits side by side."""
    tags = [tag for tag, default in ((convention, "cs19"), (floors, DEFAULT_FLOORS)) if tag != default]
    return stem.replace(".", "".join(f".{tag}" for tag in tags) + ".", 1) if tags else stem


def customer_void_after(run: RunRecord, convention: str) -> int | None:
    """The Customer's last week whose due counts, when `convention` voids its payments after the first breach
    [CS-19a]; None when every week counts."""
    if convention == "cs19":
        return None
    if run.contract_ir is None:
        # a record's content, so the user's error (one line), not ours: a store or log written by hand, or by an
        # older version
        raise FileError(
            f"run {run.contract!r} (env {run.env}) does not hold its contract's terms, which the "
            f"{convention} convention needs; record it again with `run --json`"
        )
    clauses = run.contract_ir.get("contingencies") or {}
    if clauses.get("payment_deduction") is None and clauses.get("rollover") is None:
        return None
    breaches = [w for w in (run.customer_first_violation, run.supplier_first_violation) if w is not None]
    return min(breaches, default=None)


def role_run(run: RunRecord, role: str, convention: str = "cs19") -> RoleRun:
    other = "supplier" if role == "customer" else "customer"
    end = customer_void_after(run, convention)
    # a void week is compliant and excluded, like a week whose due a contingency reduced to zero (ContractSim paper, App. C.6)
    void = {w.week for w in run.weeks if w.role == "customer" and end is not None and w.week > end}
    mine = [w for w in run.weeks if w.role == role]
    evaluated = [w for w in mine if not w.excluded and w.week not in void]
    # f_i (eq. 16) as the monitor recorded it (an excluded week owes nothing, so it never violates); a violation
    # in a void week is none
    first = {
        r: math.inf
        if run.first_violation(r) is None or (r == "customer" and run.first_violation(r) in void)
        else run.first_violation(r)
        for r in (role, other)
    }
    # D (ContractSim paper, App. C.6) as recorded, unless the counterparty's violations were voided
    observed = {w.week: w.observed_breach if not void else first[other] < w.week for w in evaluated}
    pre = [w for w in evaluated if not observed[w.week]]
    post = [w for w in evaluated if observed[w.week]]
    deltas = week_utility_deltas(run)[role]
    base = run.budget if role == "customer" else 0
    cu = base + sum(deltas[w.week] if w.compliant or w.week in void else min(deltas[w.week], 0) for w in mine)
    tft = [int((not w.compliant) == observed[w.week]) for w in evaluated]
    e_resp = first[other] < first[role] and bool(post)
    return RoleRun(
        utility=run.u_customer if role == "customer" else run.u_supplier,
        compliant_utility=cu,
        eval_weeks=len(evaluated),
        compliance=_mean([w.compliant for w in evaluated]),
        pre_weeks=len(pre),
        post_weeks=len(post),
        pre_compliance=_mean([w.compliant for w in pre]),
        post_compliance=_mean([w.compliant for w in post]),
        tft=_mean(tft),
        defected=first[role] < math.inf,
        e_pre=bool(pre),
        e_resp=e_resp,
        z_uni=any(not w.compliant for w in pre),
        z_rec=e_resp and any(not w.compliant for w in post),
    )


def _mean(xs) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


class Stat(Frozen):
    mean: float | None
    sd: float | None
    n: int | None = None  # the runs behind it (for a conditional rate, the eligible runs only)

    def text(self, scale: float = 1.0) -> str:
        if self.mean is None:
            return "–"
        if self.sd is None:  # a summary that records no spread prints its mean alone
            return f"{self.mean * scale:.1f}"
        return f"{self.mean * scale:.1f} ± {self.sd * scale:.1f}"


def _stat(xs: list[float]) -> Stat:
    """Mean ± sample SD with the n−1 denominator ([CS-37])."""
    if not xs:
        return Stat(mean=None, sd=None, n=0)
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return Stat(mean=mean, sd=sd, n=len(xs))


def _micro(rates: list[tuple[float, int]]) -> Stat:
    """Pooled-week mean Σ_j |W_j| x_j / Σ_j |W_j| with the week-weighted SD of the per-run rates around it ([CS-37])."""
    weeks = sum(w for _, w in rates)
    if not weeks:
        return Stat(mean=None, sd=None, n=0)
    mean = sum(x * w for x, w in rates) / weeks
    sd = math.sqrt(sum(w * (x - mean) ** 2 for x, w in rates) / weeks)
    return Stat(mean=mean, sd=sd, n=sum(1 for _, w in rates if w))


class RoleSummary(Frozen):
    role: str
    policy: str  # the role's agent in these runs (`rcc`, `llm:MODEL`, ...); several are joined by ", "
    runs: int
    utility: Stat
    compliant_utility: Stat
    regret: Stat | None
    compliant_regret: Stat | None
    compliance: Stat
    conditional: Stat
    exploited: Stat
    tft: Stat
    compliance_micro: Stat
    conditional_micro: Stat
    exploited_micro: Stat
    tft_micro: Stat
    defection: Stat
    unilateral: Stat
    reciprocal: Stat


def summarise(
    runs: list[RunRecord], role: str, counterfactual: list[RunRecord] | None = None, convention: str = "cs19"
) -> RoleSummary:
    """Table 7–10 quantities over runs (one per case); `counterfactual[j]` is run j with `role` played by RCC."""
    rr = [role_run(r, role, convention) for r in runs]
    valid = [x for x in rr if x.eval_weeks > 0]
    pre = [x for x in rr if x.e_pre]
    resp = [x for x in rr if x.e_resp]
    regret = compliant_regret = None
    if counterfactual is not None:
        cf = [role_run(r, role, convention) for r in counterfactual]
        regret = _stat([c.utility - x.utility for c, x in zip(cf, rr)])
        compliant_regret = _stat([c.compliant_utility - x.compliant_utility for c, x in zip(cf, rr)])
    return RoleSummary(
        role=role,
        policy=", ".join(dict.fromkeys(getattr(r, role) for r in runs)),
        runs=len(runs),
        utility=_stat([x.utility for x in rr]),
        compliant_utility=_stat([x.compliant_utility for x in rr]),
        regret=regret,
        compliant_regret=compliant_regret,
        compliance=_stat([x.compliance for x in valid]),
        conditional=_stat([x.pre_compliance for x in pre]),
        exploited=_stat([x.post_compliance for x in resp]),
        tft=_stat([x.tft for x in valid]),
        compliance_micro=_micro([(x.compliance, x.eval_weeks) for x in valid]),
        conditional_micro=_micro([(x.pre_compliance, x.pre_weeks) for x in pre]),
        exploited_micro=_micro([(x.post_compliance, x.post_weeks) for x in resp]),
        tft_micro=_micro([(x.tft, x.eval_weeks) for x in valid]),
        defection=_stat([float(x.defected) for x in rr]),
        unilateral=_stat([float(x.z_uni) for x in pre]),
        reciprocal=_stat([float(x.z_rec) for x in resp]),
    )


def performance_metrics(
    runs: list[RunRecord],
    tables: TableCache,
    progress: Advance,
    notice: Callable[[str], None],
    allow_commands: bool = False,
    convention: str = "cs19",
) -> list[RoleSummary]:
    """The summaries (ContractSim paper, App. C.6) of each role, one per policy that played it, in order of first appearance, scored
    under `convention` (see CONVENTIONS). Regret replays every run with the role played by RCC (ContractSim paper, App. C.6), which needs
    the contract terms in every record, and is left out for a role whose counterparty is an LLM agent in some
    run (replaying it would make new model calls); `notice` is told what is left out, and why. A recorded
    external agent is replayed only with `allow_commands` (see `regret_replays`)."""
    counterfactuals: dict[str, list[RunRecord] | None] = {"customer": None, "supplier": None}
    if all(r.contract_ir is not None for r in runs):
        roles = [role for role in counterfactuals if not any(model_of(r.counterparty(role)) for r in runs)]
        for role in counterfactuals.keys() - set(roles):
            notice(
                f"regret of the {role} left out: its counterparty is an LLM agent in some runs, and replaying "
                "it would make new model calls"
            )
        counterfactuals.update(regret_replays(runs, roles, tables, allow_commands, progress))
    else:
        notice("regret left out: some records hold no contract terms (records from `run --json` of this version do)")
    # one row per policy of each role: pooling an RCC Customer's runs with a random one's would describe neither
    summaries = []
    for role in ("customer", "supplier"):
        by_policy: dict[str, list[int]] = {}
        for i, r in enumerate(runs):
            by_policy.setdefault(getattr(r, role), []).append(i)
        cf = counterfactuals[role]
        summaries += [
            summarise([runs[i] for i in group], role, None if cf is None else [cf[i] for i in group], convention)
            for group in by_policy.values()
        ]
    return summaries
