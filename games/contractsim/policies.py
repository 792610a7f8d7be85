"""ContractSim policies: rational Customers and Suppliers (ContractSim paper, App. C.1) and seeded random agents.

Every policy is an agent: it receives its role's typed observation and returns a typed action, like an
external or LLM agent. The RC / RCC Supplier orders from the exact DP table (`solver.dp`) and produces by
the fixed rule [CS-24] that the table was solved with.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from contractlang.errors import UnknownName
from games.contractsim.game import Action, CustomerObservation, Order, Pay, Produce, SupplierObservation
from games.external import ExternalAgent, is_external
from solver.dp import OrderTable

TableSource = Callable[[str], OrderTable]  # cover ("schedule" or "budget") → the solved table


class Policy(Protocol):
    name: str

    def act(self, observation): ...


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


CUSTOMERS = ("rc", "re", "rcc", "random")
SUPPLIERS = ("rc", "re", "rcc", "random")


def _external(name: str) -> ExternalAgent:
    return ExternalAgent(name, "contractsim", Action)


def make_customer(name: str, rng: np.random.Generator) -> Policy:
    """A built-in Customer by name, or `cmd:PROGRAM` for an external agent (games/external.py)."""
    table = {"rc": RCCustomer, "re": RECustomer, "rcc": RCCCustomer}
    if is_external(name):
        return _external(name)
    if name == "random":
        return RandomCustomer(rng)
    if name not in table:
        raise UnknownName(f"unknown customer policy {name!r}; choose from {', '.join(CUSTOMERS)} or cmd:PROGRAM")
    return table[name]()


def make_supplier(name: str, rng: np.random.Generator, tables: TableSource | None = None) -> Policy:
    """`tables` is needed for rc and rcc (it solves or loads the contract's DP table); `cmd:PROGRAM` is an
    external agent."""
    if is_external(name):
        return _external(name)
    if name == "random":
        return RandomSupplier(rng)
    if name == "re":
        return RESupplier()
    if name in ("rc", "rcc"):
        if tables is None:
            raise ValueError(f"the {name} Supplier needs the DP order table")
        return RCSupplier(tables) if name == "rc" else RCCSupplier(tables)
    raise UnknownName(f"unknown supplier policy {name!r}; choose from {', '.join(SUPPLIERS)} or cmd:PROGRAM")
