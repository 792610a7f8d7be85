"""ContractSim performance game in OpenSpiel's shape (ContractSim paper, Sec. 3, App. B.2).

An immutable `ContractSimGame`; a `State` with `current_player`, `legal_actions` (payments) or
`is_legal` (orders, production), `apply_action` returning a new state, per-role observations and
`returns`. Money is kept in Catering base units ([CS-01]); events for the monitor and the trajectory
log are in the setting's dollars, so `contractlang trace` replays a log against the original contract.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BeforeValidator, Field

from contractlang.interpreter.contractsim import CompiledContractSim, ContractSimMonitor, compile_contractsim
from contractlang.interpreter.events import Delivery, Payment, WeekEnd
from contractlang.interpreter.rounds import FloorRules
from contractlang.ir import ContractSimIR, Triple
from contractlang.memo import ByteLru
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, Frozen
from games.contractsim.log import LogEntry, OrderPlaced, PaymentWeekEnd, ProductionWeekEnd, WeekShocks
from games.contractsim.shocks import Shocks
from solver.environment import SupplyEnvironment

Role = Literal["customer", "supplier"]
Phase = Literal["pay", "order", "produce", "over"]


MONEY = "in the game's base units (multiply by `multiplier` for the setting's dollars, [CS-01])"
PRODUCTS3 = "one number per product, in the setting's order (pizza, pasta, soup in Catering)"
INPUTS3 = "one number per input (1, 2, 3), in the setting's order (mozzarella, basil, tomato in Catering)"
DECISIONS = {"customer": len(PAYMENT_WEEKS), "supplier": 2 * len(PRODUCTION_WEEKS)}
"""The decisions each role takes in a game, each one request of an LLM agent (ContractSim paper, App. B.2): a
payment each payment week; an order and a production each production week. An answer that must be repeated
adds calls, not decisions."""

RECIPES: tuple[Triple, Triple, Triple] = ((1, 1, 1), (1, 1, 0), (0, 0, 1))
"""Inputs (1, 2, 3) one unit of each product uses: the first all three, the second inputs 1 and 2, the third input
3 (ContractSim paper, App. C.1, [CS-24])."""


def _not_flag(value):
    """An action's number as given; true/false is refused, not read as 1/0."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a whole number")
    return value


Whole = Annotated[int, BeforeValidator(_not_flag)]
"""A whole number of an action (never a boolean)."""
Quantities = tuple[Whole, Whole, Whole]


class Pay(Frozen):
    """The Customer's payment this payment week."""

    kind: Literal["pay"] = "pay"
    amount: Whole = Field(description=f"the payment, $0 up to the remaining budget, {MONEY}")


class Order(Frozen):
    """The Supplier's order of inputs this production week, bought at this week's prices."""

    kind: Literal["order"] = "order"
    quantities: Quantities = Field(description=f"units of each input to order, 0 up to `order_cap` each; {INPUTS3}")


class Produce(Frozen):
    """The Supplier's output this production week, made from its inventory by RECIPES and delivered at once."""

    kind: Literal["produce"] = "produce"
    quantities: Quantities = Field(description=f"units of each product to make and deliver; {PRODUCTS3}")


Action = Union[Pay, Order, Produce]


class Delivered(Frozen):
    week: int = Field(description="the production week (2, 4, …, 10)")
    delivered: Triple = Field(description=f"units delivered that week; {PRODUCTS3}")


class Paid(Frozen):
    week: int = Field(description="the payment week (1, 3, …, 11)")
    paid: int = Field(description=f"the payment made that week, {MONEY}")


class CustomerObservation(Frozen):
    """What the Customer may know when asked to pay (ContractSim paper, Sec. 3, App. B.2): its own account, what the contract asks now,
    and what was delivered; never the Supplier's inventory, prices or spoilage. Money in base units."""

    role: Literal["customer"] = "customer"
    week: int = Field(description="this payment week (1, 3, …, 11)")
    total_paid: int = Field(description=f"the payments made so far, {MONEY}")
    remaining_budget: int = Field(description=f"the budget not yet paid out, the most a payment can be, {MONEY}")
    payment_due: int = Field(description=f"the contract's payment for this week, deductions applied (eq. 7), {MONEY}")
    observed_breach: bool = Field(description="D (eq. 16): the Supplier violated the contract in an earlier week")
    deliveries: tuple[Delivered, ...] = Field(description="what the Supplier delivered in each earlier production week")
    multiplier: int = Field(description="the setting's dollars per base unit")

    def legal_actions(self) -> list[Pay]:
        """Every legal payment: $0 up to the remaining budget ([CS-05])."""
        return [Pay(amount=a) for a in range(self.remaining_budget + 1)]


class SupplierObservation(Frozen):
    """What the Supplier may know when asked to order or produce (ContractSim paper, Sec. 3, App. B.2). Money in base units."""

    role: Literal["supplier"] = "supplier"
    week: int = Field(description="this production week (2, 4, …, 10)")
    phase: Literal["order", "produce"] = Field(
        description="order: buy inputs at this week's prices (a random share arrives); produce: make and deliver"
    )
    round_index: int = Field(description="t − 1 for production round t (0 for week 2, … 4 for week 10)")
    cash: int = Field(description=f"the Supplier's cash β, which orders cannot exceed, {MONEY}")
    inventory: Triple = Field(
        description=f"inputs held: after spoilage in the order phase, after receipts in the produce phase; {INPUTS3}"
    )
    prices: Triple = Field(description=f"this week's price of one unit of each input, {MONEY}; {INPUTS3}")
    spoiled: Triple = Field(description=f"units of each input lost to spoilage this week; {INPUTS3}")
    received: Triple = Field(description=f"units of each input of this week's order that arrived; {INPUTS3}")
    order_cap: int = Field(description="the most units of each input one order may ask for")
    delivery_due: Triple = Field(
        description=f"the contract's delivery for this week, carried deficits included; {PRODUCTS3}"
    )
    memory: Triple = Field(
        description=f"the contract's contingency memory (rollover deficits, pending deductions); {PRODUCTS3}"
    )
    observed_breach: bool = Field(description="D (eq. 16): the Customer violated the contract in an earlier week")
    payments: tuple[Paid, ...] = Field(description="what the Customer paid in each earlier payment week")
    multiplier: int = Field(description="the setting's dollars per base unit")
    recipes: tuple[Triple, Triple, Triple] = Field(
        default=RECIPES,
        description="for each product, the units of each input (1, 2, 3) one unit of it uses: "
        "the first product all three, the second inputs 1 and 2, the third input 3",
    )

    def legal_actions(self) -> list[Order | Produce]:
        """Every legal order (each input up to `order_cap`, costing at most `cash`) or output (made from
        `inventory` by `recipes`) in this phase ([CS-07], [CS-24])."""
        if self.phase == "order":
            cap = range(self.order_cap + 1)
            return [
                Order(quantities=q)
                for q in ((a, b, c) for a in cap for b in cap for c in cap)
                if sum(x * p for x, p in zip(q, self.prices)) <= self.cash
            ]
        most = max(self.inventory)
        axis = range(most + 1)
        return [
            Produce(quantities=q)
            for q in ((a, b, c) for a in axis for b in axis for c in axis)
            if supplier_why_illegal(self, Produce(quantities=q)) is None
        ]

    def is_legal(self, action: Order | Produce) -> bool:
        return supplier_why_illegal(self, action) is None

    def why_illegal(self, action) -> str | None:
        """Why `action` breaks the action rules in this phase, in words; None when it is legal."""
        return supplier_why_illegal(self, action)


def supplier_why_illegal(at, action) -> str | None:
    """Why the Supplier's `action` breaks the order or production rules ([CS-07], [CS-24]) at `at` (a state or an
    observation: its phase, week, cash, prices, inventory and order cap), in words; None when it is legal."""
    wanted = {"order": Order, "produce": Produce}[at.phase]
    if not isinstance(action, wanted):
        kind = getattr(action, "kind", type(action).__name__)
        return f"a {kind} action where week {at.week} asks for a {wanted.__name__.lower()} action"
    q = action.quantities
    if min(q) < 0:
        return f"{at.phase}s a negative quantity {q}"
    if at.phase == "order":
        over = [f"{x} of input {i + 1}" for i, x in enumerate(q) if x > at.order_cap]
        if over:
            return f"orders {', '.join(over)}; the order cap is {at.order_cap} per input"
        cost = sum(x * p for x, p in zip(q, at.prices))
        if cost > at.cash:
            return f"orders inputs costing ${cost:,} at this week's prices {at.prices}; the Supplier holds ${at.cash:,}"
        return None
    n = at.inventory
    need = tuple(sum(y * recipe[i] for y, recipe in zip(q, RECIPES)) for i in range(3))
    if any(x > have for x, have in zip(need, n)):
        return (
            f"produces {q}, which needs {need[0]} of input 1, {need[1]} of input 2 and {need[2]} of input 3; "
            f"the inventory holds {n}"
        )
    return None


Observation = Union[CustomerObservation, SupplierObservation]


COMPILED_BYTES = 96 * 2**20
"""The compiled contracts one process keeps: a contract's outcome tables take up to ~7 MB (a worker measured
590 MB with 64 of them), and consecutive games play the same contract (`performance.jobs_of`)."""


def _compile(base_ir: ContractSimIR, inventory_cap: int, floors: FloorRules) -> CompiledContractSim:
    """Compiling tabulates every week outcome (~50 ms); a sweep plays each contract many times."""
    return compile_contractsim(base_ir, inventory_cap, floors)


_compiled = ByteLru(_compile, COMPILED_BYTES)


class ContractSimGame(Frozen):
    """One contract in one environment; `ir` in the setting's dollars, `base` in base units."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    ir: ContractSimIR
    env: SupplyEnvironment
    compiled: CompiledContractSim  # compiled from the base-unit contract

    @classmethod
    def make(cls, ir: ContractSimIR, env: SupplyEnvironment) -> ContractSimGame:
        return cls(ir=ir, env=env, compiled=_compiled(ir.base_units(), env.inventory_cap, env.floors))

    def new_initial_state(self, shocks: Shocks) -> State:
        return State(
            game=self,
            shocks=shocks,
            monitor=self.compiled.monitor(),
            cash=self.env.capital,
            budget_left=self.env.budget,
        )


class State(Frozen):
    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    game: ContractSimGame
    shocks: Shocks
    monitor: ContractSimMonitor
    week: int = 1
    phase: Phase = "pay"
    cash: int  # Supplier cash β (base units)
    budget_left: int  # Customer's remaining budget
    inventory: Triple = (0, 0, 0)
    spoiled: Triple = (0, 0, 0)
    received: Triple = (0, 0, 0)
    paid_total: int = 0
    spend_total: int = 0
    value_delivered: int = 0
    log: tuple[LogEntry, ...] = ()

    @property
    def multiplier(self) -> int:
        return self.game.ir.setting_info.multiplier

    @property
    def round_index(self) -> int:
        return PRODUCTION_WEEKS.index(self.week)

    @property
    def order_cap(self) -> int:
        return self.game.env.order_cap

    @property
    def prices(self) -> Triple:
        return self.shocks.weeks[self.round_index].prices

    def current_player(self) -> Role | None:
        return None if self.phase == "over" else "customer" if self.phase == "pay" else "supplier"

    def is_terminal(self) -> bool:
        return self.phase == "over"

    # --- legality (the action validation of ContractSim paper, App. B.2) -------------------------------------------------

    def legal_actions(self) -> list[Action]:
        """Payments are enumerable (every amount up to the remaining budget); orders and outputs use `is_legal`."""
        if self.phase == "pay":
            return [Pay(amount=a) for a in range(self.budget_left + 1)]
        if self.phase == "produce":
            return [Produce(quantities=(0, 0, 0))]
        if self.phase == "order":
            return [Order(quantities=(0, 0, 0))]
        return []

    def is_legal(self, action: Action) -> bool:
        return self.why_illegal(action) is None

    def why_illegal(self, action) -> str | None:
        """Why `action` breaks the action rules ([CS-05]-[CS-07]) in this state, in words; None when it is legal.
        Money in base units."""
        if self.phase == "over":
            return "the game is over"
        if self.phase == "pay":
            if not isinstance(action, Pay):
                kind = getattr(action, "kind", type(action).__name__)
                return f"a {kind} action where week {self.week} asks for a pay action"
            if action.amount < 0:
                return f"pays ${action.amount:,}; a payment is $0 or more"
            if action.amount > self.budget_left:
                return f"pays ${action.amount:,}; ${self.budget_left:,} of the budget remains"
            return None
        return supplier_why_illegal(self, action)

    # --- transitions ---------------------------------------------------------------------------

    def apply_action(self, action: Action) -> State:
        if not self.is_legal(action):
            raise ValueError(f"illegal action {action!r} in week {self.week} ({self.phase})")
        if self.phase == "pay":
            return self._pay(action.amount)
        if self.phase == "order":
            return self._order(action.quantities)
        return self._produce(action.quantities)

    def _pay(self, amount: int) -> State:
        w, m = self.week, self.multiplier
        monitor = self.monitor.apply(Payment(week=w, amount=amount)).apply(WeekEnd(week=w))
        status = monitor.weeks[-1]
        log = self.log + (
            Payment(week=w, amount=amount * m),
            PaymentWeekEnd(week=w, due=status.due * m, compliant=status.compliant),
        )
        state = self.model_copy(
            update={
                "monitor": monitor,
                "cash": self.cash + amount,
                "budget_left": self.budget_left - amount,
                "paid_total": self.paid_total + amount,
                "log": log,
            }
        )
        if w == 11:
            return state.model_copy(update={"phase": "over", "week": 12})
        return state._start_production(w + 1)

    def _start_production(self, week: int) -> State:
        """Spoilage hits leftover inventory at the start of every production week ([CS-06])."""
        t = PRODUCTION_WEEKS.index(week)
        spoil = self.shocks.weeks[t].spoilage
        lost = tuple(min(s, n) for s, n in zip(spoil, self.inventory))
        inventory = tuple(n - x for n, x in zip(self.inventory, lost))
        entry = WeekShocks(week=week, spoiled=lost, prices=self.shocks.weeks[t].prices)
        return self.model_copy(
            update={"week": week, "phase": "order", "inventory": inventory, "spoiled": lost, "log": self.log + (entry,)}
        )

    def _order(self, order: Triple) -> State:
        env, t = self.game.env, self.round_index
        cost = sum(o * p for o, p in zip(order, self.prices))
        received = tuple(self.shocks.receipt(env, t, x, order[x]) for x in range(3))
        inventory = tuple(min(env.inventory_cap, n + r) for n, r in zip(self.inventory, received))
        entry = OrderPlaced(
            week=self.week, order=order, cost=cost * self.multiplier, received=received, inventory=inventory
        )
        return self.model_copy(
            update={
                "phase": "produce",
                "cash": self.cash - cost,
                "spend_total": self.spend_total + cost,
                "received": received,
                "inventory": inventory,
                "log": self.log + (entry,),
            }
        )

    def _produce(self, y: Triple) -> State:
        w = self.week
        inventory = (self.inventory[0] - y[0] - y[1], self.inventory[1] - y[0] - y[1], self.inventory[2] - y[0] - y[2])
        monitor = self.monitor
        products = self.game.ir.setting_info.products
        deliveries = tuple(Delivery(week=w, product=product, qty=qty) for product, qty in zip(products, y))
        for delivery in deliveries:
            monitor = monitor.apply(delivery)
        monitor = monitor.apply(WeekEnd(week=w))
        status = monitor.weeks[-1]
        events = deliveries + (ProductionWeekEnd(week=w, required=status.required, compliant=status.compliant),)
        value = sum(v * q for v, q in zip(self.game.env.values, y))
        return self.model_copy(
            update={
                "week": w + 1,
                "phase": "pay",
                "inventory": inventory,
                "monitor": monitor,
                "value_delivered": self.value_delivered + value,
                "log": self.log + events,
            }
        )

    # --- observations and returns ----------------------------------------------------------

    def observe(self, role: Role) -> Observation:
        """`role`'s typed observation now (the acting role's, when an agent is asked to act)."""
        if role == "customer":
            delivered = tuple(
                Delivered(week=s.week, delivered=s.delivered or (0, 0, 0))
                for s in self.monitor.weeks
                if s.role == "supplier"
            )
            due = self.monitor.payment_due() if self.phase == "pay" else 0
            return CustomerObservation(
                week=self.week,
                total_paid=self.paid_total,
                remaining_budget=self.budget_left,
                payment_due=due,
                observed_breach=self.observed_breach("customer"),
                deliveries=delivered,
                multiplier=self.multiplier,
            )
        if self.phase not in ("order", "produce"):
            raise ValueError(f"the Supplier has nothing to decide in week {self.week} ({self.phase})")
        return SupplierObservation(
            week=self.week,
            phase=self.phase,
            round_index=self.round_index,
            cash=self.cash,
            inventory=self.inventory,
            prices=self.prices,
            spoiled=self.spoiled,
            received=self.received,
            order_cap=self.order_cap,
            delivery_due=self.monitor.delivery_due(),
            memory=self.monitor.memory,
            observed_breach=self.observed_breach("supplier"),
            payments=tuple(Paid(week=s.week, paid=s.paid or 0) for s in self.monitor.weeks if s.role == "customer"),
            multiplier=self.multiplier,
        )

    def observed_breach(self, role: Role) -> bool:
        """D (eq. 16) for `role`'s current action: the counterparty breached in a strictly earlier week."""
        return self.monitor.observed_breach(role, self.week)

    def returns(self) -> dict[Role, int]:
        """U_Cust = B + value delivered − payments; U_Supp = payments − ingredient spend (ContractSim paper, Sec. 3), base units."""
        return {
            "customer": self.game.env.budget + self.value_delivered - self.paid_total,
            "supplier": self.paid_total - self.spend_total,
        }

    def payment_due(self) -> int:
        return self.monitor.payment_due()


__all__ = [
    "Action",
    "ContractSimGame",
    "CustomerObservation",
    "Observation",
    "Order",
    "Pay",
    "PAYMENT_WEEKS",
    "Produce",
    "State",
    "SupplierObservation",
]
