"""The ContractSim monitor: dues, week-local compliance, absorbing prefixes and first breaches.

Semantics: ContractSim paper, Sec. 3 (order of a week), ContractSim paper, App. C.1 (production weeks, via `rounds`),
ContractSim paper, App. C.1 (prefix constraints), ContractSim paper, App. C.1 (observed-breach indicator D, eq. 16, strict), ContractSim paper, App. C.6 and
[CS-19]/[CS-36] (week-local compliance; zero-due weeks are excluded; a breach voids nothing).
"""

from __future__ import annotations

from typing import ClassVar, Literal, NamedTuple

import numpy as np
from pydantic import ConfigDict

from contractlang.interpreter.events import CONTRACTSIM_TYPES, ContractSimEvent, Delivery, EventError, Payment, WeekEnd
from contractlang.interpreter.rounds import (
    DEDUCTED,
    Contingency,
    FloorRules,
    RoundRules,
    applied_deduction,
    contingency_names,
    evaluate_round,
    payment_due,
    production_fires,
)
from contractlang.ir import ContractSimIR, Triple
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, Frozen

Role = Literal["customer", "supplier"]


class RoundTable(Frozen):
    """`evaluate_round` tabulated for one round over every memory state and delivery 0..cap per product."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    violation: np.ndarray  # (n_memory, cap+1, cap+1, cap+1) bool
    shortfall: np.ndarray
    new_memory_index: np.ndarray  # int
    deduction: np.ndarray  # int
    credited: np.ndarray  # (n_memory, 11, 11, 11, 3)
    required: np.ndarray  # (n_memory, 3)
    fires: np.ndarray  # (n_memory, cap+1, cap+1, cap+1): the contingencies the week fires, as bits


def _round_table(rules: RoundRules, round_index: int, inventory_cap: int) -> RoundTable:
    memory = rules.memory_states()
    axis = np.arange(inventory_cap + 1)
    y = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1)
    out = evaluate_round(rules, round_index, memory[:, None, None, None, :], y[None])
    new_memory_index = rules.memory_index(out.new_memory)
    arrays = dict(
        violation=out.violation,
        shortfall=out.shortfall,
        new_memory_index=new_memory_index,
        deduction=out.deduction,
        credited=out.credited,
        required=out.required[:, 0, 0, 0, :],
        fires=production_fires(rules, y[None], out.required, out.credited, out.violation, out.new_memory),
    )
    for a in arrays.values():
        a.setflags(write=False)
    return RoundTable(**arrays)


class WeekOutcome(NamedTuple):
    """One production week's evaluation, as the monitor and the simulator read it."""

    violation: bool
    shortfall: bool
    new_memory: Triple
    deduction: int
    credited: Triple
    required: Triple


class CompiledContractSim(Frozen):
    """A ContractSim contract compiled for monitoring: its rules and per-round outcome tables.

    The environment's inventory cap bounds what a week can produce of each product ([CS-07]), so the
    tables cover deliveries 0..cap; without an environment (a log replayed on its own) there are no
    tables and every week is evaluated directly."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    ir: ContractSimIR
    rules: RoundRules
    memory_states: np.ndarray
    inventory_cap: int | None
    tables: tuple[RoundTable, ...]

    def monitor(self) -> ContractSimMonitor:
        return ContractSimMonitor(contract=self)

    def production(self, round_index: int, memory: Triple, delivered: Triple) -> WeekOutcome:
        """One production week, from the table when every quantity is within it, else evaluated directly."""
        if self.inventory_cap is not None and max(delivered) <= self.inventory_cap:
            table = self.tables[round_index]
            m = int(self.rules.memory_index(np.array(memory)))
            i = (m, *delivered)
            return WeekOutcome(
                bool(table.violation[i]),
                bool(table.shortfall[i]),
                tuple(int(v) for v in self.memory_states[table.new_memory_index[i]]),
                int(table.deduction[i]),
                tuple(int(v) for v in table.credited[i]),
                tuple(int(v) for v in table.required[m]),
            )
        out = evaluate_round(self.rules, round_index, memory, delivered)
        return WeekOutcome(
            bool(out.violation),
            bool(out.shortfall),
            tuple(int(v) for v in out.new_memory),
            int(out.deduction),
            tuple(int(v) for v in out.credited),
            tuple(int(v) for v in out.required),
        )


def compile_contractsim(
    ir: ContractSimIR, inventory_cap: int | None = None, floors: FloorRules = FloorRules()
) -> CompiledContractSim:
    """The contract's rules under the floor rule set `floors`, tabulated up to the environment's `inventory_cap`
    when one is given."""
    rules = RoundRules.from_ir(ir, floors)
    memory = rules.memory_states()
    memory.setflags(write=False)
    tables = () if inventory_cap is None else tuple(_round_table(rules, t, inventory_cap) for t in range(5))
    return CompiledContractSim(ir=ir, rules=rules, memory_states=memory, inventory_cap=inventory_cap, tables=tables)


class WeekStatus(Frozen):
    """What the monitor concluded about one closed week (one row of `contractlang trace`)."""

    week: int
    role: Role
    due: int | None = None  # payment weeks: amount due after deduction
    nominal: int | None = None  # payment weeks: scheduled amount M_w
    paid: int | None = None
    required: Triple | None = None  # production weeks: scheduled quantity plus carried deficits
    delivered: Triple | None = None
    credited: Triple | None = None
    compliant: bool
    excluded: bool
    prefix_ok: bool
    observed_breach: bool
    memory_before: Triple = (0, 0, 0)
    memory_after: Triple = (0, 0, 0)
    deduction: int = 0  # production weeks: δ generated for the next payment; payment weeks: δ applied
    enforcement: tuple[str, ...] = ()


class ContractSimMonitor(Frozen):
    """An immutable monitor state; `apply` returns the next one, so a solver can branch on it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    KIND: ClassVar[str] = ContractSimIR.model_fields["kind"].default  # the contracts it monitors
    EVENTS: ClassVar[tuple[str, ...]] = CONTRACTSIM_TYPES  # the event types it consumes

    contract: CompiledContractSim
    week: int = 1
    paid: int = 0
    delivered: Triple = (0, 0, 0)
    memory: Triple = (0, 0, 0)
    pending_deduction: int = 0
    customer_first_violation: int | None = None
    supplier_first_violation: int | None = None
    weeks: tuple[WeekStatus, ...] = ()

    @property
    def finished(self) -> bool:
        return self.week > 11

    @property
    def acting_role(self) -> Role:
        return "customer" if self.week in PAYMENT_WEEKS else "supplier"

    def first_violation(self, role: Role) -> int | None:
        return self.customer_first_violation if role == "customer" else self.supplier_first_violation

    def prefix_ok(self, role: Role) -> bool:
        """C_{i,t}: every obligation of `role` through the last closed week was met (absorbing)."""
        return self.first_violation(role) is None

    def observed_breach(self, role: Role, week: int | None = None) -> bool:
        """D_{i,w} (eq. 16): the counterparty violated in a week strictly before `week` (default: now)."""
        other = self.first_violation("supplier" if role == "customer" else "customer")
        return other is not None and other < (self.week if week is None else week)

    def payment_due(self) -> int:
        """What the Customer owes in the open payment week, after a capped deduction (ContractSim paper, Sec. 3)."""
        if self.week not in PAYMENT_WEEKS:
            raise EventError(f"week {self.week} is a production week; nothing is payable")
        return int(payment_due(self.contract.ir.payment(self.week), self.pending_deduction))

    def delivery_due(self) -> Triple:
        """What the Supplier must deliver in the open production week: schedule plus carried deficits."""
        if self.week not in PRODUCTION_WEEKS:
            raise EventError(f"week {self.week} is a payment week; nothing is deliverable")
        return self.contract.production(PRODUCTION_WEEKS.index(self.week), self.memory, (0, 0, 0)).required

    def apply(self, event: ContractSimEvent) -> ContractSimMonitor:
        if self.finished:
            raise EventError("the contract's 11 weeks are over; no further events are accepted")
        if event.week != self.week:
            order = "after" if event.week < self.week else "before"
            raise EventError(
                f"{event.type} for week {event.week} arrives {order} week {self.week} is open "
                f"(each week must end with a week_end event before the next begins)"
            )
        if isinstance(event, Payment):
            if event.week not in PAYMENT_WEEKS:
                raise EventError(f"payment in production week {event.week}; payments fall in weeks 1, 3, 5, 7, 9, 11")
            return self.model_copy(update={"paid": self.paid + event.amount})
        if isinstance(event, Delivery):
            if event.week not in PRODUCTION_WEEKS:
                raise EventError(f"delivery in payment week {event.week}; deliveries fall in weeks 2, 4, 6, 8, 10")
            products = self.contract.ir.setting_info.products
            if event.product not in products:
                raise EventError(
                    f"unknown product {event.product!r}; this contract's products are " + ", ".join(products)
                )
            delivered = list(self.delivered)
            delivered[products.index(event.product)] += event.qty
            return self.model_copy(update={"delivered": tuple(delivered)})
        assert isinstance(event, WeekEnd)
        return self._close_week()

    def _grim_notice(self, role: Role) -> str:
        how = "explicit" if self.contract.ir.contingencies.grim_trigger else "implicit"
        return f"grim trigger ({how}): engagement ends"

    def _close_week(self) -> ContractSimMonitor:
        w = self.week
        if w in PAYMENT_WEEKS:
            nominal = self.contract.ir.payment(w)
            due = int(payment_due(nominal, self.pending_deduction))
            compliant = self.paid >= due
            status = dict(
                role="customer",
                due=due,
                nominal=nominal,
                paid=self.paid,
                deduction=int(applied_deduction(nominal, self.pending_deduction)),
                excluded=due == 0,
                memory_before=self.memory,
                memory_after=self.memory,
            )
            update: dict = {"pending_deduction": 0}
        else:
            t = PRODUCTION_WEEKS.index(w)
            out = self.contract.production(t, self.memory, self.delivered)
            compliant = not out.violation
            status = dict(
                role="supplier",
                required=out.required,
                delivered=self.delivered,
                credited=out.credited,
                deduction=out.deduction,
                excluded=not any(out.required),
                memory_before=self.memory,
                memory_after=out.new_memory,
            )
            update = {"pending_deduction": out.deduction, "memory": out.new_memory}
        role: Role = status["role"]
        enforcement: tuple[str, ...] = ()
        if not compliant and self.first_violation(role) is None:
            update[f"{role}_first_violation"] = w
            if self.first_violation("supplier" if role == "customer" else "customer") is None:
                enforcement = (self._grim_notice(role),)
        record = WeekStatus(
            week=w,
            compliant=compliant,
            prefix_ok=compliant and self.prefix_ok(role),
            observed_breach=self.observed_breach(role, w),
            enforcement=enforcement,
            **status,
        )
        return self.model_copy(
            update={**update, "week": w + 1, "paid": 0, "delivered": (0, 0, 0), "weeks": self.weeks + (record,)}
        )

    @property
    def contingencies_fired(self) -> tuple[Contingency, ...]:
        """The contingencies the closed weeks fired: payment deduction where a payment was lowered ([CS-14]),
        substitution and rollover as `production_fires` reads a production week."""
        bits = 0
        for s in self.weeks:
            if s.role == "customer":
                bits |= DEDUCTED if s.deduction > 0 else 0
            else:
                fires = production_fires(
                    self.contract.rules, s.delivered, s.required, s.credited, not s.compliant, s.memory_after
                )
                bits |= int(fires)
        return contingency_names(bits)

    def verdict(self) -> Verdict:
        """Who breached first, when and why, in words."""
        firsts = [
            (w, r)
            for r, w in (("customer", self.customer_first_violation), ("supplier", self.supplier_first_violation))
            if w is not None
        ]
        if not firsts:
            done = "all 11 weeks" if self.finished else f"weeks 1..{self.week - 1}"
            return Verdict(first_breach=None, week=None, reason=f"no breach in {done}: the contract was honoured")
        week, role = min(firsts)
        status = next(s for s in self.weeks if s.week == week)
        return Verdict(first_breach=role, week=week, reason=breach_reason(status, self.contract.ir))


class Verdict(Frozen):
    first_breach: Role | None
    week: int | None
    reason: str


def breach_reason(status: WeekStatus, ir: ContractSimIR) -> str:
    """Why a week was not compliant, in words (the verdict's reason; money as `status` holds it)."""
    if status.role == "customer":
        return (
            f"the customer paid ${status.paid:,} in week {status.week} against ${status.due:,} due "
            f"(${status.nominal:,} scheduled, ${status.deduction:,} deducted)"
        )
    products = ir.setting_info.products
    gaps = [f"{d} {c} of {r}" for d, r, c in zip(products, status.required, status.credited) if c < r]
    mode = ir.contingencies.mode
    detail = {
        "GRIM": "any shortfall is a breach",
        "PD": "a shortfall below the floor, or a second shortfall in a row, is a breach",
        "RO": "an uncured carry-over, a deficit above the limit, a floor breach or a deficit left "
        "in week 10 is a breach",
        "PDRO": "an uncured carry-over, a deficit above the limit, a floor breach or a deficit left "
        "in week 10 is a breach",
    }[mode]
    return (
        f"the supplier delivered {'/'.join(str(x) for x in status.delivered)} in week {status.week} "
        f"against {'/'.join(str(x) for x in status.required)} required; credited short: "
        f"{', '.join(gaps) or 'none (floor breach)'} ({mode}: {detail})"
    )
