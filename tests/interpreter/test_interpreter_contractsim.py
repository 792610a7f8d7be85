"""ContractSim monitor: the worked examples of docs/rules/checks.md and hand-computed traces for every contingency class."""

import numpy as np
import pytest

from contractlang.interpreter.events import EventError, Payment, WeekEnd
from contractlang.interpreter.rounds import RoundRules, evaluate_round
from tests.helpers import contract, events, run, week

FULL = {w: (1, 1, 1) for w in (2, 4, 6, 8, 10)}
PAID = {1: 18, 3: 18, 5: 18, 7: 18, 9: 18, 11: 0}


def outcome(ir, t, memory, y):
    out = evaluate_round(RoundRules.from_ir(ir), t, memory, y)
    return (tuple(out.credited.tolist()), bool(out.violation), tuple(out.new_memory.tolist()), int(out.deduction))


# --- the worked examples of docs/rules/checks.md -------------------------------------------------------------------------


def test_example1_rcc_vs_rcc_is_honoured():
    m = run(contract(), events(PAID, FULL))
    assert m.verdict().first_breach is None
    assert all(s.compliant for s in m.weeks)
    assert [s.excluded for s in m.weeks] == [False] * 10 + [True]


def test_example1_rcc_customer_vs_re_supplier_metrics_inputs():
    m = run(contract(), events({1: 18}, {}))
    cust = [s for s in m.weeks if s.role == "customer" and not s.excluded]
    assert [s.week for s in cust] == [1, 3, 5, 7, 9]  # week 11 is due 0: excluded
    assert [int(s.compliant) for s in cust] == [1, 0, 0, 0, 0]
    assert [int(s.observed_breach) for s in cust] == [0, 1, 1, 1, 1]
    assert (m.supplier_first_violation, m.customer_first_violation) == (2, 3)
    assert m.verdict().first_breach == "supplier"


def test_example1_re_customer_breaches_in_week_1():
    m = run(contract(), events({}, {}))
    assert m.customer_first_violation == 1
    assert week(m, 2).observed_breach  # the Supplier sees the week-1 underpayment before acting
    assert not week(m, 1).observed_breach


def test_example2_substitution_map():
    ir = contract(q=(2, 2, 2), sub=True)
    assert outcome(ir, 0, (0, 0, 0), (3, 1, 1))[:2] == ((2, 2, 2), False)
    for extra in ({}, {"pd": True}, {"ro": 2}, {"pd": True, "ro": 2}):
        ir = contract(q=(2, 2, 2), sub=True, **extra)
        assert outcome(ir, 0, (0, 0, 0), (3, 2, 0))[1] is True  # soup below its floor: breach in every mode


def test_example3_rollover():
    ir = contract(q=(3, 3, 3), ro=2, payments=(0,) * 6)
    assert outcome(ir, 0, (0, 0, 0), (2, 3, 3)) == ((2, 3, 3), False, (1, 0, 0), 0)
    assert outcome(ir, 1, (1, 0, 0), (3, 3, 3)) == ((3, 3, 3), False, (1, 0, 0), 0)
    assert outcome(ir, 4, (1, 0, 0), (3, 3, 3))[1] is True  # week 10 leaves a deficit
    assert outcome(ir, 0, (0, 0, 0), (0, 3, 3))[1] is True  # deficit 3 > K = 2
    m = run(ir, events({}, {2: (2, 3, 3), 4: (3, 3, 3)}))
    assert week(m, 4).required == (4, 3, 3)
    assert week(m, 4).memory_after == (1, 0, 0)


def test_example4_payment_deduction():
    ir = contract(q=(1, 1, 1), pd=True)
    assert outcome(ir, 0, (0, 0, 0), (1, 1, 0))[1] is True  # floor breach
    ir = contract(q=(2, 2, 2), pd=True, payments=(30, 30, 30, 30, 30, 30))
    assert outcome(ir, 0, (0, 0, 0), (1, 2, 2)) == ((1, 2, 2), False, (1, 0, 0), 10)
    m = run(ir, events({1: 30, 3: 20}, {2: (1, 2, 2), 4: (1, 2, 2)}))
    assert week(m, 3).due == 20 and week(m, 3).compliant
    assert week(m, 4).compliant is False  # a residual deficit again: second shortfall in a row
    assert week(m, 5).due == 20  # the violating round still generates a deduction ([CS-16])


def test_deduction_beyond_the_payment_is_forfeited():
    ir = contract(q=(2, 2, 2), pd=True, payments=(30, 5, 30, 30, 30, 30))
    m = run(ir, events({1: 30}, {2: (1, 1, 2)}))
    assert week(m, 2).deduction == 15
    assert (week(m, 3).due, week(m, 3).deduction) == (0, 5)
    assert week(m, 3).excluded  # nothing due after deduction: not counted ([CS-36])


# --- hand-computed traces for each contingency class --------------------------------

CLASSES = {
    "none": {},
    "S": {"sub": True},
    "RO": {"ro": 2},
    "S+RO": {"sub": True, "ro": 2},
    "S+PD": {"sub": True, "pd": True},
    "S+PD+RO": {"sub": True, "pd": True, "ro": 2},
    "PD": {"pd": True},
    "PD+RO": {"pd": True, "ro": 2},
}

# q = (2,2,2) every week; deliveries: week 2 (4,1,2) (pizza surplus covers one pasta via substitution),
# week 4 (2,1,2) (one pasta short), week 6 (2,3,2) (cures a carried pasta), weeks 8-10 exact.
# Under rollover a cure needs only credited >= carried (ContractSim paper, App. C.1), so without substitution the
# pasta deficit is carried 1 -> 2 -> 1 -> 1 and the week-10 remainder is the breach.
DELIVERIES = {2: (4, 1, 2), 4: (2, 1, 2), 6: (2, 3, 2), 8: (2, 2, 2), 10: (2, 2, 2)}
EXPECTED = {
    #          compliant weeks 2..10          credited week 2  memory after 4   deduction week 4
    "none": ((False, False, True, True, True), (2, 1, 2), (0, 0, 0), 0),
    "S": ((True, False, True, True, True), (2, 2, 2), (0, 0, 0), 0),
    "RO": ((True, True, True, True, False), (2, 1, 2), (0, 2, 0), 0),
    "S+RO": ((True, True, True, True, True), (2, 2, 2), (0, 1, 0), 0),
    "S+PD": ((True, True, True, True, True), (2, 2, 2), (1, 0, 0), 5),
    "S+PD+RO": ((True, True, True, True, True), (2, 2, 2), (0, 1, 0), 5),
    "PD": ((True, False, True, True, True), (2, 1, 2), (1, 0, 0), 5),
    "PD+RO": ((True, True, True, True, False), (2, 1, 2), (0, 2, 0), 10),
}


@pytest.mark.parametrize("name", CLASSES)
def test_contingency_class_traces(name):
    ir = contract(q=(2, 2, 2), payments=(30,) * 6, **CLASSES[name])
    m = run(ir, events({w: 30 for w in (1, 3, 5, 7, 9, 11)}, DELIVERIES))
    compliant, credited2, memory4, deduction4 = EXPECTED[name]
    assert tuple(week(m, w).compliant for w in (2, 4, 6, 8, 10)) == compliant
    assert week(m, 2).credited == credited2
    assert week(m, 4).memory_after == memory4
    assert week(m, 4).deduction == deduction4
    assert week(m, 5).due == 30 - deduction4
    assert m.prefix_ok("supplier") == all(compliant)


def test_no_contingencies_dues_equal_schedule():
    ir = contract(payments=(10, 20, 30, 40, 50, 60), grim=False)
    m = run(ir, events({}, {}))
    assert [s.due for s in m.weeks if s.role == "customer"] == [10, 20, 30, 40, 50, 60]
    assert all(s.required == (1, 1, 1) for s in m.weeks if s.role == "supplier")


def test_overpayment_is_compliant_and_dues_queryable():
    m = run(contract(), [Payment(week=1, amount=50)])
    assert m.payment_due() == 18
    m = m.apply(WeekEnd(week=1))
    assert week(m, 1).compliant
    assert m.delivery_due() == (1, 1, 1)


def test_monitor_rejects_out_of_order_and_wrong_week_kinds():
    m = run(contract(), [])
    with pytest.raises(EventError, match="payment in production week"):
        run(contract(), [Payment(week=1, amount=1), WeekEnd(week=1), Payment(week=2, amount=1)])
    with pytest.raises(EventError, match="before week 1 is open|arrives before"):
        m.apply(WeekEnd(week=3))


def test_week_evaluation_agrees_with_table_lookup():
    """The compiled tables are `evaluate_round` itself; spot-check every memory state and many deliveries."""
    ir = contract(q=(2, 1, 3), sub=(1, 0, 1), pd=(1, 1, 1), ro=2)
    compiled = run(ir, []).contract
    rng = np.random.default_rng(0)
    for t in range(5):
        for mem in compiled.memory_states:
            for y in rng.integers(0, 11, size=(20, 3)):
                direct = evaluate_round(compiled.rules, t, mem, y)
                got = compiled.production(t, tuple(mem), tuple(int(v) for v in y))
                assert got.violation == bool(direct.violation) and got.deduction == int(direct.deduction)
                assert got.new_memory == tuple(direct.new_memory.tolist())
                assert got.credited == tuple(direct.credited.tolist())
