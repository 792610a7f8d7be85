"""Syntax tree → canonical source text (`contractlang fmt`), and IR → source for generated contracts.

The canonical form keeps the author's clause order, week groupings and comments; it fixes spacing,
indentation, money spelling ($1,000), product order within an entry and parenthesisation.
"""

from __future__ import annotations

import re

from contractlang import ast
from contractlang.diagnostics import Span
from contractlang.ir import BinOp, ContractIR, ContractSimIR, CTBenchIR, IrExpr, Lit, Neg, Ref
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTING_BY_GAME_ID, SETTINGS

INDENT = "  "
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*\Z")
_PREC = {"compare": 0, "+": 1, "-": 1, "*": 2, "negate": 3}


def money(value: int) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,}"


def _prec(e: ast.Expr) -> int:
    if isinstance(e, ast.Compare):
        return 0
    if isinstance(e, ast.Binary):
        return _PREC[e.op]
    if isinstance(e, ast.Negate):
        return 3
    return 4


def format_expr(e: ast.Expr) -> str:
    """Print an expression with the fewest parentheses that still parse back to the same tree."""
    if isinstance(e, ast.MoneyAtom):
        return money(e.value)
    if isinstance(e, ast.IntAtom):
        return str(e.value)
    if isinstance(e, ast.PriceRef):
        return f"price({e.product.value})"
    if isinstance(e, ast.TotalPay):
        return "total pay"
    if isinstance(e, ast.TotalDeliver):
        return f"total deliver {e.product.value}"
    if isinstance(e, ast.TotalValue):
        return "total value"
    if isinstance(e, ast.Budget):
        return "budget"
    if isinstance(e, ast.Capital):
        return "capital"
    if isinstance(e, ast.Negate):
        inner = format_expr(e.operand)
        return f"-({inner})" if _prec(e.operand) < 3 else f"-{inner}"
    p = _prec(e)
    left = format_expr(e.left)
    right = format_expr(e.right)
    if _prec(e.left) < p or (isinstance(e, ast.Compare) and isinstance(e.left, ast.Compare)):
        left = f"({left})"
    if _prec(e.right) <= p:
        right = f"({right})"
    return f"{left} {e.op} {right}"


def _week_spec(w: ast.WeekSpec) -> str:
    nums = [str(x.value) for x in w.weeks]
    if w.form == "single":
        return f"week {nums[0]}"
    if w.form == "range":
        return f"weeks {nums[0]}..{nums[1]}"
    return "weeks " + ", ".join(nums)


def _items(items: tuple[ast.Quantity, ...], order: tuple[str, ...]) -> str:
    rank = {name: i for i, name in enumerate(order)}
    ordered = sorted(items, key=lambda q: rank.get(q.product.value, len(rank)))
    return ", ".join(f"{q.product.value} {q.amount.value}" for q in ordered)


def _label(text: str) -> str:
    return text if _NAME_RE.match(text) else f'"{text}"'


class _Printer:
    """Collects output lines with the source lines each came from, then weaves comments back in."""

    def __init__(self, comments: tuple[ast.Comment, ...]):
        self.rows: list[tuple[int, str, int, int, bool]] = []
        self.comments = list(comments)

    def line(self, depth: int, text: str, first: int, last: int, closes: bool = False) -> None:
        self.rows.append((depth, text, first, last, closes))

    def render(self) -> str:
        """A comment trails the last output line printed from its source line, else leads the next one."""
        trailing: dict[int, list[str]] = {}
        leading: dict[int, list[str]] = {}
        tail: list[str] = []
        for comment in sorted(self.comments, key=lambda c: (c.span.line, c.span.column)):
            line = comment.span.line
            holders = [i for i, r in enumerate(self.rows) if r[2] > 0 and r[2] <= line <= r[3]]
            if holders:
                trailing.setdefault(holders[-1], []).append(comment.text)
                continue
            after = next((i for i, r in enumerate(self.rows) if r[2] > line), None)
            if after is None:
                tail.append(comment.text)
            else:
                leading.setdefault(after, []).append(comment.text)
        out: list[str] = []
        for i, (depth, text, _first, _last, closes) in enumerate(self.rows):
            out.extend(INDENT * (depth + (1 if closes else 0)) + c for c in leading.get(i, ()))
            suffix = "  " + " ".join(trailing[i]) if i in trailing else ""
            out.append(INDENT * depth + text + suffix)
        out.extend(tail)
        return "\n".join(out) + "\n"


def _clause(p: _Printer, c: ast.Clause, order: tuple[str, ...]) -> None:
    s = c.span
    one = lambda text: p.line(1, text, s.line, s.end_line)  # noqa: E731
    if isinstance(c, ast.Parties):
        one("parties { " + "  ".join(f"{e.role.value}: {_label(e.label)}" for e in c.entries) + " }")
    elif isinstance(c, ast.Prices):
        rank = {name: i for i, name in enumerate(order)}
        entries = sorted(c.entries, key=lambda e: rank.get(e.product.value, len(rank)))
        one("prices { " + "  ".join(f"{e.product.value}: {money(e.amount.value)}" for e in entries) + " }")
    elif isinstance(c, (ast.Deliver, ast.Pay, ast.Cover, ast.OnGoal)):
        head = {ast.Deliver: "deliver", ast.Pay: "pay", ast.Cover: "cover", ast.OnGoal: "on goal"}[type(c)]
        p.line(1, head + " {", s.line, s.line)
        for e in c.entries:
            p.line(2, _entry(e, order), e.span.line, e.span.end_line)
        p.line(1, "}", s.end_line, s.end_line, closes=True)
    elif isinstance(c, ast.Assert):
        one("assert " + format_expr(c.expr))
    elif isinstance(c, (ast.Substitution, ast.PaymentDeduction)):
        head = "substitution" if isinstance(c, ast.Substitution) else "payment_deduction"
        one(head if c.minimum is None else f"{head} {{ minimum: {_items(c.minimum, order)} }}")
    elif isinstance(c, ast.Rollover):
        one("rollover" if c.max_deficit is None else f"rollover {{ max_deficit: {c.max_deficit.value} }}")
    elif isinstance(c, ast.OnBreach):
        one("on breach: terminate")


def _entry(e, order: tuple[str, ...]) -> str:
    if isinstance(e, ast.DeliveryEntry):
        return f"{_week_spec(e.weeks)}: {_items(e.items, order)}"
    if isinstance(e, ast.PaymentEntry):
        return f"{_week_spec(e.weeks)}: {money(e.amount.value)}"
    if isinstance(e, ast.CoverEntry):
        colour = f" with {e.colour.value} chip" if e.colour else ""
        return f"({e.tile.row.value},{e.tile.col.value}): {e.giver.value} pays for {e.receiver.value}{colour}"
    return f"{e.trigger.value}: {e.giver.value} transfers {e.amount.value} points to {e.receiver.value}"


def format_source(file: ast.SourceFile) -> str:
    """Canonical text of a parsed file; idempotent, comments kept."""
    p = _Printer(file.comments)
    for k, contract in enumerate(file.contracts):
        if k:
            p.line(0, "", 0, 0)
        setting = SETTING_BY_GAME_ID.get(contract.game.game_id)
        order = setting.products if setting else ()
        p.line(0, f'contract "{contract.name}" {{', contract.span.line, contract.span.line)
        p.line(1, f"game {contract.game.game_id}", contract.game.span.line, contract.game.span.end_line)
        for clause in contract.clauses:
            _clause(p, clause, order)
        p.line(0, "}", contract.span.end_line, contract.span.end_line, closes=True)
    return p.render()


# --- IR → syntax tree (generated contracts, renderer round trips) --------------------

_NOWHERE = Span(line=0, column=0, end_line=0, end_column=0)


def _n(value: str) -> ast.Name:
    return ast.Name(value=value, span=_NOWHERE)


def _i(value: int) -> ast.IntLit:
    return ast.IntLit(value=value, span=_NOWHERE)


def _weeks(weeks: list[int], kind_weeks: tuple[int, ...]) -> ast.WeekSpec:
    if len(weeks) == 1:
        return ast.WeekSpec(form="single", weeks=(_i(weeks[0]),), span=_NOWHERE)
    lo, hi = kind_weeks.index(weeks[0]), kind_weeks.index(weeks[-1])
    if kind_weeks[lo : hi + 1] == tuple(weeks):
        return ast.WeekSpec(form="range", weeks=(_i(weeks[0]), _i(weeks[-1])), span=_NOWHERE)
    return ast.WeekSpec(form="list", weeks=tuple(_i(w) for w in weeks), span=_NOWHERE)


def group_weeks(values: tuple, weeks: tuple[int, ...]) -> list[tuple[list[int], object]]:
    """Consecutive weeks with equal terms share one entry (`weeks 4..10: ...`, "In weeks 4, 6, 8 ...")."""
    groups: list[tuple[list[int], object]] = []
    for week, value in zip(weeks, values):
        if groups and groups[-1][1] == value:
            groups[-1][0].append(week)
        else:
            groups.append(([week], value))
    return groups


def _expr_to_ast(e: IrExpr, products: tuple[str, ...]) -> ast.Expr:
    if isinstance(e, Lit):
        cls = ast.MoneyAtom if e.unit == "money" else ast.IntAtom
        return cls(value=e.value, span=_NOWHERE)
    if isinstance(e, Ref):
        simple = {
            "total_pay": ast.TotalPay,
            "total_value": ast.TotalValue,
            "budget": ast.Budget,
            "capital": ast.Capital,
        }
        if e.name in simple:
            return simple[e.name](span=_NOWHERE)
        cls = ast.PriceRef if e.name == "price" else ast.TotalDeliver
        return cls(product=_n(products[e.product]), span=_NOWHERE)
    if isinstance(e, Neg):
        return ast.Negate(operand=_expr_to_ast(e.operand, products), span=_NOWHERE)
    assert isinstance(e, BinOp)
    return ast.Binary(
        op=e.op, left=_expr_to_ast(e.left, products), right=_expr_to_ast(e.right, products), span=_NOWHERE
    )


def format_assert(op: str, left: IrExpr, right: IrExpr, products: tuple[str, ...]) -> str:
    """The DSL text of a stated relation given as IR (what the checker records as `AssertTerm.text`)."""
    return format_expr(ast.Compare(op=op, left=_expr_to_ast(left, products), right=_expr_to_ast(right, products),
                                   span=_NOWHERE))


def ir_to_ast(ir: ContractIR) -> ast.Contract:
    """A canonical syntax tree for an IR value (schedules grouped into ranges, defaults spelled out)."""
    if isinstance(ir, CTBenchIR):
        clauses: list[ast.Clause] = [
            ast.Parties(
                entries=(
                    ast.PartyEntry(role=_n("red"), label=ir.parties[0], span=_NOWHERE),
                    ast.PartyEntry(role=_n("blue"), label=ir.parties[1], span=_NOWHERE),
                ),
                span=_NOWHERE,
            )
        ]
        if ir.coverage:
            clauses.append(ast.Cover(entries=tuple(
                ast.CoverEntry(
                    tile=ast.Tile(row=_i(c.tile[0]), col=_i(c.tile[1]), span=_NOWHERE),
                    giver=_n(c.giver),
                    receiver=_n(c.receiver),
                    colour=_n(c.colour) if c.colour else None,
                    span=_NOWHERE,
                )
                for c in ir.coverage
            ), span=_NOWHERE))
        if ir.points:
            clauses.append(ast.OnGoal(entries=tuple(
                ast.GoalEntry(trigger=_n(p.giver), giver=_n(p.giver), amount=_i(p.amount),
                              receiver=_n(p.receiver), span=_NOWHERE)
                for p in ir.points
            ), span=_NOWHERE))
        game = ("ctbench",)
    else:
        clauses = _contractsim_clauses(ir)
        game = tuple(SETTINGS[ir.setting].game_id.split("."))
    return ast.Contract(
        name=ir.name, name_span=_NOWHERE, game=ast.GameRef(parts=game, span=_NOWHERE),
        clauses=tuple(clauses), span=_NOWHERE,
    )


def _quantities(products: tuple[str, ...], values) -> tuple[ast.Quantity, ...]:
    return tuple(ast.Quantity(product=_n(d), amount=_i(q), span=_NOWHERE) for d, q in zip(products, values))


def _contractsim_clauses(ir: ContractSimIR) -> list[ast.Clause]:
    products = SETTINGS[ir.setting].products
    c = ir.contingencies
    clauses: list[ast.Clause] = [
        ast.Parties(entries=(
            ast.PartyEntry(role=_n("customer"), label=ir.parties[0], span=_NOWHERE),
            ast.PartyEntry(role=_n("supplier"), label=ir.parties[1], span=_NOWHERE),
        ), span=_NOWHERE),
        ast.Prices(entries=tuple(
            ast.PriceEntry(product=_n(d), amount=ast.MoneyLit(value=p, span=_NOWHERE), span=_NOWHERE)
            for d, p in zip(products, ir.prices)
        ), span=_NOWHERE),
        ast.Deliver(entries=tuple(
            ast.DeliveryEntry(weeks=_weeks(ws, PRODUCTION_WEEKS), items=_quantities(products, q), span=_NOWHERE)
            for ws, q in group_weeks(ir.deliveries, PRODUCTION_WEEKS)
        ), span=_NOWHERE),
        ast.Pay(entries=tuple(
            ast.PaymentEntry(weeks=_weeks(ws, PAYMENT_WEEKS), amount=ast.MoneyLit(value=m, span=_NOWHERE),
                             span=_NOWHERE)
            for ws, m in group_weeks(ir.payments, PAYMENT_WEEKS)
        ), span=_NOWHERE),
    ]
    for a in ir.asserts:
        expr = ast.Compare(op=a.op, left=_expr_to_ast(a.left, products), right=_expr_to_ast(a.right, products),
                           span=_NOWHERE)
        clauses.append(ast.Assert(expr=expr, span=_NOWHERE))
    if c.substitution:
        clauses.append(ast.Substitution(minimum=_quantities(products, c.substitution.min_qty), span=_NOWHERE))
    if c.payment_deduction:
        clauses.append(ast.PaymentDeduction(minimum=_quantities(products, c.payment_deduction.min_qty),
                                            span=_NOWHERE))
    if c.rollover:
        clauses.append(ast.Rollover(max_deficit=_i(c.rollover.max_deficit), span=_NOWHERE))
    if c.grim_trigger:
        clauses.append(ast.OnBreach(span=_NOWHERE))
    return clauses


def format_ir(*irs: ContractIR) -> str:
    """Canonical source text for IR values (one file, contracts in order)."""
    return format_source(ast.SourceFile(path="<ir>", contracts=tuple(ir_to_ast(ir) for ir in irs)))
