"""The clauses coverage counts, and which of them a monitored game fired.

A clause is one scheduled payment or delivery entry, one contingency (substitution, payment deduction,
rollover, `on breach`), or one CT-Bench term (a cover entry, an `on goal` entry). What firing means is read
off the monitor the games drive, never restated: a schedule entry fires when one of its weeks closes with
something due ([CS-19]: zero-due weeks are excluded), substitution when it credits units the plain minimum
would not ([CS-13]), payment deduction when a payment is lowered ([CS-14]), rollover when a week short of its
schedule is carried without a breach (ContractSim paper, App. C.1), `on breach` when its termination notice is given ([CS-12]), a cover entry when
it pays, forfeits or is blocked ([CT-22]–[CT-24a]) and a points entry when its points move ([CT-26]).
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np

from contractlang.diagnostics import Span
from contractlang.formatter import money
from contractlang.interpreter import ContractBlocked, CTBenchMonitor, PointsTransfer
from contractlang.interpreter.contractsim import ContractSimMonitor, WeekStatus
from contractlang.interpreter.rounds import delivery_floor
from contractlang.ir import CheckedContract, ContractIR, ContractSimIR
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, Frozen

ClauseKind = Literal["pay", "deliver", "substitution", "payment_deduction", "rollover", "on_breach", "cover", "on_goal"]


class Clause(Frozen):
    """One coverable clause of a contract; `key` is stable across runs of the same text."""

    key: str
    kind: ClauseKind
    label: str
    span: Span | None = None
    weeks: tuple[int, ...] = ()
    index: int | None = None

    @property
    def enforcement(self) -> bool:
        """A clause that acts when play departs from the schedule: a contingency, `on breach`, a CT-Bench term."""
        return self.kind not in ("pay", "deliver")

    @property
    def span_key(self) -> str:
        """The clause's key among a checked contract's spans, the same in every text of its terms."""
        return f"{self.kind}.{self.weeks[0]}" if self.kind in ("pay", "deliver") else self.key


def terms_key(ir: ContractIR) -> str:
    """A short name for a contract's terms: games of the same terms share it, whatever text they were read from."""
    return hashlib.sha256(ir.model_dump_json().encode()).hexdigest()[:16]


def _weeks_text(weeks: list[int]) -> str:
    return f"week {weeks[0]}" if len(weeks) == 1 else "weeks " + ", ".join(map(str, weeks))


def clauses(checked: CheckedContract) -> tuple[Clause, ...]:
    """Every coverable clause of a checked contract, in source order."""
    ir = checked.ir
    found: list[Clause] = []
    if isinstance(ir, ContractSimIR):
        products = ir.setting_info.products
        for kind, weeks_of_kind, value in (
            ("pay", PAYMENT_WEEKS, lambda w: money(ir.payment(w))),
            ("deliver", PRODUCTION_WEEKS, lambda w: ", ".join(f"{d} {q}" for d, q in zip(products, ir.delivery(w)))),
        ):
            groups: dict[Span, list[int]] = {}
            for w in weeks_of_kind:
                groups.setdefault(checked.span(f"{kind}.{w}"), []).append(w)
            for span, weeks in groups.items():
                found.append(
                    Clause(
                        key=f"{kind}@{span.line}:{span.column}",
                        kind=kind,
                        label=f"{kind} {_weeks_text(weeks)}: {value(weeks[0])}",
                        span=span,
                        weeks=tuple(weeks),
                    )
                )
        c = ir.contingencies
        for kind, present in (
            ("substitution", c.substitution),
            ("payment_deduction", c.payment_deduction),
            ("rollover", c.rollover),
            ("on_breach", c.grim_trigger or None),
        ):
            if present is not None:
                label = "on breach (terminate)" if kind == "on_breach" else kind
                found.append(Clause(key=kind, kind=kind, label=label, span=checked.spans.get(kind)))
    else:
        for k, entry in enumerate(ir.coverage):
            colour = f" with {entry.colour} chip" if entry.colour else ""
            found.append(
                Clause(
                    key=f"cover.{k}",
                    kind="cover",
                    label=f"cover ({entry.tile[0]},{entry.tile[1]}): {entry.giver} pays for {entry.receiver}{colour}",
                    span=checked.spans.get(f"cover.{k}"),
                    index=k,
                )
            )
        for k, entry in enumerate(ir.points):
            found.append(
                Clause(
                    key=f"goal.{k}",
                    kind="on_goal",
                    label=f"on goal: {entry.giver} transfers {entry.amount} points to {entry.receiver}",
                    span=checked.spans.get(f"goal.{k}"),
                    index=k,
                )
            )
    return tuple(sorted(found, key=lambda c: (c.span or Span(0, 0, 0, 0), c.key)))


def breach_clause(status: WeekStatus, monitor: ContractSimMonitor) -> str:
    """The clause a non-compliant week broke: `pay` for the Customer; for the Supplier a minimum's floor
    ([CS-13], [CS-14]), rollover's cure or limit (App. C.1), deduction's second shortfall, else `deliver`."""
    if status.role == "customer":
        return "pay"
    rules = monitor.contract.rules
    floor = delivery_floor(rules, np.array(status.required))
    if any(d < f for d, f in zip(status.delivered, floor)):
        sub = rules.substitution_min
        if sub is not None and any(d < min(m, r) for d, m, r in zip(status.delivered, sub, status.required)):
            return "substitution"
        return "payment_deduction"
    if rules.carries_deficits:
        return "rollover"
    if rules.mode == "PD":
        return "payment_deduction"
    return "deliver"


def fired_contractsim(checked: CheckedContract, monitor: ContractSimMonitor) -> set[str]:
    """Keys of the clauses the closed weeks of a ContractSim monitor fired."""
    fired: set[str] = set(monitor.contingencies_fired)
    by_week = {w: c for c in clauses(checked) for w in c.weeks}
    for status in monitor.weeks:
        entry = by_week.get(status.week)
        if entry is not None and not status.excluded:
            fired.add(entry.key)
        if status.enforcement and checked.ir.contingencies.grim_trigger:
            fired.add("on_breach")
    return fired & {c.key for c in clauses(checked)}


def fired_ctbench(monitor: CTBenchMonitor) -> set[str]:
    """Keys of the CT-Bench terms a monitor's enforcement actions fired."""
    fired: set[str] = set()
    for k, entry in enumerate(monitor.ir.coverage):
        hit = monitor.used[k] or any(
            isinstance(a, ContractBlocked) and a.tile == entry.tile and a.receiver == entry.receiver
            for a in monitor.actions
        )
        if hit:
            fired.add(f"cover.{k}")
    for k, entry in enumerate(monitor.ir.points):
        if any(isinstance(a, PointsTransfer) and a.giver == entry.giver for a in monitor.actions):
            fired.add(f"goal.{k}")
    return fired


def fired(checked: CheckedContract, monitor: ContractSimMonitor | CTBenchMonitor) -> set[str]:
    """Keys of the clauses a monitor, as a game or a test left it, fired."""
    if isinstance(monitor, ContractSimMonitor):
        return fired_contractsim(checked, monitor)
    return fired_ctbench(monitor)
