"""Monitor invariants over random contracts and random event streams (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from contractlang.interpreter import ChipTransfer, Forfeit, PointsTransfer, compile
from contractlang.interpreter.events import ChipCounts, GameEnd, GoalReached, Holdings, MoveAttempt
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS
from tests.helpers import events, run
from tests.strategies import contractsim_irs, ctbench_irs

streams = st.fixed_dictionaries(
    {
        "payments": st.dictionaries(st.sampled_from(PAYMENT_WEEKS), st.integers(0, 80), max_size=6),
        "deliveries": st.dictionaries(
            st.sampled_from(PRODUCTION_WEEKS), st.tuples(*[st.integers(0, 12)] * 3), max_size=5
        ),
    }
)


@settings(max_examples=300, deadline=None)
@given(contractsim_irs(settings=("catering",)), streams)
def test_contractsim_invariants(ir, stream):
    m = run(ir, events(stream["payments"], stream["deliveries"]))
    assert m.finished and len(m.weeks) == 11
    for role in ("customer", "supplier"):
        mine = [s for s in m.weeks if s.role == role]
        prefix = [s.prefix_ok for s in mine]
        assert prefix == sorted(prefix, reverse=True)  # once broken, never restored
        first = next((s.week for s in mine if not s.compliant), None)
        assert first == m.first_violation(role)
        d = [s.observed_breach for s in mine]
        assert d == sorted(d)  # D switches at most once, from 0 to 1
        other = m.first_violation("supplier" if role == "customer" else "customer")
        for s in mine:
            assert s.observed_breach == (other is not None and other < s.week)
            if s.excluded:
                assert s.compliant  # a week with nothing due is never a violation
    if ir.contingencies.mode == "GRIM":
        assert [s.due for s in m.weeks if s.role == "customer"] == list(ir.payments)
        assert [s.required for s in m.weeks if s.role == "supplier"] == list(ir.deliveries)


holdings = st.builds(
    Holdings,
    red=st.builds(ChipCounts, red=st.integers(0, 3), blue=st.integers(0, 3), green=st.integers(0, 3)),
    blue=st.builds(ChipCounts, red=st.integers(0, 3), blue=st.integers(0, 3), green=st.integers(0, 3)),
)
moves = st.builds(
    MoveAttempt,
    player=st.sampled_from(["red", "blue"]),
    tile=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    tile_colour=st.sampled_from(["red", "blue", "green"]),
    holdings=holdings,
)


@settings(max_examples=300, deadline=None)
@given(ctbench_irs(), st.lists(moves, max_size=30), st.lists(st.sampled_from(["red", "blue"]), unique=True))
def test_ctbench_enforcement_conserves_chips_and_points(ir, attempts, finishers):
    m = compile(ir)
    fired = 0
    for a in attempts:
        m = m.apply(a)
        fired += len(m.last_actions)
        for action in m.last_actions:
            if isinstance(action, ChipTransfer):
                assert action.giver != action.receiver
                assert a.holdings.of(action.giver).of(action.colour) >= 1  # only chips the giver has
            else:
                assert isinstance(action, Forfeit)
                assert action.player in m.forfeited
    assert fired <= len(ir.coverage)  # each entry fires at most once
    for p in finishers:
        m = m.apply(GoalReached(player=p))
    m = m.apply(GameEnd())
    net = {"red": 0, "blue": 0}
    for t in m.last_actions:
        assert isinstance(t, PointsTransfer) and t.giver in finishers
        net[t.giver] -= t.amount
        net[t.receiver] += t.amount
    assert sum(net.values()) == 0
