"""`cl.expected_utility_differences`: each decision of a played ContractSim game beside what RCC would have done in
the same state, and what the difference is worth in expected utility (ContractSim paper, eq. 12's V̂ and P̂, the
exact DP of App. C.1, [CS-28]). The viewer's week-by-week page shows these; Python users call them directly."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from contractlang.api.results import Rows
from contractlang.errors import BadData, checked
from contractlang.interpreter.events import Delivery, Payment
from contractlang.ir import ContractSimIR
from contractlang.vocab import PAYMENT_WEEKS, Frozen
from games.agents import Seat, make_agent, play_out
from games.contractsim.environments import environment
from games.contractsim.game import Action, ContractSimGame, Order, Pay, Produce, State
from games.contractsim.log import OrderPlaced
from games.contractsim.play import RunRecord
from games.contractsim.registered import GAME_TYPE as CONTRACTSIM
from games.contractsim.shocks import draw_shocks
from games.game import PlayRecord
from solver.dp import TableCache
from solver.dp.baseline import Values, customer_to_come
from solver.dp.problem import ROUNDS
from solver.environment import SupplyEnvironment


class Baselines:
    """The DP values behind RC's orders (per contract, environment and cover), solved when a decision is first
    set beside RC's; the last few are kept."""

    KEPT = 4
    KEPT_STATES = 100_000  # the Customer's values of states already enumerated: games of one contract share many

    def __init__(self, tables: TableCache):
        self.tables = tables
        self._values: OrderedDict[tuple, Values] = OrderedDict()
        self._customer: OrderedDict[tuple, float | None] = OrderedDict()

    def customer(self, ir: ContractSimIR, env: SupplyEnvironment, t: int, memory, leftover, cash: int) -> float | None:
        """The Customer's expected value delivered less payments from round t on, both players RCC, from a
        breach-free state (`solver.dp.baseline.customer_to_come`): the table RC starts with, else the wider one it
        turns to when the first has no order for a state; None when neither has."""
        key = (
            ir.model_dump_json(exclude={"name", "parties", "asserts"}),
            env.id,
            t,
            tuple(memory),
            tuple(leftover),
            cash,
        )
        if key not in self._customer:
            value = None
            for cover in ("schedule", "budget"):
                table = self.tables.solve(ir, env, cover)[1]
                try:
                    value = customer_to_come(table, t, table.memory_index(memory), leftover, cash)
                    break
                except ValueError:  # the enumeration reached a state this table leaves unsolved
                    continue
            self._customer[key] = value
            while len(self._customer) > self.KEPT_STATES:
                self._customer.popitem(last=False)
        return self._customer[key]

    def values(self, ir: ContractSimIR, env: SupplyEnvironment, cover: str) -> Values:
        key = (ir.model_dump_json(exclude={"name", "parties", "asserts"}), env.id, cover)
        if key not in self._values:
            self._values[key] = Values(self.tables.solve(ir, env, cover)[1].problem)
            while len(self._values) > self.KEPT:
                self._values.popitem(last=False)
        self._values.move_to_end(key)
        return self._values[key]


class ExpectedUtility(Frozen):
    """A decision and RCC's in the same state, each followed by RCC play: the deciding player's expected utility
    still to come under each, in the contract's dollars, and the Supplier's P̂ of each (eq. 12)."""

    who: Literal["customer", "supplier"]
    agent: float
    rcc: float
    difference: float  # rcc − agent: what the decision gave up against RCC's
    p_agent: float | None = None
    p_rcc: float | None = None


class Decision(Frozen):
    """One action of a played ContractSim game (money in base units) beside RCC's at the same state: None where
    the DP's table does not cover the state (`note` says why); `expected` where the two differ and the DP prices
    both."""

    week: int
    role: str
    phase: str
    action: Action
    rcc: Action | None = None
    note: str = ""
    observed_breach: bool = False
    expected: ExpectedUtility | None = None

    @property
    def same(self) -> bool:
        return self.rcc == self.action


class Differences(Rows):
    """Each decision of a game beside RCC's (`cl.expected_utility_differences`)."""

    decisions: tuple[Decision, ...]

    def rows(self) -> list[dict]:
        """One line per decision: week, role, whether it is RCC's, and the expected-utility difference."""
        return [
            {
                "week": d.week,
                "role": d.role,
                "phase": d.phase,
                "same": d.same,
                "difference": d.expected.difference if d.expected else None,
            }
            for d in self.decisions
        ]


@checked
def expected_utility_differences(played: Rows | PlayRecord | RunRecord, tables: Any = None) -> Differences:
    """Each decision of a played ContractSim game (`cl.play`'s result, its `PlayRecord` or a `RunRecord` that keeps
    its log) beside what RCC would have done in the same state, with the expected-utility difference where they
    differ (ContractSim paper, eq. 12; App. C.1; [CS-28]); `tables` the DP tables to solve with."""
    record = getattr(played, "record", played)
    record = getattr(record, "detail", record)
    if not isinstance(record, RunRecord) or record.contract_ir is None:
        raise BadData("expected-utility differences are of a played ContractSim game (cl.play's result)")
    if not record.log:
        raise BadData("this record keeps no events to set beside RCC's; play it with its log kept")
    ir = ContractSimIR.from_json_value(record.contract_ir)
    baselines = Baselines(tables or TableCache())
    steps = decisions(ir, environment(record.env, record.floors), record.log, record.seed, baselines)
    return Differences(decisions=tuple(d for d, _ in steps))


def decisions(
    ir: ContractSimIR, env: SupplyEnvironment, log: Iterable, seed: int, baselines: Baselines
) -> Iterator[tuple[Decision, State]]:
    """Each action of the game the log tells, replayed from the seed's shocks ([CS-11]), beside RCC's, with the
    state it leaves."""
    m = ir.setting_info.multiplier
    state = initial_state(ir, env, seed)
    rng = np.random.default_rng(0)  # RCC draws nothing; the factories ask for a generator
    seat = Seat(
        game=CONTRACTSIM.name,
        role="customer",
        rng=rng,
        contract=ir,
        env=env,
        tables=lambda cover: baselines.tables.solve(ir, env, cover)[1],
    )
    rcc = {role: make_agent("rcc", replace(seat, role=role)) for role in CONTRACTSIM.roles}
    for action in actions(log, m):
        role, week = state.current_player(), state.week
        observation = state.observe(role)
        note = ""
        try:
            baseline = rcc[role].act(observation)
        except ValueError as exc:  # a state the table does not cover
            baseline, note = None, str(exc)
        expected = None
        if baseline is not None and baseline != action:
            if isinstance(action, Order) and not observation.observed_breach:
                expected = _supplier_expected(baselines, ir, env, observation, action, baseline, m)
            elif isinstance(action, Pay):
                expected = _customer_expected(baselines, ir, env, state, action, baseline, seat, m)
        decision = Decision(
            week=week,
            role=role,
            phase=state.phase,
            action=action,
            rcc=baseline,
            note=note,
            observed_breach=observation.observed_breach,
            expected=expected,
        )
        state = state.apply_action(action)
        yield decision, state


def initial_state(ir: ContractSimIR, env: SupplyEnvironment, seed: int) -> State:
    """The game's first state: the seed's shocks drawn ([CS-11])."""
    return ContractSimGame.make(ir, env).new_initial_state(draw_shocks(env, np.random.default_rng(seed)))


def actions(log: Iterable, multiplier: int) -> Iterator[Action]:
    """The agents' actions in the order they were taken, read back from the log (money to base units)."""
    delivered: list[int] = []
    for entry in log:
        if isinstance(entry, Payment):
            yield Pay(amount=entry.amount // multiplier)
        elif isinstance(entry, OrderPlaced):
            yield Order(quantities=entry.order)
        elif isinstance(entry, Delivery):
            delivered.append(entry.qty)
            if len(delivered) == 3:
                yield Produce(quantities=tuple(delivered))
                delivered = []


def _supplier_expected(
    baselines: Baselines, ir: ContractSimIR, env: SupplyEnvironment, o, action: Order, baseline: Order, m: int
) -> ExpectedUtility | None:
    """The agent's order and RC's at the same state, each followed by RC's play: the Supplier's expected utility
    still to come (payments less spend, RC Customer assumed as in ContractSim paper, App. C.1) and its P̂."""
    table = baselines.tables.solve(ir, env)[1]
    mu = table.memory_index(o.memory)
    cover = "schedule" if table.solved(o.round_index, o.inventory, o.cash, mu) else "budget"
    values = baselines.values(ir, env, cover)
    agent, rcc = (
        values.order(o.round_index, mu, o.inventory, o.cash, o.prices, a.quantities) for a in (action, baseline)
    )
    if agent is None or rcc is None:
        return None
    return ExpectedUtility(
        who="supplier",
        agent=agent.value * m,
        rcc=rcc.value * m,
        difference=(rcc.value - agent.value) * m,
        p_agent=agent.p_sat,
        p_rcc=rcc.p_sat,
    )


def _customer_expected(
    baselines: Baselines,
    ir: ContractSimIR,
    env: SupplyEnvironment,
    state: State,
    action: Pay,
    baseline: Pay,
    seat: Seat,
    m: int,
) -> ExpectedUtility | None:
    """The agent's payment and RCC's in the same state, each followed by both players' RCC play ([CS-28]): the
    Customer's expected utility still to come (value delivered less payments, this one included). A payment that
    meets the due leaves a breach-free state: the DP's exact enumeration from it (`Baselines.customer`). One short
    of it is a Customer breach: the RCC Supplier orders and produces nothing from then on, so the rest involves no
    chance and is played out. None where the DP does not model the game: a breach already happened, or the budget
    left cannot pay the rest of the schedule (the DP assumes it is paid)."""
    if any(not s.compliant for s in state.monitor.weeks):
        return None
    due, k = state.payment_due(), PAYMENT_WEEKS.index(state.week)
    scheduled_later = sum(ir.base_units().payments[k + 1 :])
    values = {}
    for who, pay in (("agent", action), ("rcc", baseline)):
        if pay.amount < due:
            rcc = {r: make_agent("rcc", replace(seat, role=r)) for r in CONTRACTSIM.roles}
            end = play_out(state.apply_action(pay), rcc)
            values[who] = float(end.value_delivered - state.value_delivered - (end.paid_total - state.paid_total))
            continue
        if state.budget_left - pay.amount < scheduled_later:
            return None
        later = (
            baselines.customer(ir, env, k, state.monitor.memory, state.inventory, state.cash + pay.amount)
            if k < ROUNDS
            else 0.0
        )
        if later is None:
            return None
        values[who] = later - pay.amount
    return ExpectedUtility(
        who="customer",
        agent=values["agent"] * m,
        rcc=values["rcc"] * m,
        difference=(values["rcc"] - values["agent"]) * m,
    )
