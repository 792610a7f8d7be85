"""Tests for what nothing covers: a shortest event sequence that fires each clause, found by breadth-first search
through the monitor itself, shrunk, and written as a scenario test; a clause no sequence fires is dead.

The search is exhaustive over a small alphabet of what a week or a move can be (ContractSim: as agreed, nothing,
one unit short of one product, one unit swapped for enough of another to substitute for it; CT-Bench: each cover
entry's receiver moving onto its tile with and without the giver's chip, each player reaching the goal, the game's
end). States the monitor cannot tell apart for the future are merged, so the search is small and the first path to
fire a clause is a shortest one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from contractlang import ast
from contractlang.checker import DEFAULT_HOLDINGS
from contractlang.diagnostics import Span
from contractlang.formatter import format_tests
from contractlang.interpreter import EventError
from contractlang.interpreter.contractsim import ContractSimMonitor
from contractlang.ir import (
    ArrangementStep,
    CheckedContract,
    ContractSimIR,
    CTBenchIR,
    DefectStep,
    EndStep,
    GoalStep,
    MoveStep,
    Step,
    TradeStep,
    WeekStep,
)
from contractlang.scenario.clauses import Clause, clauses, fired
from contractlang.scenario.run import events_of, expect_node, observe
from contractlang.vocab import COLOURS, PAYMENT_WEEKS, PRODUCTION_WEEKS, SUBSTITUTION_WEIGHTS, WEEKS, Frozen

MAX_MOVES = 8  # CT-Bench sequences: every term fires within (entries + goals + end) events
NOWHERE = Span(0, 0, 0, 0)


class Dead(Frozen):
    """A clause no event sequence fires, and why."""

    clause: Clause
    reason: str


class Found(Frozen):
    """A shortest, shrunk sequence that fires `clause`."""

    clause: Clause
    steps: tuple[Step, ...]


def _week_actions(monitor: ContractSimMonitor) -> list[WeekStep]:
    w = monitor.week
    if w in PAYMENT_WEEKS:
        return [WeekStep(week=w, action="agreed"), WeekStep(week=w, action="nothing")]
    due = monitor.delivery_due()
    actions = [WeekStep(week=w, action="agreed"), WeekStep(week=w, action="nothing")]
    for d in range(3):
        if due[d] == 0:
            continue
        short = tuple(q - (i == d) for i, q in enumerate(due))
        actions.append(WeekStep(week=w, action="deliver", items=short))
        for e in range(3):
            if e != d:  # enough of product e to stand in for the missing unit of d at 4:2:1 ([CS-13])
                extra = math.ceil(SUBSTITUTION_WEIGHTS[d] / SUBSTITUTION_WEIGHTS[e])
                swapped = tuple(q + extra * (i == e) for i, q in enumerate(short))
                actions.append(WeekStep(week=w, action="deliver", items=swapped))
    return actions


def _move_actions(ir: CTBenchIR) -> list[Step]:
    plenty, none = DEFAULT_HOLDINGS, (0, 0, 0)
    actions: list[Step] = []
    for entry in ir.coverage:
        colour = entry.colour or "red"
        for giver_holds in (plenty, none):
            holdings = (giver_holds, plenty) if entry.giver == "red" else (plenty, giver_holds)
            actions.append(MoveStep(player=entry.receiver, tile=entry.tile, tile_colour=colour, holdings=holdings))
    actions += [GoalStep(player="red"), GoalStep(player="blue"), EndStep()]
    return actions


def _key(monitor) -> tuple:
    """What of a monitor's state decides what it does next (and what fires)."""
    if isinstance(monitor, ContractSimMonitor):
        return (
            monitor.week,
            monitor.memory,
            monitor.pending_deduction,
            monitor.customer_first_violation is None,
            monitor.supplier_first_violation is None,
        )
    return (monitor.used, monitor.finished, monitor.forfeited, monitor.ended)


def _apply(monitor, step: Step):
    for event in events_of(monitor, step):
        monitor = monitor.apply(event)
    return monitor


def search(checked: CheckedContract, targets: Iterable[str]) -> dict[str, tuple[Step, ...]]:
    """For each clause key in `targets`, a shortest step sequence whose run fires it (absent: none found)."""
    from contractlang.interpreter import compile

    wanted = set(targets)
    found: dict[str, tuple[Step, ...]] = {}
    frontier = [(compile(checked.ir), ())]
    seen = {_key(frontier[0][0])}
    depth = len(WEEKS) if isinstance(checked.ir, ContractSimIR) else MAX_MOVES
    for _ in range(depth):
        if not frontier or wanted <= found.keys():
            break
        nxt = []
        for monitor, path in frontier:
            actions = _week_actions(monitor) if isinstance(monitor, ContractSimMonitor) else _move_actions(checked.ir)
            for step in actions:
                try:
                    after = _apply(monitor, step)
                except EventError:
                    continue  # an event the monitor refuses here (a second goal, a move after the end)
                new_path = path + (step,)
                for key in (fired(checked, after) & wanted) - found.keys():
                    found[key] = new_path
                k = _key(after)
                if k not in seen:
                    seen.add(k)
                    nxt.append((after, new_path))
        frontier = nxt
    return found


def shrink(checked: CheckedContract, key: str, steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """Replace each week that deviates by `as agreed`, and drop each move, while the clause still fires."""
    current = list(steps)
    for i in reversed(range(len(current))):
        step = current[i]
        if isinstance(step, WeekStep):
            if step.action == "agreed":
                continue
            trial = current[:i] + [WeekStep(week=step.week, action="agreed")] + current[i + 1 :]
        else:
            trial = current[:i] + current[i + 1 :]
        try:
            if key in fired(checked, _replay(checked, trial)):
                current = trial
        except EventError:
            continue
    return tuple(current)


def _replay(checked: CheckedContract, steps) -> object:
    from contractlang.interpreter import compile

    monitor = compile(checked.ir)
    for step in steps:
        monitor = _apply(monitor, step)
    return monitor


def dead_reason(checked: CheckedContract, clause: Clause) -> str:
    """Why nothing fires `clause`, in the contract's terms where the terms say it."""
    ir = checked.ir
    if clause.kind == "pay":
        return f"it schedules {clause.label.split(': ')[-1]}: nothing ever falls due"
    if clause.kind == "deliver":
        return "it schedules no units: nothing is ever required"
    if clause.kind == "on_goal":
        return f"it transfers {ir.points[clause.index].amount} points: nothing ever moves"
    if clause.kind == "rollover" and ir.contingencies.rollover.max_deficit == 0:
        return "max_deficit 0: no deficit can ever be carried"
    if clause.kind == "payment_deduction" and not any(ir.payment(w + 1) for w in PRODUCTION_WEEKS):
        return "no shortfall is ever deducted from a payment: the payments after the production weeks are $0"
    return "no sequence of events through the monitor fires it (the search is exhaustive over its alphabet)"


def generate(checked: CheckedContract, covered: set[str]) -> tuple[tuple[Found, ...], tuple[Dead, ...]]:
    """For each clause of `checked` not in `covered`: a shrunk shortest sequence that fires it, or why none does."""
    todo = [c for c in clauses(checked) if c.key not in covered]
    paths = search(checked, [c.key for c in todo])
    found, dead = [], []
    for clause in todo:
        if clause.key in paths:
            found.append(Found(clause=clause, steps=shrink(checked, clause.key, paths[clause.key])))
        else:
            dead.append(Dead(clause=clause, reason=dead_reason(checked, clause)))
    return tuple(found), tuple(dead)


def given_nodes(step: Step, products: tuple[str, ...], held: tuple = ()) -> list[ast.Given]:
    """The `given` lines of one step; a move first states the chips of each player whose chips differ from
    `held` (what the test's earlier lines left them holding)."""

    def name(v):
        return ast.Name(value=v, span=NOWHERE)

    def integer(v):
        return ast.IntLit(value=v, span=NOWHERE)

    if isinstance(step, WeekStep):
        weeks = ast.WeekSpec(form="single", weeks=(integer(step.week),), span=NOWHERE)
        amount = ast.MoneyLit(value=step.amount, span=NOWHERE) if step.amount is not None else None
        items = tuple(
            ast.Quantity(product=name(d), amount=integer(q), span=NOWHERE) for d, q in zip(products, step.items or ())
        )
        return [ast.GivenWeek(weeks=weeks, action=step.action, amount=amount, items=items, span=NOWHERE)]
    if isinstance(step, MoveStep):
        lines: list[ast.Given] = []
        for k, (player, chips) in enumerate(zip(("red", "blue"), step.holdings)):
            if held and held[k] == chips:
                continue
            counts = tuple(
                ast.Quantity(product=name(c), amount=integer(n), span=NOWHERE) for c, n in zip(COLOURS, chips)
            )
            lines.append(ast.GivenHolds(player=name(player), chips=counts, span=NOWHERE))
        tile = ast.Tile(row=integer(step.tile[0]), col=integer(step.tile[1]), span=NOWHERE)
        lines.append(ast.GivenMove(player=name(step.player), colour=name(step.tile_colour), tile=tile, span=NOWHERE))
        return lines
    if isinstance(step, GoalStep):
        return [ast.GivenGoal(player=name(step.player), span=NOWHERE)]

    def chips(counts) -> tuple:
        return tuple(
            ast.Quantity(product=name(c), amount=integer(n), span=NOWHERE) for c, n in zip(COLOURS, counts) if n
        )

    if isinstance(step, TradeStep):
        giver, receiver = name(step.giver), name(step.receiver)
        return [
            ast.GivenTrade(
                giver=giver, receiver=receiver, give=chips(step.give), receive=chips(step.receive), span=NOWHERE
            )
        ]
    if isinstance(step, ArrangementStep):
        covers = chips(step.covers) or (ast.Quantity(product=name(COLOURS[0]), amount=integer(0), span=NOWHERE),)
        payer, partner = name(step.payer), name(step.partner)
        return [ast.GivenArrangement(payer=payer, partner=partner, covers=covers, asks=chips(step.asks), span=NOWHERE)]
    if isinstance(step, DefectStep):
        return [ast.GivenDefect(player=name(step.player), span=NOWHERE)]
    return [ast.GivenEnd(span=NOWHERE)]


def test_source(checked: CheckedContract, found: tuple[Found, ...]) -> str:
    """A `tests for` block with one test per found sequence, its expectations what the monitor says of it."""
    ir = checked.ir
    products = ir.setting_info.products if isinstance(ir, ContractSimIR) else ()
    tests = []
    for f in found:
        shown = [
            s
            for i, s in enumerate(f.steps)
            if not (isinstance(s, WeekStep) and s.action == "agreed" and i < len(f.steps) - 1)
        ]
        given, held = [], (DEFAULT_HOLDINGS, DEFAULT_HOLDINGS)
        for s in shown:
            given += given_nodes(s, products, held)
            held = s.holdings if isinstance(s, MoveStep) else held
        expects = tuple(expect_node(e, products) for e in observe(checked, f.steps))
        tests.append(
            ast.ScenarioTest(
                name=f"fires {f.clause.label}",
                name_span=NOWHERE,
                given=tuple(given),
                expect=expects,
                span=NOWHERE,
            )
        )
    return format_tests(ir.name, tuple(tests), products)
