"""Hypothesis strategies for contracts of both games (shared by round-trip and monitor tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from contractlang import build
from contractlang.formatter import format_expr
from contractlang.ir import (
    AssertTerm,
    BinOp,
    Contingencies,
    ContractSimIR,
    CoverageTerm,
    CTBenchIR,
    DeductionTerms,
    Lit,
    Neg,
    PointsTerm,
    Ref,
    RolloverTerms,
    SubstitutionTerms,
)
from contractlang.vocab import SETTINGS

# names never hold control or format characters: the checker refuses them (E107)
label_text = st.text(
    alphabet=st.characters(blacklist_characters='"\n\r', blacklist_categories=("Cs", "Cc", "Cf")), max_size=12
)
quantity = st.integers(min_value=0, max_value=10)


def _money_expr(setting, depth):
    g = SETTINGS[setting].granularity
    leaves = st.one_of(
        st.integers(0, 500).map(lambda v: Lit(value=v * g, unit="money")),
        st.sampled_from(["total_pay", "total_value", "budget", "capital"]).map(lambda n: Ref(name=n)),
        st.integers(0, 2).map(lambda i: Ref(name="price", product=i)),
    )
    if depth == 0:
        return leaves
    sub = _money_expr(setting, depth - 1)
    count = _count_expr(depth - 1)
    return st.one_of(
        leaves,
        st.builds(lambda o, a, b: BinOp(op=o, left=a, right=b), st.sampled_from(["+", "-"]), sub, sub),
        st.builds(lambda a, b: BinOp(op="*", left=a, right=b), sub, count),
        st.builds(lambda a, b: BinOp(op="*", left=a, right=b), count, sub),
        sub.map(lambda e: Neg(operand=e)),
    )


def _count_expr(depth):
    leaves = st.one_of(
        st.integers(0, 1000).map(lambda v: Lit(value=v, unit="count")),
        st.integers(0, 2).map(lambda i: Ref(name="total_deliver", product=i)),
    )
    if depth == 0:
        return leaves
    sub = _count_expr(depth - 1)
    return st.one_of(
        leaves,
        st.builds(lambda o, a, b: BinOp(op=o, left=a, right=b), st.sampled_from(["+", "-", "*"]), sub, sub),
        sub.map(lambda e: Neg(operand=e)),
    )


@st.composite
def assert_terms(draw, setting: str):
    unit = draw(st.sampled_from(["money", "count"]))
    side = _money_expr(setting, 2) if unit == "money" else _count_expr(2)
    left, right = draw(side), draw(side)
    op = draw(st.sampled_from(["==", "!=", "<=", ">=", "<", ">"]))
    products = SETTINGS[setting].products
    tree = build.compare(op, left, right, products).expr
    return AssertTerm(op=op, left=left, right=right, unit=unit, text=format_expr(tree))


@st.composite
def contractsim_irs(draw, settings=tuple(SETTINGS)):
    setting = draw(st.sampled_from(settings))
    g = SETTINGS[setting].granularity
    deliveries = tuple(draw(st.tuples(quantity, quantity, quantity)) for _ in range(5))
    floor = tuple(min(row[d] for row in deliveries) for d in range(3))

    def minimum():
        return tuple(draw(st.integers(0, floor[d])) for d in range(3))

    contingencies = Contingencies(
        substitution=SubstitutionTerms(min_qty=minimum()) if draw(st.booleans()) else None,
        payment_deduction=DeductionTerms(min_qty=minimum()) if draw(st.booleans()) else None,
        rollover=RolloverTerms(max_deficit=draw(st.integers(0, 2))) if draw(st.booleans()) else None,
        grim_trigger=draw(st.booleans()),
    )
    return ContractSimIR(
        name=draw(label_text),
        setting=setting,
        parties=(draw(label_text), draw(label_text)),
        prices=tuple(draw(st.integers(0, 200)) * g for _ in range(3)),
        deliveries=deliveries,
        payments=tuple(draw(st.integers(0, 60)) * g for _ in range(6)),
        contingencies=contingencies,
        asserts=tuple(draw(st.lists(assert_terms(setting), max_size=3))),
    )


players = st.sampled_from(["red", "blue"])


@st.composite
def coverage_terms(draw):
    giver = draw(players)
    return CoverageTerm(
        tile=(draw(st.integers(0, 3)), draw(st.integers(0, 3))),
        giver=giver,
        receiver="blue" if giver == "red" else "red",
        colour=draw(st.sampled_from([None, "red", "blue", "green"])),
    )


@st.composite
def ctbench_irs(draw):
    givers = draw(st.lists(players, unique=True, max_size=2))
    return CTBenchIR(
        name=draw(label_text),
        parties=(draw(label_text), draw(label_text)),
        coverage=tuple(draw(st.lists(coverage_terms(), max_size=6))),
        points=tuple(
            PointsTerm(giver=g, receiver="blue" if g == "red" else "red", amount=draw(st.integers(0, 20)))
            for g in givers
        ),
    )


contract_irs = st.one_of(contractsim_irs(), ctbench_irs())
