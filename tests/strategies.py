"""Hypothesis strategies for contracts of both games (shared by round-trip and monitor tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from contractlang import build
from contractlang.formatter import format_expr
from contractlang.ir import (
    ArrangementStep,
    AssertTerm,
    BinOp,
    Contingencies,
    ContractSimIR,
    CoverageTerm,
    CTBenchIR,
    DeductionTerms,
    DefectStep,
    EndStep,
    ExpectBreach,
    ExpectCarried,
    ExpectChip,
    ExpectDue,
    ExpectForfeit,
    ExpectNoBreach,
    ExpectNothing,
    ExpectOwed,
    ExpectPoints,
    ExpectScore,
    ExpectTerminated,
    ExpectUtility,
    GoalStep,
    Lit,
    MoveStep,
    Neg,
    PointsTerm,
    Ref,
    RolloverTerms,
    SubstitutionTerms,
    TradeStep,
    WeekStep,
)
from contractlang.vocab import PAYMENT_WEEKS, SETTINGS

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


# --- scenario tests beside a contract -------------------------------------------------


def _weeks_of(ir: ContractSimIR, draw) -> list:
    g = ir.setting_info.granularity
    weeks = sorted(draw(st.sets(st.integers(1, 11), max_size=5)))
    steps = []
    for w in weeks:
        kind = draw(st.sampled_from(["own", "nothing", "agreed"]))
        if kind != "own":
            steps.append(WeekStep(week=w, action=kind))
        elif w in PAYMENT_WEEKS:
            steps.append(WeekStep(week=w, action="pay", amount=draw(st.integers(0, 60)) * g))
        else:
            steps.append(WeekStep(week=w, action="deliver", items=draw(st.tuples(quantity, quantity, quantity))))
    return steps


@st.composite
def _contractsim_expectations(draw, ir: ContractSimIR, horizon: int):
    g = ir.setting_info.granularity
    roles = st.sampled_from(["customer", "supplier"])
    c = ir.contingencies
    choices = [
        st.builds(ExpectNoBreach, role=st.one_of(st.none(), roles)),
        st.builds(ExpectOwed, role=st.just("customer"), amount=st.integers(0, 60).map(lambda v: v * g)),
        st.builds(ExpectOwed, role=st.just("supplier"), items=st.tuples(quantity, quantity, quantity)),
        st.just(ExpectTerminated(terminated=False)),
    ]
    weeks = [w for w in range(1, horizon + 1)]
    customer_weeks = [w for w in weeks if w in PAYMENT_WEEKS]
    supplier_weeks = [w for w in weeks if w not in PAYMENT_WEEKS]
    clauses = ["deliver"] + [k for k in ("substitution", "payment_deduction", "rollover") if getattr(c, k)]
    if customer_weeks:
        choices.append(
            st.builds(
                ExpectBreach, role=st.just("customer"), week=st.sampled_from(customer_weeks), clause=st.just("pay")
            )
        )
        choices.append(
            st.builds(ExpectDue, week=st.sampled_from(customer_weeks), amount=st.integers(0, 9).map(lambda v: v * g))
        )
    if supplier_weeks:
        choices.append(
            st.builds(
                ExpectBreach,
                role=st.just("supplier"),
                week=st.one_of(st.none(), st.sampled_from(supplier_weeks)),
                clause=st.one_of(st.none(), st.sampled_from(clauses)),
            )
        )
        choices.append(
            st.builds(ExpectDue, week=st.sampled_from(supplier_weeks), items=st.tuples(quantity, quantity, quantity))
        )
        if c.rollover:
            choices.append(
                st.builds(
                    ExpectCarried, week=st.sampled_from(supplier_weeks), items=st.tuples(quantity, quantity, quantity)
                )
            )
    if c.grim_trigger:
        choices.append(st.builds(ExpectTerminated, week=st.one_of(st.none(), st.sampled_from(weeks))))
    return draw(st.lists(st.one_of(choices), min_size=1, max_size=4))


@st.composite
def _world(draw, ir: ContractSimIR):
    """The rest of a ContractSim test's world: an environment and some production weeks' orders, input prices,
    receipts (at most the order) and spoilage, each line drawn or left to its default."""
    from contractlang.ir import ContractSimWorld, SupplyWeek
    from contractlang.vocab import PRODUCTION_WEEKS

    g = ir.setting_info.granularity
    price = st.one_of(st.none(), st.integers(1, 3).map(lambda v: v * g))
    weeks = []
    for w in PRODUCTION_WEEKS:
        order = draw(st.one_of(st.none(), st.tuples(quantity, quantity, quantity)))
        receipts = (None, None, None)
        if order is not None:
            receipts = tuple(draw(st.one_of(st.none(), st.integers(0, o))) for o in order)
        weeks.append(
            SupplyWeek(
                week=w,
                order=order,
                prices=draw(st.tuples(price, price, price)),
                receipts=receipts,
                spoilage=draw(st.tuples(*[st.integers(0, 2)] * 3)),
            )
        )
    return ContractSimWorld(env=draw(st.integers(1, 6)), weeks=tuple(weeks))


def world_nodes(world, inputs: tuple[str, ...]) -> list:
    """The `given` lines that state `world` (an `env` line, then each production week's lines that differ from
    the defaults)."""
    from contractlang import ast

    nowhere = build.NOWHERE

    def quantities(values) -> tuple:
        return tuple(
            ast.Quantity(
                product=ast.Name(value=x, span=nowhere), amount=ast.IntLit(value=v, span=nowhere), span=nowhere
            )
            for x, v in zip(inputs, values)
            if v is not None
        )

    lines: list = [ast.GivenEnv(env=ast.IntLit(value=world.env, span=nowhere), span=nowhere)]
    for s in world.weeks:
        spec = ast.WeekSpec(form="single", weeks=(ast.IntLit(value=s.week, span=nowhere),), span=nowhere)
        line = lambda action, spec=spec, **kw: ast.GivenWeek(weeks=spec, action=action, span=nowhere, **kw)  # noqa: E731
        if s.order is not None:
            lines.append(line("order", items=quantities(s.order)))
        prices = tuple(
            ast.PriceEntry(
                product=ast.Name(value=x, span=nowhere), amount=ast.MoneyLit(value=p, span=nowhere), span=nowhere
            )
            for x, p in zip(inputs, s.prices)
            if p is not None
        )
        if prices:
            lines.append(line("prices", prices=prices))
        if any(r is not None for r in s.receipts):
            lines.append(line("receive", items=quantities(s.receipts)))
        if any(s.spoilage):
            lines.append(line("spoil", items=quantities(tuple(v or None for v in s.spoilage))))
    return lines


_holdings = st.tuples(quantity, quantity, quantity)


@st.composite
def _ctbench_scenario(draw, ir: CTBenchIR):
    steps = []
    for _ in range(draw(st.integers(0, 4))):
        steps.append(
            draw(
                st.one_of(
                    st.builds(
                        MoveStep,
                        player=players,
                        tile=st.tuples(st.integers(0, 3), st.integers(0, 3)),
                        tile_colour=st.sampled_from(["red", "blue", "green"]),
                        holdings=st.tuples(_holdings, _holdings),
                    ),
                    st.builds(GoalStep, player=players),
                    st.just(EndStep()),
                )
            )
        )
    if any(isinstance(s, EndStep) for s in steps):  # nothing happens after the game ends
        steps = steps[: next(k for k, s in enumerate(steps) if isinstance(s, EndStep)) + 1]
    choices = [st.just(ExpectNothing()), st.builds(ExpectForfeit, player=players, tile=st.none())]
    for entry in ir.coverage:
        choices.append(
            st.just(ExpectChip(tile=entry.tile, giver=entry.giver, receiver=entry.receiver, colour=entry.colour))
        )
    for p in ir.points:
        choices.append(st.just(ExpectPoints(giver=p.giver, receiver=p.receiver, amount=p.amount)))
    return steps, draw(st.lists(st.one_of(choices), min_size=1, max_size=3))


_some_chips = _holdings.filter(any)


@st.composite
def _board_scenario(draw, ir: CTBenchIR):
    """A CT-Bench test on a board, in a mode it may name: trades between the players among its moves, or in
    Pay-for-Partner mode accepted arrangements and defections, and scores expected. The chips are the game's
    there, so the moves state none (the checker's default holdings)."""
    steps, expects = draw(_ctbench_scenario(ir))
    mode = draw(st.sampled_from([None, "trade", "pfp"]))
    held = ((1, 1, 1), (1, 1, 1))
    steps = [s.model_copy(update={"holdings": held}) if isinstance(s, MoveStep) else s for s in steps]
    for _ in range(draw(st.integers(0, 3))):
        one = draw(players)
        other = "blue" if one == "red" else "red"
        if mode == "pfp":
            covers, asks = draw(st.tuples(_holdings, _holdings).filter(lambda pair: any(pair[0] + pair[1])))
            offer = ArrangementStep(payer=one, partner=other, covers=covers, asks=asks)
            step = draw(st.sampled_from([offer, DefectStep(player=one)]))
        else:
            step = TradeStep(giver=one, receiver=other, give=draw(_some_chips), receive=draw(_some_chips))
        ends = isinstance(steps[-1], EndStep) if steps else False
        steps.insert(draw(st.integers(0, len(steps) - ends)), step)
    expects += draw(st.lists(st.builds(ExpectScore, player=players, amount=st.integers(0, 200)), max_size=2))
    return steps, expects, draw(st.integers(0, 79)), mode


@st.composite
def contracts_with_tests(draw):
    """A contract's syntax tree holding scenario tests that type-check against it (`given` steps and `expect` lines
    drawn from what the game can produce and the clauses the contract has)."""
    from contractlang import ast
    from contractlang.scenario.generate import given_nodes
    from contractlang.scenario.run import expect_node

    ir = draw(contract_irs)
    products = ir.setting_info.products if isinstance(ir, ContractSimIR) else ()
    tests = []
    for k in range(draw(st.integers(1, 3))):
        world = []
        if isinstance(ir, ContractSimIR):
            steps = _weeks_of(ir, draw)
            if draw(st.booleans()):  # a test that names its environment plays all 11 weeks
                world = world_nodes(draw(_world(ir)), ir.setting_info.inputs)
            horizon = steps[-1].week if steps and not world else 11
            expects = draw(_contractsim_expectations(ir, horizon))
            if world:
                g = ir.setting_info.granularity
                amounts = st.integers(-50, 300).map(lambda v, g=g: v * g)
                utility = st.builds(ExpectUtility, role=st.sampled_from(["customer", "supplier"]), amount=amounts)
                expects += draw(st.lists(utility, max_size=2))
        elif draw(st.booleans()):
            steps, expects, board, mode = draw(_board_scenario(ir))
            world = [ast.GivenBoard(board=ast.IntLit(value=board, span=build.NOWHERE), span=build.NOWHERE)]
            if mode is not None:
                name = ast.Name(value=mode, span=build.NOWHERE)
                world.append(ast.GivenMode(mode=name, span=build.NOWHERE))
        else:
            steps, expects = draw(_ctbench_scenario(ir))
        nowhere = build.NOWHERE
        held = ((1, 1, 1), (1, 1, 1)) if world and isinstance(ir, CTBenchIR) else ()
        given = [g for s in steps for g in given_nodes(s, products, held)]
        if world:  # the world's lines interleave with the weeks' anywhere in `given`
            at = draw(st.integers(0, len(given)))
            given[at:at] = world
        tests.append(
            ast.ScenarioTest(
                name=f"t{k}",
                name_span=nowhere,
                given=tuple(given),
                expect=tuple(expect_node(e, products) for e in expects),
                span=nowhere,
            )
        )
    return build.from_ir(ir).model_copy(update={"tests": tuple(tests)})
