"""One meaning, checked everywhere it is restated (issue #29 item 5): the hand-computed table in
tests/conformance/contractsim.json runs against every implementation of the ContractSim clause semantics —
the monitor (through its round tables, and untabulated as `trace` runs it), the week evaluation of
`rounds`, the z3 mirror, the numba batch engine and the DP's round transition. Each adapter below only
feeds a case's inputs in and reads back what that implementation answers; a restatement that answers part
of a row (the DP: verdicts, memory and dues) is checked on that part."""

import json

import numpy as np
import pytest
import z3

from contractlang.interpreter import compile as compile_monitor
from contractlang.interpreter import rounds as rounds_module
from contractlang.interpreter.contractsim import compile_contractsim
from contractlang.interpreter.events import Delivery, Payment, WeekEnd
from contractlang.interpreter.rounds import FLOOR_RULES, RoundRules, evaluate_round, payment_due
from contractlang.ir import Contingencies, ContractSimIR, DeductionTerms, RolloverTerms, SubstitutionTerms
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS
from games.contractsim import batch
from games.contractsim.environments import environment
from solver.dp import kernels
from solver.dp.problem import ORDER_SIDE, flat, round_transition
from solver.verify import semantics
from solver.verify.semantics import ZRound, zpayment_due
from tests.helpers import ROOT

TABLE = json.loads((ROOT / "tests" / "conformance" / "contractsim.json").read_text())
CASES = {case["name"]: case for case in TABLE["cases"]}
CAP = environment(1).inventory_cap  # every environment's cap; the cases' deliveries fit it


def contract(case) -> ContractSimIR:
    terms, clauses = case["contract"], case["contract"]["contingencies"]
    return ContractSimIR(
        name=case["name"],
        setting="catering",
        parties=("Customer", "Caterer"),
        prices=tuple(terms["prices"]),
        deliveries=tuple(tuple(q) for q in terms["deliveries"]),
        payments=tuple(terms["payments"]),
        contingencies=Contingencies(
            substitution=SubstitutionTerms(min_qty=tuple(clauses["substitution"]["min_qty"]))
            if "substitution" in clauses
            else None,
            payment_deduction=DeductionTerms(min_qty=tuple(clauses["payment_deduction"]["min_qty"]))
            if "payment_deduction" in clauses
            else None,
            rollover=RolloverTerms(max_deficit=clauses["rollover"]["max_deficit"]) if "rollover" in clauses else None,
            grim_trigger=clauses.get("grim_trigger", False),
        ),
    )


def floors(case):
    """The case's floor rule set ([CS-14a]); the default when it names none."""
    return FLOOR_RULES[case.get("floors", "cs14")]


def rows(case):
    """(week, row) in week order, with the row's inputs: `paid` or `delivered`."""
    return [(row["week"], row) for row in case["weeks"]]


# --- adapters: case in, {week: {field: value}} and first violations (or None) out --------------------------


def _monitor_answer(monitor, case):
    products = monitor.contract.ir.setting_info.products
    for week, row in rows(case):
        if week in PAYMENT_WEEKS:
            monitor = monitor.apply(Payment(week=week, amount=row["paid"]))
        else:
            for product, qty in zip(products, row["delivered"]):
                monitor = monitor.apply(Delivery(week=week, product=product, qty=qty))
        monitor = monitor.apply(WeekEnd(week=week))
    answer = {}
    for s in monitor.weeks:
        common = {"compliant": s.compliant, "excluded": s.excluded, "D": s.observed_breach}
        answer[s.week] = common | (
            {"due": s.due}
            if s.role == "customer"
            else {"required": s.required, "credited": s.credited, "deduction": s.deduction, "memory": s.memory_after}
        )
    first = {role: monitor.first_violation(role) for role in ("customer", "supplier")}
    return answer, first


def monitor(case):
    """The interpreter's monitor with its round tables, tabulated up to the environment's cap (as the games run it)."""
    return _monitor_answer(compile_contractsim(contract(case), CAP, floors(case)).monitor(), case)


def trace_monitor(case):
    """The monitor as `contractlang trace` builds it, without an environment: every week evaluated directly."""
    return _monitor_answer(compile_monitor(contract(case), floors=floors(case)), case)


def rounds(case):
    """`rounds.evaluate_round` and `payment_due` chained week by week: the one written definition."""
    ir = contract(case)
    rules = RoundRules.from_ir(ir, floors(case))
    memory, pending, answer = (0, 0, 0), 0, {}
    for week, row in rows(case):
        if week in PAYMENT_WEEKS:
            answer[week] = {"due": int(payment_due(ir.payment(week), pending))}
            continue
        out = evaluate_round(rules, PRODUCTION_WEEKS.index(week), memory, row["delivered"])
        memory, pending = tuple(int(v) for v in out.new_memory), int(out.deduction)
        answer[week] = {
            "required": out.required,
            "credited": out.credited,
            "deduction": pending,
            "memory": memory,
            "compliant": not out.violation,
        }
    return answer, None


def _z3_value(term):
    term = z3.simplify(term)
    return z3.is_true(term) if z3.is_bool(term) else term.as_long()


def z3_mirror(case):
    """`solver.verify.semantics`: ZRound and the due, on concrete values, chained week by week."""
    ir = contract(case)
    rules = RoundRules.from_ir(ir, floors(case))
    memory, pending, answer = [0, 0, 0], 0, {}
    for week, row in rows(case):
        if week in PAYMENT_WEEKS:
            answer[week] = {"due": _z3_value(zpayment_due(z3.IntVal(ir.payment(week)), z3.IntVal(pending)))}
            continue
        zr = ZRound(
            rules,
            PRODUCTION_WEEKS.index(week),
            [z3.IntVal(m) for m in memory],
            [z3.IntVal(y) for y in row["delivered"]],
        )
        memory, pending = [_z3_value(m) for m in zr.new_memory], _z3_value(zr.deduction)
        answer[week] = {
            "required": [_z3_value(r) for r in zr.required],
            "credited": [_z3_value(c) for c in zr.credited],
            "deduction": pending,
            "memory": memory,
            "compliant": not _z3_value(zr.violation),
        }
    return answer, None


def batch_customer(case) -> str | None:
    """The rational Customer whose payments the case's are (the batch engine plays only those), or None."""
    first_supplier = case["first_violation"]["supplier"]

    def breached_before(w):
        return first_supplier is not None and first_supplier < w

    pays = {"rc": lambda w, due: due, "rcc": lambda w, due: 0 if breached_before(w) else due, "re": lambda w, due: 0}
    return next(
        (
            name
            for name, pay in pays.items()
            if all(row["paid"] == pay(w, row["due"]) for w, row in rows(case) if w in PAYMENT_WEEKS)
        ),
        None,
    )


def _uses(y):
    """Units of each input the delivery y consumes (recipes of ContractSim paper, App. A.1–A.2)."""
    return y[0] + y[1], y[0] + y[1], y[0] + y[2]


def _scripted_order(n_mem, use):
    """An order table for a round that, whatever the memory, buys exactly `use`."""
    policy = np.full((n_mem, 1, 1, 1, 1, 1), (use[0] * ORDER_SIDE + use[1]) * ORDER_SIDE + use[2], dtype=np.int16)
    policy.setflags(write=False)  # as solved tables are: one argument type per kernel
    return policy


def batch_engine(case):
    """`games.contractsim.batch._play` on one game whose Supplier is the RC table, scripted to deliver the case's
    quantities: it orders exactly the inputs they use (free, received in full, nothing spoils) and the
    production table returns them."""
    ir = contract(case)
    compiled = compile_contractsim(ir, CAP, floors(case))
    n_mem, side = len(compiled.memory_states), CAP + 1
    output = np.zeros((5, n_mem, side**3, 3), dtype=np.int64)
    policies = []
    for t, week in enumerate(PRODUCTION_WEEKS):
        y = case["weeks"][week - 1]["delivered"]
        use = _uses(y)
        output[t, :, flat(side, *use)] = y
        policies.append(_scripted_order(n_mem, use))
    payments = np.array(ir.payments, dtype=np.int64)
    for a in (output, payments):
        a.setflags(write=False)  # as the DP problem's arrays are, so the kernel is not compiled a second time
    zeros = np.zeros((1, 5, 3), dtype=np.int64)
    out_week, out_u, out_first = (
        np.zeros((1, 11, 6), dtype=np.int64),
        np.zeros((1, 2), dtype=np.int64),
        np.zeros((1, 2), dtype=np.int64),
    )
    batch._play(
        batch.POLICIES.index(batch_customer(case)),
        batch.POLICIES.index("rc"),
        zeros,
        zeros,
        np.zeros((1, 5), dtype=np.int64),
        np.zeros((1, 5, 3)),
        tuple(policies),
        np.zeros((5, 3), dtype=np.int64),
        np.zeros(5, dtype=np.int64),
        np.arange(ORDER_SIDE, dtype=np.int64),
        output,
        *batch.verdicts(compiled),
        payments,
        np.zeros(3, dtype=np.int64),
        10**6,
        0,
        CAP,
        out_week,
        out_u,
        out_first,
        np.stack([rt.fires for rt in compiled.tables]),
        np.zeros(1, dtype=np.int64),
    )
    answer = {}
    for w in range(1, 12):
        compliant, excluded, seen, paid = out_week[0, w - 1, :4]
        answer[w] = {"compliant": bool(compliant), "excluded": bool(excluded), "D": bool(seen)}
        if w in PAYMENT_WEEKS:
            answer[w]["paid"] = int(paid)
    first = {role: int(f) or None for role, f in zip(("customer", "supplier"), out_first[0])}
    return answer, first


def dp_transition(case):
    """`solver.dp.problem.round_transition`, the DP's reading of a round (what `_production` tabulates for the
    induction and the enumeration): verdict, next memory and the next payment's due after the capped deduction."""
    ir = contract(case)
    compiled = compile_contractsim(ir, CAP, floors(case))
    payments = np.array(ir.payments, dtype=np.int64)
    mu, answer = 0, {}
    for t, week in enumerate(PRODUCTION_WEEKS):
        step = round_transition(compiled, payments, t)
        i = (mu, *case["weeks"][week - 1]["delivered"])
        mu = int(step.next_memory[i])
        answer[week] = {"compliant": not step.violation[i], "memory": compiled.memory_states[mu]}
        answer[week + 1] = {"due": int(step.due[i])}
    return answer, None


def _readonly(a):
    a.setflags(write=False)
    return a


def dp_forward(case):
    """`solver.dp.kernels.forward_round`, the exact enumeration with both players RCC ([CS-28], ContractSim paper, App. C.5), pushing one
    game's mass through the case's deliveries (scripted as for the batch engine). Its breach-free phase answers
    the Supplier's verdicts and the dues the Customer pays up to the first violation; its grim phase (the
    Supplier breached, the RCC Customer pays nothing) answers whether that zero payment is itself a breach."""
    ir = contract(case)
    compiled = compile_contractsim(ir, CAP, floors(case))
    payments = np.array(ir.payments, dtype=np.int64)
    n_mem, side = len(compiled.memory_states), CAP + 1
    kernel = np.zeros((3, side, ORDER_SIDE, side))
    for o in range(ORDER_SIDE):
        kernel[:, 0, o, min(o, CAP)] = 1.0  # from an empty store an order arrives in full
    mass = np.zeros((2, n_mem, 1, 1, 1, 1))
    mass[0, 0] = 1.0
    totals = np.zeros(5)
    totals[2] = payments[0]
    paid = {w: row["paid"] for w, row in rows(case) if w in PAYMENT_WEEKS}
    answer = {}
    for t, week in enumerate(PRODUCTION_WEEKS):
        y = case["weeks"][week - 1]["delivered"]
        m = flat(side, *_uses(y))
        step = round_transition(compiled, payments, t)
        output = np.zeros((n_mem, side**3, 3), dtype=np.int64)
        output[:, m] = y
        verdict = [np.zeros((n_mem, side**3), dtype=a.dtype) for a in step]
        for array, table in zip(verdict, step):
            array[:, m] = table[(slice(None), *y)]
        mid = np.zeros((2, n_mem, side**3, 1))
        breach_free, before = mass[0].sum() > 0, totals.copy()
        kernels.forward_round(
            mass,
            _scripted_order(n_mem, _uses(y)),
            _readonly(kernel.copy()),
            _readonly(np.zeros((1, ORDER_SIDE**3), dtype=np.int64)),
            _readonly(np.ones(1)),
            _readonly(output),
            *(_readonly(a) for a in verdict),
            _readonly(np.zeros((n_mem, side**3), dtype=np.int64)),
            np.zeros(3, dtype=np.int64),
            int(payments[t]),
            mid,
            totals,
        )
        if breach_free:
            answer[week] = {"compliant": totals[3] == before[3]}
            if answer[week]["compliant"]:
                answer[week + 1] = {"due": round(totals[2] - before[2])}
            elif paid[week + 1] == 0:
                answer[week + 1] = {"compliant": mid[1].sum() > 0}
        mass = np.ascontiguousarray(mid[:, :, 0].reshape(2, n_mem, 1, 1, 1, 1))  # nothing is left over
    return answer, None


IMPLEMENTATIONS = {
    "monitor": monitor,
    "trace-monitor": trace_monitor,
    "rounds": rounds,
    "z3": z3_mirror,
    "batch": batch_engine,
    "dp": dp_transition,
    "dp-forward": dp_forward,
}


def _answers(name: str, case) -> bool:
    return name != "batch" or batch_customer(case) is not None


def _plain(value):
    if isinstance(value, (tuple, list, np.ndarray)):
        return [int(v) for v in value]
    return bool(value) if isinstance(value, (bool, np.bool_)) else int(value)


def mismatches(implementation: str, case) -> list[str]:
    answer, first = IMPLEMENTATIONS[implementation](case)
    expected = dict(rows(case))
    assert answer and set(answer) <= set(expected), "the adapter answered nothing, or weeks the case does not have"
    out = [
        f"week {w} {field}: got {_plain(v)}, want {expected[w][field]}"
        for w, got in sorted(answer.items())
        for field, v in got.items()
        if _plain(v) != expected[w][field]
    ]
    if first is not None and first != case["first_violation"]:
        out.append(f"first violations: got {first}, want {case['first_violation']}")
    return out


@pytest.mark.parametrize(
    "implementation,name", [(i, n) for i in IMPLEMENTATIONS for n, c in CASES.items() if _answers(i, c)]
)
def test_conformance(implementation, name):
    assert mismatches(implementation, CASES[name]) == []


def test_the_table_covers_every_mode_with_and_without_substitution():
    """GRIM, PD, RO, PDRO (ContractSim paper, App. C.1), each alone and with the substitution overlay, and the worked examples of the worked examples of docs/rules/checks.md."""
    combos = {
        (contract(c).contingencies.mode, "substitution" in c["contract"]["contingencies"]) for c in CASES.values()
    }
    assert combos == {(m, s) for m in ("GRIM", "PD", "RO", "PDRO") for s in (False, True)}
    assert {n.split("-")[0] for n in CASES} >= {"ex1", "ex2", "ex3", "ex4"}


def test_the_batch_engine_plays_most_cases():
    """Its Customers are RC, RCC and RE only; a case whose payments none of them makes is left to the others."""
    playable = [n for n, c in CASES.items() if batch_customer(c) is not None]
    assert {batch_customer(CASES[n]) for n in playable} == {"rc", "rcc", "re"}
    assert len(playable) >= len(CASES) - 2


def test_a_planted_change_fails_the_table(monkeypatch):
    """The table has teeth: drop the cap of ContractSim paper, Sec. 3 (a deduction beyond the payment then leaves a negative due) where
    it is written, `rounds.applied_deduction`, or in the z3 mirror, and every implementation reading it fails on
    the case that exercises the cap (the batch engine's own restatement is compiled numba code, out of a
    monkeypatch's reach)."""
    case = CASES["deduction-beyond-the-payment-is-forfeited"]
    assert all(not mismatches(i, case) for i in IMPLEMENTATIONS)
    monkeypatch.setattr(rounds_module, "applied_deduction", lambda nominal, deduction: deduction)
    monkeypatch.setattr(semantics, "zmin", lambda a, b: a)
    for implementation in ("monitor", "trace-monitor", "rounds", "z3", "dp", "dp-forward"):
        assert mismatches(implementation, case), implementation


def test_every_floor_rule_set_has_cases_that_tell_it_from_cs14():
    """Each variant has a case that fails when run under the default rule set: the table tests what it changes
    (beside cases where it changes nothing, such as substitution's floor under `no-deduction-floor`)."""
    variants = {c["floors"] for c in CASES.values() if "floors" in c}
    assert variants == set(FLOOR_RULES) - {"cs14"}
    for variant in variants:
        assert any(
            mismatches("rounds", {k: v for k, v in case.items() if k != "floors"})
            for case in CASES.values()
            if case.get("floors") == variant
        ), variant
