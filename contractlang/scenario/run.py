"""Run scenario tests through the monitor the games drive, and judge each expectation.

A ContractSim scenario is played week by week on a fresh monitor (`contractlang.interpreter.compile`): a week
given `as agreed` (or left out) pays or delivers exactly what the monitor says is due then, so a test names
only the weeks that matter. A CT-Bench scenario feeds its moves, goals and the game's end in order.
"""

from __future__ import annotations

from pathlib import Path

from contractlang import ast
from contractlang.diagnostics import Span
from contractlang.formatter import format_expect, money
from contractlang.interpreter import ChipTransfer, CTBenchMonitor, Forfeit, PointsTransfer, compile
from contractlang.interpreter.contractsim import ContractSimMonitor, WeekStatus
from contractlang.interpreter.events import (
    ChipCounts,
    Delivery,
    GameEnd,
    GoalReached,
    Holdings,
    MoveAttempt,
    Payment,
    WeekEnd,
)
from contractlang.ir import (
    CheckedContract,
    CheckedScenario,
    ContractSimIR,
    EndStep,
    Expectation,
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
    MoveStep,
    Step,
    WeekStep,
)
from contractlang.scenario.clauses import breach_clause, fired
from contractlang.scenario.world import Outcome, Worlds
from contractlang.vocab import COLOURS, PAYMENT_WEEKS, Frozen


class Failure(Frozen):
    """One expectation that did not hold: where it is written, what it says, what the monitor said instead."""

    file: str
    span: Span
    expected: str
    got: str
    trace: tuple[str, ...] = ()  # the monitor's rows for the week (or the enforcement) the expectation is about
    kind: str = ""  # the expectation's kind (`breach`, `utility`, ...); empty for a test the engine could not play
    problem: str | None = None  # a test the engine could not play or judge: why, in place of expected/got

    @property
    def summary(self) -> str:
        """`expected …, got …`, or why the engine could not play or judge the test."""
        return self.problem or f"expected {self.expected}, got {self.got}"

    def text(self) -> str:
        head = f"{self.file}:{self.span.line}:{self.span.column}: {self.summary}"
        return "\n".join([head, *("    " + row for row in self.trace)])


class TestResult(Frozen):
    """One scenario test's outcome; `fired` are the keys of the clauses its run fired."""

    __test__ = False  # a result, not a pytest class

    name: str
    contract: str
    file: str
    span: Span
    failures: tuple[Failure, ...] = ()
    fired: tuple[str, ...] = ()
    utilities: dict[str, int] = {}  # each role's realised utility, when the test's world was played

    @property
    def passed(self) -> bool:
        return not self.failures


def play(checked: CheckedContract, steps: tuple[Step, ...]) -> ContractSimMonitor | CTBenchMonitor:
    """The monitor after the scenario's steps: one fresh `compile(ir)`, each event through `apply`."""
    return replay(checked, steps)[0]


def replay(checked: CheckedContract, steps: tuple[Step, ...]) -> tuple[ContractSimMonitor | CTBenchMonitor, tuple]:
    """The monitor after the scenario's steps, and the events it was given in order."""
    monitor, events = compile(checked.ir), []
    for step in steps:
        for event in events_of(monitor, step):
            monitor = monitor.apply(event)
            events.append(event)
    return monitor, tuple(events)


def events_of(monitor, step: Step) -> list:
    """The monitor events one step stands for, given the monitor's state before it."""
    if isinstance(step, WeekStep):
        w = step.week
        products = monitor.contract.ir.setting_info.products
        if step.action == "pay" or (step.action == "agreed" and w in PAYMENT_WEEKS):
            amount = step.amount if step.action == "pay" else monitor.payment_due()
            return [Payment(week=w, amount=amount), WeekEnd(week=w)]
        if step.action == "deliver" or step.action == "agreed":
            items = step.items if step.action == "deliver" else monitor.delivery_due()
            return [Delivery(week=w, product=d, qty=q) for d, q in zip(products, items)] + [WeekEnd(week=w)]
        return [WeekEnd(week=w)]
    if isinstance(step, MoveStep):
        red, blue = (ChipCounts(**dict(zip(COLOURS, h))) for h in step.holdings)
        return [
            MoveAttempt(
                player=step.player, tile=step.tile, tile_colour=step.tile_colour, holdings=Holdings(red=red, blue=blue)
            )
        ]
    if isinstance(step, GoalStep):
        return [GoalReached(player=step.player)]
    if not isinstance(step, EndStep):  # a trade, an arrangement, a defection
        return []  # the monitor sees them only in the chips the players hold at their next moves
    return [GameEnd()]


# --- what the monitor says, spelled as an expectation -----------------------------------------------------


def _name(value: str) -> ast.Name:
    return ast.Name(value=value, span=_NOWHERE)


def _int(value: int) -> ast.IntLit:
    return ast.IntLit(value=value, span=_NOWHERE)


_NOWHERE = Span(0, 0, 0, 0)


def _quantities(products: tuple[str, ...], items) -> tuple[ast.Quantity, ...]:
    return tuple(ast.Quantity(product=_name(d), amount=_int(q), span=_NOWHERE) for d, q in zip(products, items))


def _tile(tile: tuple[int, int]) -> ast.Tile:
    return ast.Tile(row=_int(tile[0]), col=_int(tile[1]), span=_NOWHERE)


def expect_node(e: Expectation, products: tuple[str, ...] = ()) -> ast.Expect:
    """The syntax of an expectation (the formatter spells it)."""
    n, s = _NOWHERE, {"span": _NOWHERE}
    if isinstance(e, ExpectBreach):
        return ast.ExpectBreach(
            party=_name(e.role),
            week=_int(e.week) if e.week else None,
            clause=_name(e.clause) if e.clause else None,
            span=n,
        )
    if isinstance(e, ExpectNoBreach):
        return ast.ExpectNoBreach(party=_name(e.role) if e.role else None, **s)
    if isinstance(e, (ExpectOwed, ExpectDue)):
        amount = ast.MoneyLit(value=e.amount, span=n) if e.amount is not None else None
        items = _quantities(products, e.items) if e.items is not None else ()
        if isinstance(e, ExpectOwed):
            return ast.ExpectOwed(party=_name(e.role), amount=amount, items=items, **s)
        return ast.ExpectDue(week=_int(e.week), amount=amount, items=items, **s)
    if isinstance(e, ExpectCarried):
        return ast.ExpectCarried(week=_int(e.week), items=_quantities(products, e.items), **s)
    if isinstance(e, ExpectTerminated):
        return ast.ExpectTerminated(week=_int(e.week) if e.week else None, negated=not e.terminated, **s)
    if isinstance(e, ExpectChip):
        colour = _name(e.colour) if e.colour else None
        return ast.ExpectChip(tile=_tile(e.tile), giver=_name(e.giver), receiver=_name(e.receiver), colour=colour, **s)
    if isinstance(e, ExpectForfeit):
        return ast.ExpectForfeit(player=_name(e.player), tile=_tile(e.tile) if e.tile else None, **s)
    if isinstance(e, ExpectPoints):
        return ast.ExpectPoints(giver=_name(e.giver), amount=_int(e.amount), receiver=_name(e.receiver), **s)
    if isinstance(e, ExpectUtility):
        return ast.ExpectUtility(party=_name(e.role), amount=ast.MoneyLit(value=e.amount, span=n), **s)
    if isinstance(e, ExpectScore):
        return ast.ExpectScore(player=_name(e.player), amount=_int(e.amount), **s)
    return ast.ExpectNothing(**s)


def spell(e: Expectation, products: tuple[str, ...] = ()) -> str:
    return format_expect(expect_node(e, products), products)


def week_row(status: WeekStatus, products: tuple[str, ...]) -> str:
    """One closed week as `trace` reports it."""
    if status.role == "customer":
        text = f"week {status.week} (customer): due {money(status.due)}, paid {money(status.paid)}"
        if status.deduction:
            text += f" ({money(status.nominal)} scheduled, {money(status.deduction)} deducted)"
    else:

        def goods(t):
            return ", ".join(f"{d} {q}" for d, q in zip(products, t))

        text = (
            f"week {status.week} (supplier): required {goods(status.required)}, delivered {goods(status.delivered)}, "
            f"credited {goods(status.credited)}"
        )
        if any(status.memory_after):
            text += f", carried {goods(status.memory_after)}"
    text += ": compliant" if status.compliant else ": BREACH"
    return text + "".join(f"; {notice}" for notice in status.enforcement)


# --- judging ----------------------------------------------------------------------------------------------


def _observed_contractsim(e: Expectation, m: ContractSimMonitor) -> tuple[Expectation, int | None]:
    """What the monitor says on the subject of `e`, as an expectation, and the week it concerns."""
    rows = {s.week: s for s in m.weeks}
    if isinstance(e, (ExpectBreach, ExpectNoBreach)):
        roles = [e.role] if e.role else ["customer", "supplier"]
        firsts = sorted((m.first_violation(r), r) for r in roles if m.first_violation(r) is not None)
        if not firsts:
            return ExpectNoBreach(role=e.role), None
        week, role = firsts[0]
        return ExpectBreach(role=role, week=week, clause=breach_clause(rows[week], m)), week
    if isinstance(e, ExpectOwed):
        last = next((s for s in reversed(m.weeks) if s.role == e.role), None)
        if e.role == "customer":
            owed = max(last.due - last.paid, 0) if last else 0
            return ExpectOwed(role="customer", amount=owed), last.week if last else None
        owed_items = tuple(r - c for r, c in zip(last.required, last.credited)) if last else (0, 0, 0)
        return ExpectOwed(role="supplier", items=owed_items), last.week if last else None
    if isinstance(e, ExpectDue):
        s = rows[e.week]
        if s.role == "customer":
            return ExpectDue(week=e.week, amount=s.due), e.week
        return ExpectDue(week=e.week, items=s.required), e.week
    if isinstance(e, ExpectCarried):
        return ExpectCarried(week=e.week, items=rows[e.week].memory_after), e.week
    assert isinstance(e, (ExpectTerminated, ExpectNothing))  # the checker admits no other ContractSim expectation
    ended = next((s.week for s in m.weeks if s.enforcement), None)
    if ended is None:
        return (ExpectNothing() if isinstance(e, ExpectNothing) else ExpectTerminated(terminated=False)), None
    return ExpectTerminated(week=ended), ended


def _holds_contractsim(e: Expectation, observed: Expectation) -> bool:
    """An expectation that leaves out a week or a clause holds for any."""
    if isinstance(e, ExpectBreach) and isinstance(observed, ExpectBreach):
        return (
            observed.role == e.role
            and (e.week is None or observed.week == e.week)
            and (e.clause is None or observed.clause == e.clause)
        )
    if isinstance(e, ExpectTerminated) and e.terminated and e.week is None:
        return isinstance(observed, ExpectTerminated) and observed.terminated
    return observed == e


def _judge_ctbench(e: Expectation, m: CTBenchMonitor) -> tuple[bool, str]:
    actions = m.actions
    if isinstance(e, ExpectChip):
        hit = any(
            isinstance(a, ChipTransfer)
            and a.tile == e.tile
            and a.giver == e.giver
            and a.receiver == e.receiver
            and (e.colour is None or a.colour == e.colour)
            for a in actions
        )
        return hit, _enforced(m)
    if isinstance(e, ExpectForfeit):
        hit = any(
            isinstance(a, Forfeit) and a.player == e.player and (e.tile is None or a.tile == e.tile) for a in actions
        )
        return hit, _enforced(m)
    if isinstance(e, ExpectPoints):
        hit = any(
            isinstance(a, PointsTransfer) and (a.giver, a.receiver, a.amount) == (e.giver, e.receiver, e.amount)
            for a in actions
        )
        return hit, _enforced(m) if m.ended else "the game never ended (add `game ends` to `given`)"
    assert isinstance(e, ExpectNothing)
    return not actions, _enforced(m)


def _enforced(m: CTBenchMonitor) -> str:
    """The monitor's enforcement actions, each spelled as the expectation that would name it."""
    said = []
    for a in m.actions:
        if isinstance(a, ChipTransfer):
            said.append(spell(ExpectChip(tile=a.tile, giver=a.giver, receiver=a.receiver, colour=a.colour)))
        elif isinstance(a, Forfeit):
            said.append(spell(ExpectForfeit(player=a.player, tile=a.tile)))
        elif isinstance(a, PointsTransfer):
            said.append(spell(ExpectPoints(giver=a.giver, receiver=a.receiver, amount=a.amount)))
        else:
            said.append(f"a blocked payment for {a.receiver} at ({a.tile[0]},{a.tile[1]})")
    return "; ".join(said) or "nothing enforced"


PAYOFFS = (ExpectUtility, ExpectScore)
"""The expectations only a game's engine can judge: a ContractSim utility, a CT-Bench score."""


def _played_world(
    checked: CheckedContract, scenario: CheckedScenario, events: tuple, worlds: Worlds | None
) -> Outcome | Failure | None:
    """What the game's engine made of a test that expects a utility or a score, or is played on a board; or the
    failure that says why it could not."""
    payoffs = [span for e, span in zip(scenario.ir.expects, scenario.expect_spans) if isinstance(e, PAYOFFS)]
    if not payoffs and scenario.ir.board is None:
        return None
    world = worlds.get(checked.ir.kind) if worlds is not None else None
    if world is None:
        payoff = "a utility" if isinstance(checked.ir, ContractSimIR) else "a score"
        what = "a board" if scenario.ir.board is not None else payoff
        problem = (
            f"{what} needs the game's engine, which this run was not given: run the test with `contractlang test` "
            "or `cl.test`"
        )
        span = scenario.given_spans["board"] if scenario.ir.board is not None else payoffs[0]
        return Failure(file=scenario.file, span=span, expected="", got="", problem=problem)
    outcome = world.play(checked.ir, scenario.ir, events)
    if outcome.fault is not None:
        span = scenario.given_span(outcome.fault.given)
        problem = f"the game cannot play this: {outcome.fault.message}"
        return Failure(file=scenario.file, span=span, expected="", got="", problem=problem, trace=outcome.rows)
    return outcome


def _judge_payoff(e: ExpectUtility | ExpectScore, span: Span, file: str, played) -> Failure | None:
    """A utility or a score against what the engine made of the test (exactly: both are whole numbers)."""
    if not isinstance(played, Outcome):
        return None  # the engine's failure already stands for it
    who = e.role if isinstance(e, ExpectUtility) else e.player
    got = played.utilities[who]
    if got == e.amount:
        return None
    said = spell(e.model_copy(update={"amount": got}))
    return Failure(file=file, span=span, expected=spell(e), got=said, trace=played.rows, kind=e.kind)


def run_scenario(checked: CheckedContract, scenario: CheckedScenario, worlds: Worlds | None = None) -> TestResult:
    """Play one test on a fresh monitor and judge each of its expectations; a utility or a score, and a test on
    a board, through the game's engine in `worlds` (its contract kind's)."""
    monitor, events = replay(checked, scenario.ir.steps)
    played = _played_world(checked, scenario, events, worlds)
    failures = [played] if isinstance(played, Failure) else []
    if scenario.ir.board is not None and isinstance(played, Failure):
        # on a board the engine's moves are the monitor's events: with none, there is nothing else to judge
        return TestResult(
            name=scenario.ir.name,
            contract=scenario.ir.contract,
            file=scenario.file,
            span=scenario.span,
            failures=(played,),
        )
    if isinstance(played, Outcome) and played.events:  # on a board, the monitor sees the moves the engine made
        monitor = compile(checked.ir)
        for event in played.events:
            monitor = monitor.apply(event)
    for e, span in zip(scenario.ir.expects, scenario.expect_spans):
        if isinstance(e, PAYOFFS):
            failure = _judge_payoff(e, span, scenario.file, played)
            failures.extend([failure] if failure else [])
            continue
        if isinstance(monitor, ContractSimMonitor):
            products = checked.ir.setting_info.products
            observed, week = _observed_contractsim(e, monitor)
            week = getattr(e, "week", None) or week  # the trace of the week the expectation names
            ok, got = _holds_contractsim(e, observed), spell(observed, products)
            rows = tuple(week_row(s, products) for s in monitor.weeks if s.week == week)
        else:
            ok, got = _judge_ctbench(e, monitor)
            products, rows = (), ()
        if not ok:
            failures.append(
                Failure(file=scenario.file, span=span, expected=spell(e, products), got=got, trace=rows, kind=e.kind)
            )
    return TestResult(
        name=scenario.ir.name,
        contract=scenario.ir.contract,
        file=scenario.file,
        span=scenario.span,
        failures=tuple(failures),
        fired=tuple(sorted(fired(checked, monitor))),
        utilities=played.utilities if isinstance(played, Outcome) else {},
    )


def observe(checked: CheckedContract, steps: tuple[Step, ...]) -> tuple[Expectation, ...]:
    """What the monitor says after `steps`, as the expectations a test of them would state (generated tests)."""
    monitor = play(checked, steps)
    if isinstance(monitor, CTBenchMonitor):
        said: list[Expectation] = []
        for a in monitor.actions:
            if isinstance(a, ChipTransfer):
                said.append(ExpectChip(tile=a.tile, giver=a.giver, receiver=a.receiver, colour=a.colour))
            elif isinstance(a, Forfeit):
                said.append(ExpectForfeit(player=a.player, tile=a.tile))
            elif isinstance(a, PointsTransfer):
                said.append(ExpectPoints(giver=a.giver, receiver=a.receiver, amount=a.amount))
        return tuple(said) or (ExpectNothing(),)
    assert isinstance(checked.ir, ContractSimIR)
    last = monitor.weeks[-1]
    said = [
        _observed_contractsim(ExpectNoBreach(), monitor)[0],
        _observed_contractsim(ExpectDue(week=last.week), monitor)[0],
    ]
    if checked.ir.contingencies.rollover is not None and last.role == "supplier":
        said.append(ExpectCarried(week=last.week, items=last.memory_after))
    if checked.ir.contingencies.grim_trigger:
        said.append(_observed_contractsim(ExpectTerminated(), monitor)[0])
    return tuple(said)


def contract_files(paths) -> list[Path]:
    """The `.contract` files under `paths` (a file is taken as given), sorted."""
    found: list[Path] = []
    for p in map(Path, paths):
        found.extend(sorted(p.rglob("*.contract")) if p.is_dir() else [p])
    return list(dict.fromkeys(found))
