"""ContractSim's engine for scenario tests (`contractlang.scenario.world.World`): a test's environment, orders,
input prices, receipts and spoilage played on the game's own `State`, with the payments and deliveries the
monitor was given, to the players' realised utilities (ContractSim paper, eqs. 31–33) in the setting's dollars.

Whatever the test leaves out is filled as the test's world documents it: a week with no `order` orders the
inputs its delivery needs beyond the stock, an input with no price costs the environment's lowest price, all of
an order arrives unless `receive` says otherwise, and nothing spoils unless `spoil` says so ([CS-06], [CS-11]).
"""

from __future__ import annotations

from contractlang.formatter import money
from contractlang.interpreter.events import Delivery, EventBase, Payment
from contractlang.ir import ContractSimIR, ScenarioIR, SupplyWeek, Triple
from contractlang.scenario.world import Fault, Outcome
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, WEEKS, Setting
from games.contractsim.environments import environment
from games.contractsim.game import RECIPES, ContractSimGame, Order, Pay, Produce, State
from games.contractsim.shocks import Shocks, WeekShocks
from solver.environment import SupplyEnvironment


class _Stop(Exception):
    """The game's rules forbid what a `given` line says."""

    def __init__(self, given: tuple[str, ...], message: str):
        super().__init__(message)
        self.fault = Fault(given=given, message=message)


def _listed(setting: Setting, values, unit=str) -> str:
    return ", ".join(f"{name} {unit(v)}" for name, v in zip(setting.inputs, values))


def needed(delivered: Triple, inventory: Triple) -> Triple:
    """The inputs a delivery uses by the recipes ([CS-24]) beyond what the inventory holds."""
    use = tuple(sum(q * recipe[x] for q, recipe in zip(delivered, RECIPES)) for x in range(3))
    return tuple(max(u - n, 0) for u, n in zip(use, inventory))


def receipt_uniform(env: SupplyEnvironment, ordered: int, received: int) -> float:
    """The uniform draw for which [CS-11]'s r = lo + ⌊U·(x − lo + 1)⌋ is `received` (the middle of its interval)."""
    lo = env.receipt_low(ordered)
    return (received - lo + 0.5) / (ordered - lo + 1)


class ContractSimScenarios:
    """Plays a ContractSim test's world on the game's engine."""

    def play(self, contract: ContractSimIR, scenario: ScenarioIR, events: tuple[EventBase, ...]) -> Outcome:
        world = scenario.world
        if world is None:
            return Outcome(fault=Fault(given=("env",), message="the test names no environment (`env 1` .. `env 6`)"))
        rows: list[str] = []
        try:
            state = self._played(contract, world.env, world.weeks, events, rows)
        except _Stop as stop:
            return Outcome(rows=tuple(rows), fault=stop.fault)
        m = contract.setting_info.multiplier
        env = state.game.env
        utilities = {role: u * m for role, u in state.returns().items()}
        rows.append(
            f"utility customer {money(utilities['customer'])} = budget {money(env.budget * m)} + value delivered "
            f"{money(state.value_delivered * m)} - payments {money(state.paid_total * m)}"
        )
        rows.append(
            f"utility supplier {money(utilities['supplier'])} = payments {money(state.paid_total * m)} - "
            f"input spend {money(state.spend_total * m)}"
        )
        return Outcome(utilities=utilities, rows=tuple(rows))

    def _played(self, ir: ContractSimIR, env_id: int, weeks: tuple[SupplyWeek, ...], events, rows: list) -> State:
        env = environment(env_id)
        setting, m = ir.setting_info, ir.setting_info.multiplier
        supply = {s.week: s for s in weeks}
        paid = {e.week: e.amount // m for e in events if isinstance(e, Payment)}
        delivered: dict[int, list[int]] = {w: [0, 0, 0] for w in PRODUCTION_WEEKS}
        for e in events:
            if isinstance(e, Delivery):
                delivered[e.week][setting.products.index(e.product)] = e.qty
        shocks = Shocks(weeks=tuple(self._shocks(env, setting, m, supply[w]) for w in PRODUCTION_WEEKS))
        state = ContractSimGame.make(ir, env).new_initial_state(shocks)
        for w in WEEKS:
            if w in PAYMENT_WEEKS:
                state = self._act(state, Pay(amount=paid.get(w, 0)), (f"week@{w}",))
                rows.append(f"week {w}: the customer pays {money(paid.get(w, 0) * m)}")
                continue
            s, t = supply[w], PRODUCTION_WEEKS.index(w)
            y = tuple(delivered[w])
            order = s.order if s.order is not None else needed(y, state.inventory)
            got = tuple(o if r is None else r for o, r in zip(order, s.receipts))
            for x, (o, r) in enumerate(zip(order, got)):
                if r < env.receipt_low(o):
                    raise _Stop(
                        (f"receive@{w}",),
                        f"week {w}: environment {env_id} delivers at least {env.receipt_low(o)} of an order of {o} "
                        f"{setting.inputs[x]}, not {r} ([CS-11])",
                    )
            uniform = tuple(receipt_uniform(env, o, r) for o, r in zip(order, got))
            drawn = shocks.weeks[t].model_copy(update={"receipt_uniform": uniform})
            shocks = Shocks(weeks=shocks.weeks[:t] + (drawn,) + shocks.weeks[t + 1 :])
            before = state.model_copy(update={"shocks": shocks})
            state = self._act(before, Order(quantities=order), (f"order@{w}", f"week@{w}"))
            # too little to make the delivery: the delivery's line, else what left the stock short
            state = self._act(state, Produce(quantities=y), (f"week@{w}", f"order@{w}", f"receive@{w}", f"spoil@{w}"))
            rows.append(self._row(setting, m, before, state, order))
        return state

    @staticmethod
    def _row(setting: Setting, m: int, before: State, after: State, order: Triple) -> str:
        """One production week as the failure's trace shows it: what it cost the Supplier, what it was worth."""
        text = f"week {before.week}: prices {_listed(setting, before.prices, lambda p: money(p * m))}"
        if any(before.spoiled):
            text += f"; spoiled {_listed(setting, before.spoiled)}"
        text += f"; ordered {_listed(setting, order)} for {money((after.spend_total - before.spend_total) * m)}"
        if after.received != order:
            text += f", received {_listed(setting, after.received)}"
        y = after.monitor.weeks[-1].delivered
        worth = (after.value_delivered - before.value_delivered) * m
        return (
            text
            + "; delivered "
            + ", ".join(f"{d} {q}" for d, q in zip(setting.products, y))
            + f" worth {money(worth)}"
        )

    @staticmethod
    def _act(state: State, action, given: tuple[str, ...]) -> State:
        why = state.why_illegal(action)
        if why is not None:
            who = "customer" if isinstance(action, Pay) else "Supplier"
            raise _Stop(given, f"week {state.week}: the {who} {why}")
        return state.apply_action(action)

    @staticmethod
    def _shocks(env: SupplyEnvironment, setting: Setting, m: int, s: SupplyWeek) -> WeekShocks:
        """The week's prices and spoilage shock as the test gives them, each checked against the environment's
        laws; the receipt draws are set when the order is known."""
        prices = []
        for x, (given, law) in enumerate(zip(s.prices, env.price_laws)):
            support = sorted(p for p, _ in law)
            price = support[0] if given is None else given // m
            if price not in support:
                shown = ", ".join(money(p * m) for p in support)
                raise _Stop(
                    (f"prices@{s.week}",),
                    f"week {s.week}: {setting.inputs[x]} at {money(given)} is not a price of environment {env.id} "
                    f"(its prices are {shown})",
                )
            prices.append(price)
        for x, shock in enumerate(s.spoilage):
            if shock > env.spoilage_max:
                raise _Stop(
                    (f"spoil@{s.week}",),
                    f"week {s.week}: environment {env.id} spoils at most {env.spoilage_max} of an input a week, "
                    f"not {shock} {setting.inputs[x]}",
                )
        return WeekShocks(spoilage=s.spoilage, prices=tuple(prices), receipt_uniform=(0.0, 0.0, 0.0))


WORLD = ContractSimScenarios()
"""What `GameType.scenario` names: ContractSim's engine for scenario tests."""
