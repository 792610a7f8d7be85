"""Syntax trees made in code rather than parsed: how generated contracts reach the formatter.

Whatever writes contract source (the IR of a solved or negotiated contract, the rules translator's reading
of prose, a CT-Bench judge's summary) builds a tree here and prints it with `formatter.format_contracts`;
no other module spells the surface syntax. A tree may be incomplete (a translation that misses a price):
the checker, reading the printed text back, names what is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from contractlang import ast
from contractlang.diagnostics import Span
from contractlang.ir import BinOp, ContractIR, ContractSimIR, CTBenchIR, IrExpr, Lit, Neg, Ref
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTINGS

NOWHERE = Span(line=0, column=0, end_line=0, end_column=0)


def name(value: str) -> ast.Name:
    return ast.Name(value=value, span=NOWHERE)


def integer(value: int) -> ast.IntLit:
    return ast.IntLit(value=value, span=NOWHERE)


def week_spec(weeks: Sequence[int], kind_weeks: tuple[int, ...]) -> ast.WeekSpec:
    """`week 2`, `weeks 2..10` when the weeks are every week of their kind in that range, else a list."""
    if len(weeks) == 1:
        return ast.WeekSpec(form="single", weeks=(integer(weeks[0]),), span=NOWHERE)
    lo, hi = kind_weeks.index(weeks[0]), kind_weeks.index(weeks[-1])
    if kind_weeks[lo : hi + 1] == tuple(weeks):
        return ast.WeekSpec(form="range", weeks=(integer(weeks[0]), integer(weeks[-1])), span=NOWHERE)
    return ast.WeekSpec(form="list", weeks=tuple(integer(w) for w in weeks), span=NOWHERE)


def group_weeks(values: tuple, weeks: tuple[int, ...]) -> list[tuple[list[int], object]]:
    """Consecutive weeks with equal terms share one entry (`weeks 4..10: ...`, "In weeks 4, 6, 8 ...")."""
    groups: list[tuple[list[int], object]] = []
    for week, value in zip(weeks, values):
        if groups and groups[-1][1] == value:
            groups[-1][0].append(week)
        else:
            groups.append(([week], value))
    return groups


def quantities(items: Mapping[str, int]) -> tuple[ast.Quantity, ...]:
    return tuple(ast.Quantity(product=name(d), amount=integer(q), span=NOWHERE) for d, q in items.items())


def contract(contract_name: str, game_id: str, clauses: Iterable[ast.Clause]) -> ast.Contract:
    return ast.Contract(
        name=contract_name,
        name_span=NOWHERE,
        game=ast.GameRef(parts=tuple(game_id.split(".")), span=NOWHERE),
        clauses=tuple(clauses),
        span=NOWHERE,
    )


def parties(labels: Mapping[str, str]) -> ast.Parties:
    """One entry per role (customer/supplier, red/blue), in the mapping's order."""
    return ast.Parties(
        entries=tuple(ast.PartyEntry(role=name(role), label=label, span=NOWHERE) for role, label in labels.items()),
        span=NOWHERE,
    )


def prices(amounts: Mapping[str, int]) -> ast.Prices:
    return ast.Prices(
        entries=tuple(
            ast.PriceEntry(product=name(d), amount=ast.MoneyLit(value=p, span=NOWHERE), span=NOWHERE)
            for d, p in amounts.items()
        ),
        span=NOWHERE,
    )


def deliver(schedule: Iterable[tuple[Sequence[int], Mapping[str, int]]]) -> ast.Deliver:
    """Entries (production weeks, product → quantity); an entry may leave products out."""
    return ast.Deliver(
        entries=tuple(
            ast.DeliveryEntry(weeks=week_spec(ws, PRODUCTION_WEEKS), items=quantities(items), span=NOWHERE)
            for ws, items in schedule
        ),
        span=NOWHERE,
    )


def pay(schedule: Iterable[tuple[Sequence[int], int]]) -> ast.Pay:
    """Entries (payment weeks, amount due in each)."""
    return ast.Pay(
        entries=tuple(
            ast.PaymentEntry(
                weeks=week_spec(ws, PAYMENT_WEEKS), amount=ast.MoneyLit(value=m, span=NOWHERE), span=NOWHERE
            )
            for ws, m in schedule
        ),
        span=NOWHERE,
    )


def expression(e: IrExpr, products: tuple[str, ...]) -> ast.Expr:
    """The syntax of an IR expression (`Ref(total_pay)` → `total pay`); product indices name `products`."""
    if isinstance(e, Lit):
        cls = ast.MoneyAtom if e.unit == "money" else ast.IntAtom
        return cls(value=e.value, span=NOWHERE)
    if isinstance(e, Ref):
        simple = {
            "total_pay": ast.TotalPay,
            "total_value": ast.TotalValue,
            "budget": ast.Budget,
            "capital": ast.Capital,
        }
        if e.name in simple:
            return simple[e.name](span=NOWHERE)
        cls = ast.PriceRef if e.name == "price" else ast.TotalDeliver
        return cls(product=name(products[e.product]), span=NOWHERE)
    if isinstance(e, Neg):
        return ast.Negate(operand=expression(e.operand, products), span=NOWHERE)
    assert isinstance(e, BinOp)
    return ast.Binary(op=e.op, left=expression(e.left, products), right=expression(e.right, products), span=NOWHERE)


def assertion(expr: ast.Expr) -> ast.Assert:
    return ast.Assert(expr=expr, span=NOWHERE)


def relation(op: str, left: IrExpr, right: IrExpr, products: tuple[str, ...]) -> ast.Compare:
    """`left op right` from IR operands."""
    return ast.Compare(op=op, left=expression(left, products), right=expression(right, products), span=NOWHERE)


def compare(op: str, left: IrExpr, right: IrExpr, products: tuple[str, ...]) -> ast.Assert:
    """`assert left op right` from IR operands."""
    return assertion(relation(op, left, right, products))


def substitution(minimum: Mapping[str, int] | None = None) -> ast.Substitution:
    """[CS-13]; no minimum means the clause's default."""
    return ast.Substitution(minimum=quantities(minimum) if minimum else None, span=NOWHERE)


def payment_deduction(minimum: Mapping[str, int] | None = None) -> ast.PaymentDeduction:
    """[CS-14]; no minimum means the clause's default."""
    return ast.PaymentDeduction(minimum=quantities(minimum) if minimum else None, span=NOWHERE)


def rollover(max_deficit: int | None = None) -> ast.Rollover:
    return ast.Rollover(max_deficit=integer(max_deficit) if max_deficit is not None else None, span=NOWHERE)


def on_breach() -> ast.OnBreach:
    return ast.OnBreach(span=NOWHERE)


def cover_entry(tile: tuple[int, int], giver: str, receiver: str, colour: str | None = None) -> ast.CoverEntry:
    """`(r,c): giver pays for receiver [with colour chip]` ([CT-22])."""
    return ast.CoverEntry(
        tile=ast.Tile(row=integer(tile[0]), col=integer(tile[1]), span=NOWHERE),
        giver=name(giver),
        receiver=name(receiver),
        colour=name(colour) if colour else None,
        span=NOWHERE,
    )


def goal_entry(trigger: str, giver: str, amount: int, receiver: str) -> ast.GoalEntry:
    """`trigger: giver transfers amount points to receiver` ([CT-26])."""
    return ast.GoalEntry(
        trigger=name(trigger), giver=name(giver), amount=integer(amount), receiver=name(receiver), span=NOWHERE
    )


def cover(entries: Iterable[ast.CoverEntry]) -> ast.Cover:
    return ast.Cover(entries=tuple(entries), span=NOWHERE)


def on_goal(entries: Iterable[ast.GoalEntry]) -> ast.OnGoal:
    return ast.OnGoal(entries=tuple(entries), span=NOWHERE)


def from_ir(ir: ContractIR) -> ast.Contract:
    """A canonical syntax tree for an IR value (schedules grouped into ranges, defaults spelled out)."""
    if isinstance(ir, CTBenchIR):
        clauses: list[ast.Clause] = [parties({"red": ir.parties[0], "blue": ir.parties[1]})]
        if ir.coverage:
            clauses.append(cover(cover_entry(c.tile, c.giver, c.receiver, c.colour) for c in ir.coverage))
        if ir.points:
            clauses.append(on_goal(goal_entry(p.giver, p.giver, p.amount, p.receiver) for p in ir.points))
        return contract(ir.name, "ctbench" if ir.board_set is None else f"ctbench.{ir.board_set}", clauses)
    return contract(ir.name, SETTINGS[ir.setting].game_id, _contractsim_clauses(ir))


def _contractsim_clauses(ir: ContractSimIR) -> list[ast.Clause]:
    products = SETTINGS[ir.setting].products
    c = ir.contingencies
    clauses: list[ast.Clause] = [
        parties({"customer": ir.parties[0], "supplier": ir.parties[1]}),
        prices(dict(zip(products, ir.prices))),
        deliver((ws, dict(zip(products, q))) for ws, q in group_weeks(ir.deliveries, PRODUCTION_WEEKS)),
        pay(group_weeks(ir.payments, PAYMENT_WEEKS)),
    ]
    clauses += [compare(a.op, a.left, a.right, products) for a in ir.asserts]
    if c.substitution:
        clauses.append(substitution(dict(zip(products, c.substitution.min_qty))))
    if c.payment_deduction:
        clauses.append(payment_deduction(dict(zip(products, c.payment_deduction.min_qty))))
    if c.rollover:
        clauses.append(rollover(c.rollover.max_deficit))
    if c.grim_trigger:
        clauses.append(on_breach())
    return clauses
