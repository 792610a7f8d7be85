"""Production-week evaluation (ContractSim paper, App. C.1): the one definition of what a delivery means.

Written over numpy arrays so the same code serves a single monitored week and the DP solver's
sweep over every (memory, delivery) pair. Memory is always a length-3 integer vector: the carried
deficits under rollover (RO, PDRO), `(flag, 0, 0)` under payment deduction (PD), zeros otherwise.
"""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numpy as np
from pydantic import Field

from contractlang.ir import ContractSimIR, Mode, Triple
from contractlang.vocab import PRODUCTION_WEEKS, SUBSTITUTION_WEIGHTS, Frozen

_W = np.array(SUBSTITUTION_WEIGHTS, dtype=np.int64)


class FloorRules(Frozen):
    """Which written minimums are hard floors in a production week, a named rule set ([CS-14], [CS-14a]):
    by default both clauses' minimums are; the variants test readings of the paper that differ."""

    deduction_floor: bool = True  # False: the deduction clause's minimum is no floor, only substitution's is
    rollover_lifts_floors: bool = False  # True: no floor binds where rollover carries the week's deficits

    @property
    def name(self) -> str:
        return next(name for name, rules in FLOOR_RULES.items() if rules == self)


FloorsName = Literal["cs14", "no-deduction-floor", "rollover-lifts-floors", "no-deduction-floor+rollover-lifts-floors"]
DEFAULT_FLOORS: FloorsName = "cs14"
FLOOR_RULES: dict[FloorsName, FloorRules] = {
    "cs14": FloorRules(),
    "no-deduction-floor": FloorRules(deduction_floor=False),
    "rollover-lifts-floors": FloorRules(rollover_lifts_floors=True),
    "no-deduction-floor+rollover-lifts-floors": FloorRules(deduction_floor=False, rollover_lifts_floors=True),
}
"""Every floor rule set by the name the CLI and the conformance table give it; `cs14` is the default."""

RecordedFloors = Annotated[FloorsName, Field(exclude_if=lambda name: name == DEFAULT_FLOORS)]
"""The floor rule set a job or a record was played under ([CS-14a]), by name; left out of its JSON under the
default, so the stores and records of `cs14` read (and are written) as they were before rule sets existed."""


class RoundRules(Frozen):
    """The contract terms that week evaluation needs, in the units deductions are charged in."""

    mode: Mode
    substitution_min: Triple | None
    deduction_min: Triple | None
    max_deficit: int
    prices: Triple
    schedule: tuple[Triple, Triple, Triple, Triple, Triple]
    floors: FloorRules = FloorRules()

    @classmethod
    def from_ir(cls, ir: ContractSimIR, floors: FloorRules = FloorRules()) -> RoundRules:
        c = ir.contingencies
        return cls(
            mode=c.mode,
            substitution_min=c.substitution.min_qty if c.substitution else None,
            deduction_min=c.payment_deduction.min_qty if c.payment_deduction else None,
            max_deficit=c.rollover.max_deficit if c.rollover else 0,
            prices=ir.prices,
            schedule=ir.deliveries,
            floors=floors,
        )

    @property
    def floor_min(self) -> Triple | None:
        """The per-product minimums that are hard floors under the rule set, None when none is ([CS-13], [CS-14],
        [CS-14a]): substitution's always, deduction's unless `deduction_floor` is off, neither in a rollover
        contract when `rollover_lifts_floors` (a week rollover cannot carry fails on its own terms)."""
        if self.floors.rollover_lifts_floors and self.carries_deficits:
            return None
        mins = [
            m
            for m in (self.substitution_min, self.deduction_min if self.floors.deduction_floor else None)
            if m is not None
        ]
        return tuple(max(column) for column in zip(*mins)) if mins else None

    @property
    def carries_deficits(self) -> bool:
        return self.mode in ("RO", "PDRO")

    @property
    def deducts(self) -> bool:
        return self.mode in ("PD", "PDRO")

    def memory_states(self) -> np.ndarray:
        """Every memory vector this contract can reach, shape (n, 3); row 0 is the initial memory."""
        if self.carries_deficits:
            k = np.arange(self.max_deficit + 1)
            grid = np.stack(np.meshgrid(k, k, k, indexing="ij"), axis=-1).reshape(-1, 3)
            return grid.astype(np.int64)
        if self.mode == "PD":
            return np.array([[0, 0, 0], [1, 0, 0]], dtype=np.int64)
        return np.zeros((1, 3), dtype=np.int64)

    def memory_index(self, memory: np.ndarray) -> np.ndarray:
        """Row index into `memory_states()` for memory vectors of shape (..., 3)."""
        memory = np.asarray(memory, dtype=np.int64)
        if self.carries_deficits:
            b = self.max_deficit + 1
            return memory[..., 0] * b * b + memory[..., 1] * b + memory[..., 2]
        if self.mode == "PD":
            return memory[..., 0]
        return np.zeros(memory.shape[:-1], dtype=np.int64)


class RoundOutcome(NamedTuple):
    """Arrays broadcast over the inputs' leading shape; vectors have a trailing axis of 3."""

    required: np.ndarray
    credited: np.ndarray
    residual: np.ndarray
    floor_breach: np.ndarray
    shortfall: np.ndarray
    violation: np.ndarray
    new_memory: np.ndarray
    deduction: np.ndarray
    fulfilment_class: np.ndarray


def required_quantities(rules: RoundRules, round_index: int, memory) -> np.ndarray:
    """`req_d = q_{w,d} + carried_d` under rollover, the schedule otherwise (ContractSim paper, App. C.1)."""
    q = np.asarray(rules.schedule[round_index], dtype=np.int64)
    memory = np.asarray(memory, dtype=np.int64)
    return q + memory if rules.carries_deficits else np.broadcast_to(q, memory.shape).copy()


def delivery_floor(rules: RoundRules, required: np.ndarray) -> np.ndarray:
    """Hard per-product floor min(min_qty, req) under the contract's floor rules ([CS-13], [CS-14], [CS-14a])."""
    if rules.floor_min is None:
        return np.zeros_like(required)
    return np.minimum(np.array(rules.floor_min, dtype=np.int64), required)


def credit(rules: RoundRules, required: np.ndarray, delivered: np.ndarray) -> np.ndarray:
    """Credited quantities: plain `min(y, req)`, or the 4:2:1 greedy substitution map of [CS-13]."""
    base = np.minimum(delivered, required)
    if rules.substitution_min is None:
        return base
    floor = np.minimum(np.array(rules.substitution_min, dtype=np.int64), required)
    pool = (_W * np.maximum(delivered - required, 0)).sum(axis=-1)
    coverable = (required - base) - np.maximum(floor - delivered, 0)
    extra = np.zeros_like(base)
    for d in range(3):
        k = np.minimum(coverable[..., d], pool // _W[d])
        extra[..., d] = k
        pool = pool - k * _W[d]
    return base + extra


def evaluate_round(rules: RoundRules, round_index: int, memory, delivered) -> RoundOutcome:
    """Evaluate production round `round_index` (0..4, week 2t) for memory and delivery arrays (..., 3)."""
    memory = np.asarray(memory, dtype=np.int64)
    delivered = np.asarray(delivered, dtype=np.int64)
    memory, delivered = np.broadcast_arrays(memory, delivered)
    required = required_quantities(rules, round_index, memory)
    credited = credit(rules, required, delivered)
    floor_breach = (delivered < delivery_floor(rules, required)).any(axis=-1)
    residual = required - credited
    shortfall = (residual > 0).any(axis=-1)
    last = round_index == len(PRODUCTION_WEEKS) - 1
    k = rules.max_deficit
    if rules.mode == "GRIM":
        violation = shortfall
        new_memory = np.zeros_like(memory)
    elif rules.mode == "PD":
        violation = floor_breach | (shortfall & (memory[..., 0] == 1))
        new_memory = np.zeros_like(memory)
        new_memory[..., 0] = shortfall
    else:
        carried = memory
        cure_failure = ((carried > 0) & (credited < carried)).any(axis=-1)
        violation = floor_breach | cure_failure | (residual > k).any(axis=-1) | (last & shortfall)
        new_memory = np.minimum(residual, k)
    if rules.deducts:
        deduction = (residual * np.array(rules.prices, dtype=np.int64)).sum(axis=-1)
    else:
        deduction = np.zeros(residual.shape[:-1], dtype=np.int64)
    fulfilment_class = np.where(violation, 0, np.where(shortfall, 1, 2))
    return RoundOutcome(
        required=required,
        credited=credited,
        residual=residual,
        floor_breach=np.asarray(floor_breach),
        shortfall=np.asarray(shortfall),
        violation=np.asarray(violation),
        new_memory=new_memory,
        deduction=np.asarray(deduction),
        fulfilment_class=np.asarray(fulfilment_class),
    )


SUBSTITUTED, DEDUCTED, CARRIED = 1, 2, 4
CONTINGENCY_BITS = {"substitution": SUBSTITUTED, "payment_deduction": DEDUCTED, "rollover": CARRIED}
"""Each contingency a game can fire, by its clause's name, as one bit of the set a game fired."""
Contingency = Literal["substitution", "payment_deduction", "rollover"]


def production_fires(rules: RoundRules, delivered, required, credited, violation, new_memory) -> np.ndarray:
    """The contingencies a production week fires, as bits, over the arrays' leading shape: substitution when
    it credits a product beyond what was delivered of it ([CS-13]), rollover when it carries a deficit without a
    violation (ContractSim paper, App. C.1). Its deduction fires in the payment week it lowers ([CS-14])."""
    required, credited = np.asarray(required), np.asarray(credited)
    fires = np.zeros(np.shape(violation), dtype=np.int64)
    if rules.substitution_min is not None:
        fires |= np.where((credited > np.minimum(delivered, required)).any(axis=-1), SUBSTITUTED, 0)
    if rules.carries_deficits:
        fires |= np.where(~np.asarray(violation) & (np.asarray(new_memory) > 0).any(axis=-1), CARRIED, 0)
    return fires


def contingency_names(fired: int) -> tuple[Contingency, ...]:
    """The contingencies a set of bits names, in the order of `CONTINGENCY_BITS`."""
    return tuple(name for name, bit in CONTINGENCY_BITS.items() if fired & bit)


def applied_deduction(nominal, deduction):
    """`min(δ_w, M_w)` (ContractSim paper, Sec. 3): a deduction never exceeds the payment it lowers; the excess is forfeited.
    Integers or integer arrays (the DP applies it to every delivery at once)."""
    return np.minimum(deduction, nominal)


def payment_due(nominal, deduction):
    """`due_w = M_w − min(δ_w, M_w)` (ContractSim paper, Sec. 3), for integers or integer arrays."""
    return nominal - applied_deduction(nominal, deduction)
