"""Syntax tree → canonical source text (`contractlang fmt`): the one printer of the surface syntax.

The canonical form keeps the author's clause order, week groupings and comments; it fixes spacing,
indentation, money spelling ($1,000), product order within an entry and parenthesisation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from contractlang import ast, build
from contractlang.ir import ContractIR
from contractlang.vocab import COLOURS, SETTING_BY_GAME_ID

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


def format_expr(e: ast.Expr, words: Mapping[str, str] | None = None) -> str:
    """Print an expression with the fewest parentheses that still parse back to the same tree.

    `words` respells operators and references (`"==": "equals"`, `"total pay": "the total payment"`): the
    English reading of a relation that `render` writes is this printer's output, so its parentheses are
    exactly the syntax's and the rules translator can put the syntax back."""
    say = (lambda dsl: words.get(dsl, dsl)) if words else (lambda dsl: dsl)  # noqa: E731
    if isinstance(e, ast.MoneyAtom):
        return money(e.value)
    if isinstance(e, ast.IntAtom):
        return str(e.value)
    if isinstance(e, ast.PriceRef):
        return say(f"price({e.product.value})")
    if isinstance(e, ast.TotalPay):
        return say("total pay")
    if isinstance(e, ast.TotalDeliver):
        return say(f"total deliver {e.product.value}")
    if isinstance(e, ast.TotalValue):
        return say("total value")
    if isinstance(e, ast.Budget):
        return say("budget")
    if isinstance(e, ast.Capital):
        return say("capital")
    if isinstance(e, ast.Negate):
        inner = format_expr(e.operand, words)
        sign = say("-") + (" " if words else "")  # `-$5`, but `minus $5`
        return f"{sign}({inner})" if _prec(e.operand) < 3 else f"{sign}{inner}"
    p = _prec(e)
    left = format_expr(e.left, words)
    right = format_expr(e.right, words)
    if _prec(e.left) < p or (isinstance(e, ast.Compare) and isinstance(e.left, ast.Compare)):
        left = f"({left})"
    if _prec(e.right) <= p:
        right = f"({right})"
    return f"{left} {say(e.op)} {right}"


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


def _tile(t: ast.Tile) -> str:
    return f"({t.row.value},{t.col.value})"


def format_given(g: ast.Given, order: tuple[str, ...] = ()) -> str:
    """One `given` line of a scenario test; `order` ranks the products and inputs an entry lists."""
    if isinstance(g, ast.GivenWeek):
        if g.action in ("pay", "prices"):
            rank = {name: i for i, name in enumerate(order)}
            entries = sorted(g.prices, key=lambda e: rank.get(e.product.value, len(rank)))
            listed = ", ".join(f"{e.product.value} {money(e.amount.value)}" for e in entries)
            action = f"pay {money(g.amount.value)}" if g.action == "pay" else f"prices {listed}"
        elif g.action in ("nothing", "agreed"):
            action = "nothing" if g.action == "nothing" else "as agreed"
        else:  # deliver, order, receive, spoil: quantities of products or inputs
            action = f"{g.action} {_items(g.items, order)}"
        return f"{_week_spec(g.weeks)}: {action}"
    if isinstance(g, ast.GivenEnv):
        return f"env {g.env.value}"
    if isinstance(g, ast.GivenBoard):
        return f"board {g.board.value}"
    if isinstance(g, ast.GivenTrade):
        return f"{g.giver.value} gives {g.receiver.value} {_items(g.give, COLOURS)} for {_items(g.receive, COLOURS)}"
    if isinstance(g, ast.GivenMode):
        return f"mode {g.mode.value}"
    if isinstance(g, ast.GivenArrangement):
        asks = f" and asks {_items(g.asks, COLOURS)}" if g.asks else ""
        return f"{g.payer.value} pays for {g.partner.value} {_items(g.covers, COLOURS)}{asks}"
    if isinstance(g, ast.GivenDefect):
        return f"{g.player.value} defects"
    if isinstance(g, ast.GivenMove):
        return f"{g.player.value} moves onto {g.colour.value} tile {_tile(g.tile)}"
    if isinstance(g, ast.GivenHolds):
        return f"{g.player.value} holds " + ", ".join(f"{q.product.value} {q.amount.value}" for q in g.chips)
    if isinstance(g, ast.GivenGoal):
        return f"{g.player.value} reaches goal"
    return "game ends"


def format_expect(e: ast.Expect, order: tuple[str, ...] = ()) -> str:
    """One `expect` line of a scenario test (also how a failing test spells what it got)."""
    if isinstance(e, ast.ExpectBreach):
        week = f" week {e.week.value}" if e.week else ""
        return f"breach {e.party.value}{week}" + (f" by {e.clause.value}" if e.clause else "")
    if isinstance(e, ast.ExpectNoBreach):
        return "no breach" + (f" by {e.party.value}" if e.party else "")
    if isinstance(e, (ast.ExpectOwed, ast.ExpectDue)):
        head = f"owed {e.party.value}" if isinstance(e, ast.ExpectOwed) else f"due week {e.week.value}"
        return f"{head} " + (money(e.amount.value) if e.amount else _items(e.items, order))
    if isinstance(e, ast.ExpectCarried):
        return f"carried after week {e.week.value}: {_items(e.items, order)}"
    if isinstance(e, ast.ExpectTerminated):
        return "not terminated" if e.negated else "terminated" + (f" week {e.week.value}" if e.week else "")
    if isinstance(e, ast.ExpectChip):
        colour = f" with {e.colour.value} chip" if e.colour else ""
        return f"{_tile(e.tile)}: {e.giver.value} pays for {e.receiver.value}{colour}"
    if isinstance(e, ast.ExpectForfeit):
        return f"{e.player.value} forfeits" + (f" at {_tile(e.tile)}" if e.tile else "")
    if isinstance(e, ast.ExpectPoints):
        return f"{e.giver.value} transfers {e.amount.value} points to {e.receiver.value}"
    if isinstance(e, ast.ExpectUtility):
        return f"utility {e.party.value} {money(e.amount.value)}"
    if isinstance(e, ast.ExpectScore):
        return f"score {e.player.value} {e.amount.value}"
    return "nothing enforced"


def _test(p: _Printer, t: ast.ScenarioTest, depth: int, order: tuple[str, ...]) -> None:
    p.line(depth, f'test "{t.name}" {{', t.span.line, t.name_span.line)
    for head, lines, span, show in (
        ("given", t.given, t.given_span, lambda g: format_given(g, order)),
        ("expect", t.expect, t.expect_span, lambda e: format_expect(e, order)),
    ):
        if head == "given" and not lines:
            continue  # an empty `given` block means every week goes as agreed, as no block does
        p.line(depth + 1, head + " {", span.line if span else 0, span.line if span else 0)
        for line in lines:
            p.line(depth + 2, show(line), line.span.line, line.span.end_line)
        end = span.end_line if span else 0
        p.line(depth + 1, "}", end, end, closes=True)
    p.line(depth, "}", t.span.end_line, t.span.end_line, closes=True)


def _names(game_id: str) -> tuple[str, ...]:
    """The products then the inputs of a ContractSim setting, the order entries list them in."""
    setting = SETTING_BY_GAME_ID.get(game_id)
    return setting.products + setting.inputs if setting else ()


def _contract(p: _Printer, contract: ast.Contract) -> None:
    setting = SETTING_BY_GAME_ID.get(contract.game.game_id)
    order = setting.products if setting else ()
    p.line(0, f'contract "{contract.name}" {{', contract.span.line, contract.span.line)
    p.line(1, f"game {contract.game.game_id}", contract.game.span.line, contract.game.span.end_line)
    for clause in contract.clauses:
        _clause(p, clause, order)
    for test in contract.tests:
        _test(p, test, 1, _names(contract.game.game_id))
    p.line(0, "}", contract.span.end_line, contract.span.end_line, closes=True)


def _suite(p: _Printer, suite: ast.ScenarioSuite, orders: Mapping[str, tuple[str, ...]]) -> None:
    p.line(0, f'tests for "{suite.contract}" {{', suite.span.line, suite.contract_span.line)
    for test in suite.tests:
        _test(p, test, 1, orders.get(suite.contract, ()))
    p.line(0, "}", suite.span.end_line, suite.span.end_line, closes=True)


def format_source(file: ast.SourceFile) -> str:
    """Canonical text of a parsed file, contracts and test suites in their order; idempotent, comments kept."""
    p = _Printer(file.comments)
    orders = {c.name: _names(c.game.game_id) for c in file.contracts}
    blocks = sorted((*file.contracts, *file.suites), key=lambda b: (b.span.line, b.span.column))
    for k, block in enumerate(blocks):
        if k:
            p.line(0, "", 0, 0)
        if isinstance(block, ast.Contract):
            _contract(p, block)
        else:
            _suite(p, block, orders)
    return p.render()


def format_tests(contract: str, tests: tuple[ast.ScenarioTest, ...], order: tuple[str, ...] = ()) -> str:
    """Canonical text of a `tests for "CONTRACT"` block holding built tests (what `test --generate` writes)."""
    p = _Printer(())
    p.line(0, f'tests for "{contract}" {{', 0, 0)
    for test in tests:
        _test(p, test, 1, order)
    p.line(0, "}", 0, 0, closes=True)
    return p.render()


def format_contracts(*contracts: ast.Contract) -> str:
    """Canonical source text for built syntax trees (`contractlang.build`), one file, contracts in order."""
    return format_source(ast.SourceFile(path="<built>", contracts=contracts))


def format_ir(*irs: ContractIR) -> str:
    """Canonical source text for IR values (one file, contracts in order)."""
    return format_contracts(*(build.from_ir(ir) for ir in irs))
