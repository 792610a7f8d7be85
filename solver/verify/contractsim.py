"""ContractSim checks: arithmetic, budget, minimums, capacity, and cash-flow feasibility in the
best and worst case (ContractSim paper, App. C.3, [CS-31], [CS-32])."""

from __future__ import annotations

import z3

from contractlang.formatter import money
from contractlang.interpreter.rounds import RoundRules
from contractlang.ir import AssertTerm, CheckedContract, ContractSimIR
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS
from solver.environment import SupplyEnvironment
from solver.verify.report import CheckOutcome
from solver.verify.semantics import ZRound, zmax, zmin, zpayment_due

DEFAULT_TIMEOUT_MS = 5000


def _solver(timeout_ms: int) -> z3.Solver:
    s = z3.SolverFor("QF_LIA")
    s.set("timeout", timeout_ms)
    return s


def _unknown(name: str, solver: z3.Solver, span) -> CheckOutcome:
    reason = solver.reason_unknown() or "unknown"
    return CheckOutcome(
        name=name,
        status="unknown",
        span=span,
        message=f"z3 gave no answer ({reason}); the check is neither proved nor refuted",
    )


def check_assert(a: AssertTerm, k: int, checked: CheckedContract, env) -> CheckOutcome:
    """Decided exactly from the terms (and the environment's budget and capital when it names them)."""
    name, span = f"assert.{k}", checked.span(f"assert.{k}")
    ir = checked.ir
    if a.uses_environment and env is None:
        return CheckOutcome(
            name=name,
            status="unknown",
            span=span,
            message=f"`{a.text}` mentions budget or capital; pass --env N to decide it",
        )
    m = ir.setting_info.multiplier
    budget, capital = (env.budget * m, env.capital * m) if env is not None else (None, None)
    holds, lv, rv = a.decide(ir, budget, capital)
    if holds:
        return CheckOutcome(name=name, status="proved", span=span, message=f"`{a.text}` holds")
    unit = money if a.unit == "money" else str
    return CheckOutcome(
        name=name,
        status="refuted",
        span=span,
        message=f"`{a.text}` is false: the left side is {unit(lv)}, the right side {unit(rv)}",
        counterexample={"left": lv, "right": rv},
    )


def check_totals(checked: CheckedContract, timeout_ms: int) -> CheckOutcome:
    """Price-implied total Σ p·q equals the scheduled payment total ([CS-31])."""
    ir = checked.ir
    value, pay = z3.IntVal(ir.total_value), z3.IntVal(ir.total_pay)
    s = _solver(timeout_ms)
    s.add(value != pay)
    span = checked.span("pay")
    result = s.check()
    if result == z3.unknown:
        return _unknown("arithmetic.totals", s, span)
    if result == z3.unsat:
        return CheckOutcome(
            name="arithmetic.totals",
            status="proved",
            span=span,
            message=f"price × quantity total {money(ir.total_value)} equals the payment total",
        )
    return CheckOutcome(
        name="arithmetic.totals",
        status="refuted",
        span=span,
        message=f"price × quantity total {money(ir.total_value)} differs from the payment total "
        f"{money(ir.total_pay)} by {money(abs(ir.total_value - ir.total_pay))}",
        counterexample={"price_total": ir.total_value, "payment_total": ir.total_pay},
    )


def check_budget(checked: CheckedContract, env: SupplyEnvironment) -> CheckOutcome:
    ir = checked.ir
    budget = env.budget * ir.setting_info.multiplier
    margin = budget - ir.total_pay
    if margin >= 0:
        return CheckOutcome(
            name="budget",
            status="proved",
            span=checked.span("pay"),
            message=f"payments {money(ir.total_pay)} fit the budget {money(budget)} (margin {money(margin)})",
        )
    return CheckOutcome(
        name="budget",
        status="refuted",
        span=checked.span("pay"),
        message=f"payments {money(ir.total_pay)} exceed the budget {money(budget)} by {money(-margin)}",
        counterexample={"payment_total": ir.total_pay, "budget": budget},
    )


def check_granularity(checked: CheckedContract) -> CheckOutcome:
    ir = checked.ir
    g = ir.setting_info.granularity
    off = [v for v in (*ir.prices, *ir.payments) if v % g]
    if not off:
        return CheckOutcome(
            name="granularity",
            status="proved",
            span=checked.span("contract"),
            message=f"every price and payment is a multiple of {money(g)}",
        )
    return CheckOutcome(
        name="granularity",
        status="refuted",
        span=checked.span("contract"),
        message=f"{len(off)} amount(s) are not multiples of {money(g)}",
        counterexample={"amounts": off},
    )


def check_minimums(checked: CheckedContract) -> CheckOutcome:
    """Each production week delivers at least one of each product, the Customer's minimum ([CS-32])."""
    ir = checked.ir
    products = ir.setting_info.products
    gaps = [(w, products[d]) for w, row in zip(PRODUCTION_WEEKS, ir.deliveries) for d in range(3) if row[d] < 1]
    if not gaps:
        return CheckOutcome(
            name="minimums",
            status="proved",
            span=checked.span("deliver"),
            message="every production week delivers at least 1 of each product",
        )
    w, d = gaps[0]
    return CheckOutcome(
        name="minimums",
        status="refuted",
        span=checked.span(f"deliver.{w}"),
        message=f"week {w} schedules no {d}; the Customer needs at least 1 of each product ({len(gaps)} such gap(s))",
        counterexample={"gaps": [{"week": w, "product": p} for w, p in gaps]},
    )


def check_capacity(checked: CheckedContract, env: SupplyEnvironment) -> CheckOutcome:
    """Inputs one week needs (I1 = A+B, I2 = A+B, I3 = A+C) fit the inventory cap and the order cap."""
    ir = checked.ir
    cap = min(env.inventory_cap, env.order_cap)
    for w, (a, b, c) in zip(PRODUCTION_WEEKS, ir.deliveries):
        need = max(a + b, a + c)
        if need > cap:
            which = "inventory cap" if need > env.inventory_cap else "order cap"
            return CheckOutcome(
                name="capacity",
                status="refuted",
                span=checked.span(f"deliver.{w}"),
                message=f"week {w} needs {need} units of one input, above the {which} of {cap}",
                counterexample={"week": w, "needed": need, "cap": cap},
            )
    return CheckOutcome(
        name="capacity",
        status="proved",
        span=checked.span("deliver"),
        message=f"every week's inputs fit the inventory cap {env.inventory_cap} and order cap {env.order_cap}",
    )


class _PlanModel:
    """Five production rounds under fixed laws: orders, receipts, cap, production, cash, contract rules."""

    def __init__(self, ir: ContractSimIR, env: SupplyEnvironment, case: str, timeout_ms: int):
        base = ir.base_units()
        rules = RoundRules.from_ir(base, env.floors)
        lows, highs = env.price_bounds()
        prices = lows if case == "best" else highs
        spoil = 0 if case == "best" else env.spoilage_max
        self.solver = _solver(timeout_ms)
        self.ir, self.base, self.env, self.case, self.prices = ir, base, env, case, prices
        self.orders, self.deliveries, self.cash_before, self.post, self.dues = [], [], [], [], []
        self.compliant = []
        self._fresh = 0
        s = self.solver
        inventory = [z3.IntVal(0)] * 3
        memory = [z3.IntVal(0)] * 3
        cash = z3.IntVal(env.capital + base.payments[0])
        self.dues.append(z3.IntVal(base.payments[0]))
        for t in range(5):
            inventory = [zmax(n - spoil, 0) for n in inventory]
            o = [z3.Int(f"o_{t}_{x}") for x in range(3)]
            y = [z3.Int(f"y_{t}_{d}") for d in range(3)]
            # Sound restrictions for "does some plan exist" in these deterministic cases: an order whose
            # guaranteed receipt equals a smaller order's, or that overfills the cap, yields the same
            # inventory as that smaller order for more money, and more money never hurts a plan.
            useful = [k for k in range(env.order_cap + 1) if k == 0 or self._receipt(k) > self._receipt(k - 1)]
            for x, v in enumerate(o):
                s.add(z3.Or([v == k for k in useful]))
                s.add(z3.Or(v == 0, inventory[x] + self._receipt_before(v, useful) < env.inventory_cap))
            cost = sum(prices[x] * o[x] for x in range(3))
            s.add(cost <= cash)
            received = [o[x] if case == "best" else self._low(o[x]) for x in range(3)]
            post = [zmin(inventory[x] + received[x], env.inventory_cap) for x in range(3)]
            for v in y:
                s.add(v >= 0)
            use = [y[0] + y[1], y[0] + y[1], y[0] + y[2]]
            for x in range(3):
                s.add(use[x] <= post[x])
            zr = ZRound(rules, t, memory, y, floor_div=self._floor_div)
            literal = z3.Bool(f"complies_{t}")
            s.add(z3.Implies(literal, z3.Not(zr.violation)))
            self.compliant.append(literal)
            due = zpayment_due(z3.IntVal(base.payments[t + 1]), zr.deduction)
            self.orders.append(o)
            self.deliveries.append(y)
            self.cash_before.append(cash)
            self.post.append(post)
            self.dues.append(due)
            cash = cash - cost + due
            inventory = [post[x] - use[x] for x in range(3)]
            memory = zr.new_memory

    def _floor_div(self, expr, k: int):
        """⌊expr / k⌋ as a fresh integer pinned by two linear inequalities (z3 is far faster on these
        than on integer division)."""
        self._fresh += 1
        q = z3.Int(f"div_{self._fresh}")
        self.solver.add(k * q <= expr, expr <= k * q + k - 1)
        return q

    def _receipt(self, ordered: int) -> int:
        return ordered if self.case == "best" else self.env.receipt_low(ordered)

    def _receipt_before(self, order, useful: list[int]):
        """Receipt of the next smaller useful order (so `order` is needed to get closer to the cap)."""
        term = z3.IntVal(0)
        for prev, k in zip(useful, useful[1:]):
            term = z3.If(order == k, self._receipt(prev), term)
        return term

    def _low(self, ordered):
        """Lowest receipt: ⌊3o/4⌋ (Envs 3–4) or ⌊o/2⌋ (Envs 5–6)."""
        if self.env.receipt_law == "exact":
            return ordered
        if self.env.receipt_law == "three_quarters":
            return self._floor_div(3 * ordered, 4)
        return self._floor_div(ordered, 2)

    def plan(self, model: z3.ModelRef, rounds: int) -> tuple[list[dict], list[dict]]:
        """The model's plan as a table and as interpreter events (setting dollars) for `trace`."""
        m = self.ir.setting_info.multiplier
        products = self.ir.setting_info.products
        value = lambda e: model.eval(e, model_completion=True).as_long()  # noqa: E731
        rows, events = [], []
        for t in range(rounds):
            pay_week, prod_week = PAYMENT_WEEKS[t], PRODUCTION_WEEKS[t]
            due = value(self.dues[t]) * m
            events += [{"type": "payment", "week": pay_week, "amount": due}, {"type": "week_end", "week": pay_week}]
            y = [value(v) for v in self.deliveries[t]]
            events += [{"type": "delivery", "week": prod_week, "product": p, "qty": q} for p, q in zip(products, y)]
            events.append({"type": "week_end", "week": prod_week})
            rows.append(
                {
                    "week": prod_week,
                    "cash_at_ordering": value(self.cash_before[t]) * m,
                    "order": [value(v) for v in self.orders[t]],
                    "prices": list(self.prices),
                    "inventory_after_receipt": [value(v) for v in self.post[t]],
                    "delivered": y,
                }
            )
        return rows, events


def check_cashflow(checked: CheckedContract, env: SupplyEnvironment, case: str, timeout_ms: int) -> CheckOutcome:
    """Best case: can any plan comply (refuted ⇒ P_sat = 0)? Worst case: does one survive every draw?"""
    name = f"cashflow.{case}_case"
    span = checked.span("deliver")
    laws = (
        "lowest prices, full receipts and no spoilage"
        if case == "best"
        else "highest prices, lowest receipts and the most spoilage"
    )
    model = _PlanModel(checked.ir, env, case, timeout_ms)
    s = model.solver
    result = s.check(*model.compliant)
    if result == z3.unknown:
        return _unknown(name, s, span)
    if result == z3.sat:
        claim = (
            "some order plan meets every delivery"
            if case == "best"
            else "one order plan meets every delivery on every realisation, so compliance is certain "
            "(the rational Supplier's P_sat is at least 0.95)"
        )
        return CheckOutcome(name=name, status="proved", span=span, message=f"with {laws}, {claim}")
    # refuted: the first unsatisfiable prefix of rounds names the failing week
    for k in range(5):
        prefix = s.check(*model.compliant[: k + 1])
        if prefix == z3.unknown:
            return _unknown(name, s, span)
        if prefix == z3.unsat:
            break
    else:
        return _unknown(name, s, span)  # the whole was unsatisfiable but no prefix is: z3 gave up on one
    week = PRODUCTION_WEEKS[k]
    if s.check(*model.compliant[:k]) != z3.sat:
        return _unknown(name, s, span)  # the counterexample plan itself could not be found in time
    rows, events = model.plan(s.model(), k + 1)
    consequence = (
        "no policy can comply, so P_sat = 0" if case == "best" else "compliance is not certain in the worst case"
    )
    return CheckOutcome(
        name=name,
        status="refuted",
        span=checked.span(f"deliver.{week}"),
        message=f"with {laws}, no order plan meets the week-{week} delivery: cash or inventory runs out by "
        f"then; {consequence}",
        counterexample={"failing_week": week, "plan": rows, "events": events},
    )


def verify_contractsim(
    checked: CheckedContract, env: SupplyEnvironment | None, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> list[CheckOutcome]:
    ir = checked.ir
    checks = [check_totals(checked, timeout_ms)]
    checks += [check_assert(a, k, checked, env) for k, a in enumerate(ir.asserts)]
    checks.append(check_granularity(checked))
    checks.append(check_minimums(checked))
    if env is not None:
        checks += [
            check_budget(checked, env),
            check_capacity(checked, env),
            check_cashflow(checked, env, "best", timeout_ms),
            check_cashflow(checked, env, "worst", timeout_ms),
        ]
    return checks


__all__ = ["verify_contractsim"]
