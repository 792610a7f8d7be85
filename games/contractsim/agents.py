"""ContractSim policies: rational Customers and Suppliers (ContractSim paper, App. C.1) and seeded random agents.

Every policy is an agent (games/agents.py): it receives its role's typed observation and returns a typed
action, like an external or LLM agent; each is registered under its name for both roles. The RC / RCC Supplier orders from the exact DP table (`solver.dp`) and produces by
the fixed rule [CS-24] that the table was solved with.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from games.agents import AgentError, Seat, register_agent, register_llm_agent
from games.contractsim.game import Action, CustomerObservation, Order, Pay, Produce, SupplierObservation
from games.contractsim.llm_agents import LlmPerformer
from games.external import ExternalAgent
from solver.dp import OrderTable

GAME = "contractsim"
TableSource = Callable[[str], OrderTable]  # cover ("schedule" or "budget") → the solved table


class RCCustomer:
    """M^RC_w = min(B^rem_w, M_w − min(δ_w, M_w)) (eq. 7): pays what is due, deductions applied."""

    name = "rc"

    def act(self, observation: CustomerObservation) -> Pay:
        return Pay(amount=min(observation.remaining_budget, observation.payment_due))


class RECustomer:
    """Non-engagement: pays 0 in every payment week (ContractSim paper, App. C.1)."""

    name = "re"

    def act(self, observation: CustomerObservation) -> Pay:
        return Pay(amount=0)


class RCCCustomer(RCCustomer):
    """Pays like RC until it observes a Supplier breach in an earlier week (D = 1), then 0 for good (ContractSim paper, App. C.1)."""

    name = "rcc"

    def act(self, observation: CustomerObservation) -> Pay:
        return Pay(amount=0) if observation.observed_breach else super().act(observation)


class RESupplier:
    """Non-engagement: orders 0 and produces 0 in every production week (ContractSim paper, App. C.1)."""

    name = "re"

    def act(self, observation: SupplierObservation):
        return Order(quantities=(0, 0, 0)) if observation.phase == "order" else Produce(quantities=(0, 0, 0))


class RCSupplier:
    """π(t, n, c, μ, p) from the DP table, then the fixed production rule (ContractSim paper, App. C.1). After its own breach it
    keeps using the table with the week-local memory ([CS-18], [CS-27]); it never stops for the Customer."""

    name = "rc"

    def __init__(self, tables: TableSource):
        self.tables = tables
        self.table = tables("schedule")

    def act(self, observation: SupplierObservation):
        o = observation
        t = o.round_index
        mu = self.table.memory_index(o.memory)
        if o.phase == "order":
            if not self.table.solved(t, o.inventory, o.cash, mu):
                self.table = self.tables("budget")  # the Customer paid off schedule
            return Order(quantities=self.table.order(t, o.inventory, o.cash, mu, o.prices))
        return Produce(quantities=self.table.production(t, mu, o.inventory))


class RCCSupplier(RCSupplier):
    """RC until it observes a Customer underpayment in an earlier week (D = 1), then orders and produces 0."""

    name = "rcc"

    def act(self, observation: SupplierObservation):
        if observation.observed_breach:
            return RESupplier().act(observation)
        return super().act(observation)


class RandomCustomer:
    name = "random"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def act(self, observation: CustomerObservation) -> Pay:
        return Pay(amount=int(self.rng.integers(0, observation.remaining_budget + 1)))


class RandomSupplier:
    """Seeded random legal orders (affordable) and outputs (feasible), for fuzzing."""

    name = "random"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def act(self, observation: SupplierObservation):
        o = observation
        if o.phase == "order":
            q = [0, 0, 0]
            budget = o.cash
            for x in self.rng.permutation(3):
                price = o.prices[x]
                most = min(o.order_cap, budget // price if price else o.order_cap)
                q[x] = int(self.rng.integers(0, most + 1))
                budget -= q[x] * price
            return Order(quantities=tuple(q))
        n = o.inventory
        a = int(self.rng.integers(0, min(n[0], n[1], n[2]) + 1))
        b = int(self.rng.integers(0, min(n[0], n[1]) - a + 1))
        c = int(self.rng.integers(0, n[2] - a + 1))
        return Produce(quantities=(a, b, c))


def _table(seat: Seat) -> TableSource:
    if seat.tables is None:
        raise ValueError(f"the {seat.spec} Supplier needs the DP order table")
    return seat.tables


def _llm(seat: Seat):
    if seat.llm is None:
        raise AgentError(f"the {seat.role} {seat.spec!r} is an LLM agent, and this run has no LLM client")
    return LlmPerformer(seat.role, seat.llm.with_model(seat.model), seat.contract, seat.env, seat.guidance)


for _name, _customer, _supplier in (
    ("rc", lambda s: RCCustomer(), lambda s: RCSupplier(_table(s))),
    ("re", lambda s: RECustomer(), lambda s: RESupplier()),
    ("rcc", lambda s: RCCCustomer(), lambda s: RCCSupplier(_table(s))),
    ("random", lambda s: RandomCustomer(s.rng), lambda s: RandomSupplier(s.rng)),
):
    register_agent(_name, game=GAME, roles=("customer",), builtin=True)(_customer)
    register_agent(_name, game=GAME, roles=("supplier",), builtin=True)(_supplier)
register_agent("cmd:", game=GAME, builtin=True)(lambda seat: ExternalAgent(seat.spec, GAME, Action))
register_llm_agent(GAME, _llm)
