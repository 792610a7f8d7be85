"""Person-facing ContractSim output: the week-by-week story of a run and the metrics table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from contractlang.formatter import money
from contractlang.interpreter.events import EventBase, Payment
from contractlang.ir import ContractSimIR
from games.contractsim.log import OrderPlaced, PaymentWeekEnd, ProductionWeekEnd, WeekShocks, delivered
from games.contractsim.play import RunRecord


def _named(names: tuple[str, ...], values, show=str) -> str:
    """`pizza 2, pasta 1, soup 1`: each amount after the vocabulary's name of what it counts or prices."""
    return ", ".join(f"{name} {show(v)}" for name, v in zip(names, values))


def story(run: RunRecord, ir: ContractSimIR) -> str:
    """The run week by week, each party called by its name in the contract, every amount by what it is of."""
    s = ir.setting_info
    customer, supplier = ir.parties
    # the role's title stays in the heading when the contract names the party otherwise
    heading = [
        title if label == title else f'{title} "{label}"'
        for title, label in ((s.customer_title, customer), (s.supplier_title, supplier))
    ]
    lines = [
        f'"{ir.name}" in environment {run.env}: {heading[0]} ({run.customer}) vs {heading[1]} '
        f"({run.supplier}), seed {run.seed}"
    ]
    for e in run.log:
        line = describe(e, ir, tuple(run.log))
        if isinstance(e, PaymentWeekEnd):
            lines[-1] += line
        elif line is not None:
            lines.append(line)
    m = s.multiplier
    lines.append(f"utilities: {customer} {money(run.u_customer * m)}, {supplier} {money(run.u_supplier * m)}")
    return "\n".join(lines)


def describe(e: EventBase, ir: ContractSimIR, log: tuple | None = None) -> str | None:
    """One event of a game under `ir` in the story's words: each party by its name in the contract, every amount
    by what it is of. In a story (`log` given) a payment week's end, what was due, follows its payment's line and
    a production week's end counts the week's deliveries in `log`; None for an event the story tells through
    another (a delivery)."""
    s = ir.setting_info
    m = s.multiplier
    customer, supplier = ir.parties
    if isinstance(e, Payment):
        return f"week {e.week:>2}: {customer} pays {money(e.amount)}"
    if isinstance(e, PaymentWeekEnd):
        due = f"due {money(e.due)}{'' if e.compliant else ', BREACH'}"
        return f" ({due})" if log is not None else f"week {e.week:>2}: {customer} {due}"
    if isinstance(e, WeekShocks):
        return (
            f"week {e.week:>2}: spoilage {_named(s.inputs, e.spoiled)}; input prices "
            f"{_named(s.inputs, e.prices, lambda p: money(p * m))}"
        )
    if isinstance(e, OrderPlaced):
        return (
            f"         {supplier} orders {_named(s.inputs, e.order)} for {money(e.cost)}, receives "
            f"{_named(s.inputs, e.received)}, inventory {_named(s.inputs, e.inventory)}"
        )
    if isinstance(e, ProductionWeekEnd):
        required = f"{_named(s.products, e.required)} required{'' if e.compliant else ' — BREACH'}"
        if log is None:
            return f"week {e.week:>2}: {supplier} {required}"
        return f"         {supplier} delivers {_named(s.products, delivered(log, e.week))} against {required}"
    return None


def print_metrics(summaries, console: Console | None = None) -> None:
    console = console or Console(width=170)
    table = Table(title="ContractSim performance, base units (mean ± SD; micro, week-weighted, in brackets)")
    for col in (
        "role",
        "policy",
        "runs",
        "Utility",
        "Compl. utility",
        "Regret",
        "Compl. regret",
        "Compliance",
        "Conditional",
        "Exploited",
        "TFT",
        "Defection",
        "Unilateral",
        "Reciprocal",
    ):
        table.add_column(col)
    for s in summaries:

        def pct(stat, micro=None):
            text = stat.text(100)
            return text if micro is None or micro.mean is None else f"{text} [{micro.text(100)}]"

        table.add_row(
            s.role,
            s.policy,
            str(s.runs),
            s.utility.text(),
            s.compliant_utility.text(),
            s.regret.text() if s.regret else "–",
            s.compliant_regret.text() if s.compliant_regret else "–",
            pct(s.compliance, s.compliance_micro),
            pct(s.conditional, s.conditional_micro),
            pct(s.exploited, s.exploited_micro),
            pct(s.tft, s.tft_micro),
            s.defection.text(100),
            s.unilateral.text(100),
            s.reciprocal.text(100),
        )
    console.print(table)
