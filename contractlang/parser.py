"""Source text → syntax tree: `parse` for a file, `parse_expression` for one assert relation; syntax errors
become diagnostics."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from contractlang import ast
from contractlang.diagnostics import ContractError, Diagnostic, Span, did_you_mean

MAX_EXPRESSION_DEPTH = 64

_REGEX_TERMINAL_WORDS = {
    "NAME": "a name",
    "INT": "a whole number",
    "MONEY": "an amount such as $10",
    "STRING": 'a quoted name such as "my-contract"',
    "COMPARE": "a comparison (==, !=, <=, >=, <, >)",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*'",
    "MINUS": "'-'",
    "$END": "the end of the file",
}


UNCLOSED_HINT = "add the closing '}' of this block"  # the language server's quick fix keys on it


def grammar_text() -> str:
    """The grammar source (also shown to the LLM translator)."""
    # A wheel ships the grammar inside the package; a source checkout keeps it in grammar/.
    packaged = resources.files("contractlang").joinpath("grammar/contract.lark")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parent.parent / "grammar" / "contract.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=2)
def _lark(start: str = "start") -> Lark:
    # one parser per start rule: a shared table would merge states and change the files' syntax errors
    return Lark(
        grammar_text(), parser="lalr", keep_all_tokens=True, maybe_placeholders=False, transformer=_ToAst(), start=start
    )


@lru_cache(maxsize=1)
def _terminal_words() -> dict[str, str]:
    words = dict(_REGEX_TERMINAL_WORDS)
    for term in _lark().terminals:
        if isinstance(term.pattern, PatternStr) and term.name not in words:
            words[term.name] = f"'{term.pattern.value}'"
    return words


def _span_of(item) -> Span:
    if isinstance(item, Token):
        return Span(item.line, item.column, item.end_line, item.end_column)
    return item.span


def _extent(children) -> Span:
    """Span from the first to the last child (all tokens are kept, so keywords and braces count)."""
    first, last = children[0], children[-1]
    if not isinstance(first, Token):
        first = first.span
    if isinstance(last, Token):
        return Span(first.line, first.column, last.end_line, last.end_column)
    return Span(first.line, first.column, last.span.end_line, last.span.end_column)


# Literals longer than this are clamped; the checker reports anything above its limit (E003), and
# Python refuses to convert very long digit strings at all.
_MAX_LITERAL_DIGITS = 15
_OPERAND_TOKENS = {"NAME", "INT", "MONEY", "STRING", "COMPARE", "ADD_OP", "MUL_OP"}


def _to_int(digits: str) -> int:
    digits = digits.lstrip("0") or "0"
    return 10**_MAX_LITERAL_DIGITS if len(digits) > _MAX_LITERAL_DIGITS else int(digits)


def _money_value(text: str) -> int:
    return _to_int(text.lstrip("$").replace(",", ""))


def _name(tok: Token) -> ast.Name:
    return ast.Name.model_construct(value=str(tok), span=_span_of(tok))


def _operands(children) -> list:
    """Children without keywords and punctuation (the grammar keeps every token for spans)."""
    return [c for c in children if not isinstance(c, Token) or c.type in _OPERAND_TOKENS]


def _node(cls, children, **fields):
    return cls.model_construct(span=_extent(children), **fields)


class _ToAst(Transformer):
    """Applied by lark at each LALR reduction, so no intermediate tree is built and nothing recurses."""

    # literals
    def integer(self, c):
        sign = -1 if len(c) == 2 else 1
        return _node(ast.IntLit, c, value=sign * _to_int(c[-1]))

    def money(self, c):
        sign = -1 if len(c) == 2 else 1
        return _node(ast.MoneyLit, c, value=sign * _money_value(c[-1]))

    # expressions
    def atom(self, c):
        return c[1]

    def money_atom(self, c):
        return _node(ast.MoneyAtom, c, value=_money_value(c[0]))

    def int_atom(self, c):
        return _node(ast.IntAtom, c, value=_to_int(c[0]))

    def price_ref(self, c):
        return _node(ast.PriceRef, c, product=_name(_operands(c)[0]))

    def total_pay(self, c):
        return _node(ast.TotalPay, c)

    def total_deliver(self, c):
        return _node(ast.TotalDeliver, c, product=_name(_operands(c)[0]))

    def total_value(self, c):
        return _node(ast.TotalValue, c)

    def budget(self, c):
        return _node(ast.Budget, c)

    def capital(self, c):
        return _node(ast.Capital, c)

    def negate(self, c):
        return _node(ast.Negate, c, operand=c[1])

    def binary(self, c):
        return _node(ast.Binary, c, op=str(c[1]), left=c[0], right=c[2])

    def compare(self, c):
        return _node(ast.Compare, c, op=str(c[1]), left=c[0], right=c[2])

    # schedule pieces
    def single_week(self, c):
        return _node(ast.WeekSpec, c, form="single", weeks=tuple(_operands(c)))

    def week_range(self, c):
        return _node(ast.WeekSpec, c, form="range", weeks=tuple(_operands(c)))

    def week_list(self, c):
        return _node(ast.WeekSpec, c, form="list", weeks=tuple(_operands(c)))

    def quantity(self, c):
        return _node(ast.Quantity, c, product=_name(c[0]), amount=c[1])

    def party_entry(self, c):
        label = c[2]
        text = str(label)[1:-1] if label.type == "STRING" else str(label)
        return _node(ast.PartyEntry, c, role=_name(c[0]), label=text)

    def price_entry(self, c):
        return _node(ast.PriceEntry, c, product=_name(c[0]), amount=c[2])

    def delivery_entry(self, c):
        ops = _operands(c)
        return _node(ast.DeliveryEntry, c, weeks=ops[0], items=tuple(ops[1:]))

    def payment_entry(self, c):
        return _node(ast.PaymentEntry, c, weeks=c[0], amount=c[2])

    def tile(self, c):
        ops = _operands(c)
        return _node(ast.Tile, c, row=ops[0], col=ops[1])

    def cover_entry(self, c):
        ops = _operands(c)
        colour = _name(ops[3]) if len(ops) > 3 else None
        return _node(ast.CoverEntry, c, tile=ops[0], giver=_name(ops[1]), receiver=_name(ops[2]), colour=colour)

    def goal_entry(self, c):
        ops = _operands(c)
        return _node(
            ast.GoalEntry, c, trigger=_name(ops[0]), giver=_name(ops[1]), amount=ops[2], receiver=_name(ops[3])
        )

    # clauses
    def parties(self, c):
        return _node(ast.Parties, c, entries=tuple(_operands(c)))

    def prices(self, c):
        return _node(ast.Prices, c, entries=tuple(_operands(c)))

    def deliver(self, c):
        return _node(ast.Deliver, c, entries=tuple(_operands(c)))

    def pay(self, c):
        return _node(ast.Pay, c, entries=tuple(_operands(c)))

    def assert_stmt(self, c):
        return _node(ast.Assert, c, expr=c[1])

    def minimum_block(self, c):
        return _node(_MinimumBlock, c, items=tuple(_operands(c)))

    def substitution(self, c):
        return _node(ast.Substitution, c, minimum=c[1].items if len(c) > 1 and c[1].items else None)

    def payment_deduction(self, c):
        return _node(ast.PaymentDeduction, c, minimum=c[1].items if len(c) > 1 and c[1].items else None)

    def rollover(self, c):
        ops = _operands(c)
        return _node(ast.Rollover, c, max_deficit=ops[0] if ops else None)

    def on_breach(self, c):
        return _node(ast.OnBreach, c)

    def cover(self, c):
        return _node(ast.Cover, c, entries=tuple(_operands(c)))

    def on_goal(self, c):
        return _node(ast.OnGoal, c, entries=tuple(_operands(c)))

    def game_decl(self, c):
        return _node(ast.GameRef, c, parts=tuple(str(t) for t in _operands(c)))

    def contract(self, c):
        ops = _operands(c)
        tests = tuple(x for x in ops[2:] if isinstance(x, ast.ScenarioTest))
        clauses = tuple(x for x in ops[2:] if not isinstance(x, ast.ScenarioTest))
        return _node(
            ast.Contract,
            c,
            name=str(ops[0])[1:-1],
            name_span=_span_of(ops[0]),
            game=ops[1],
            clauses=clauses,
            tests=tests,
        )

    # scenario tests
    def act_pay(self, c):
        return _node(_Action, c, action="pay", amount=c[1])

    def act_deliver(self, c):
        return _node(_Action, c, action="deliver", items=tuple(_operands(c)))

    def act_nothing(self, c):
        return _node(_Action, c, action="nothing")

    def act_agreed(self, c):
        return _node(_Action, c, action="agreed")

    def act_order(self, c):
        return _node(_Action, c, action="order", items=tuple(_operands(c)))

    def act_receive(self, c):
        return _node(_Action, c, action="receive", items=tuple(_operands(c)))

    def act_spoil(self, c):
        return _node(_Action, c, action="spoil", items=tuple(_operands(c)))

    def act_prices(self, c):
        return _node(_Action, c, action="prices", prices=tuple(_operands(c)))

    def input_price(self, c):
        return _node(ast.PriceEntry, c, product=_name(c[0]), amount=c[1])

    def given_week(self, c):
        act = c[2]
        return _node(
            ast.GivenWeek, c, weeks=c[0], action=act.action, amount=act.amount, items=act.items, prices=act.prices
        )

    def given_move(self, c):
        ops = _operands(c)
        return _node(ast.GivenMove, c, player=_name(ops[0]), colour=_name(ops[1]), tile=ops[2])

    def given_holds(self, c):
        ops = _operands(c)
        return _node(ast.GivenHolds, c, player=_name(ops[0]), chips=tuple(ops[1:]))

    def given_goal(self, c):
        return _node(ast.GivenGoal, c, player=_name(c[0]))

    def given_end(self, c):
        return _node(ast.GivenEnd, c)

    def given_env(self, c):
        return _node(ast.GivenEnv, c, env=c[1])

    def given_board(self, c):
        return _node(ast.GivenBoard, c, board=c[1])

    def given_trade(self, c):
        ops = _operands(c)
        cut = next(i for i, x in enumerate(c) if isinstance(x, Token) and str(x) == "for")
        receive = tuple(x for x in c[cut:] if isinstance(x, ast.Quantity))
        give = tuple(x for x in c[:cut] if isinstance(x, ast.Quantity))
        return _node(ast.GivenTrade, c, giver=_name(ops[0]), receiver=_name(ops[1]), give=give, receive=receive)

    def given_mode(self, c):
        return _node(ast.GivenMode, c, mode=_name(_operands(c)[0]))

    def given_arrangement(self, c):
        ops = _operands(c)
        cut = next((i for i, x in enumerate(c) if isinstance(x, Token) and str(x) == "asks"), len(c))
        covers = tuple(x for x in c[:cut] if isinstance(x, ast.Quantity))
        asks = tuple(x for x in c[cut:] if isinstance(x, ast.Quantity))
        return _node(ast.GivenArrangement, c, payer=_name(ops[0]), partner=_name(ops[1]), covers=covers, asks=asks)

    def given_defect(self, c):
        return _node(ast.GivenDefect, c, player=_name(_operands(c)[0]))

    def given_block(self, c):
        return _node(_Block, c, lines=tuple(x for x in c if not isinstance(x, Token)))

    def expect_block(self, c):
        return _node(_Block, c, lines=tuple(x for x in c if not isinstance(x, Token)))

    def expect_breach(self, c):
        week = next((x for x in c if isinstance(x, ast.IntLit)), None)
        clause = _name(c[-1]) if len(c) > 2 and str(c[-2]) == "by" else None
        return _node(ast.ExpectBreach, c, party=_name(c[1]), week=week, clause=clause)

    def expect_no_breach(self, c):
        return _node(ast.ExpectNoBreach, c, party=_name(c[3]) if len(c) > 3 else None)

    def expect_owed(self, c):
        money = next((x for x in c if isinstance(x, ast.MoneyLit)), None)
        items = tuple(x for x in c if isinstance(x, ast.Quantity))
        return _node(ast.ExpectOwed, c, party=_name(c[1]), amount=money, items=items)

    def expect_due(self, c):
        money = next((x for x in c if isinstance(x, ast.MoneyLit)), None)
        items = tuple(x for x in c if isinstance(x, ast.Quantity))
        return _node(ast.ExpectDue, c, week=c[2], amount=money, items=items)

    def expect_carried(self, c):
        items = tuple(x for x in c if isinstance(x, ast.Quantity))
        return _node(ast.ExpectCarried, c, week=c[3], items=items)

    def expect_terminated(self, c):
        return _node(ast.ExpectTerminated, c, week=c[2] if len(c) > 2 else None)

    def expect_not_terminated(self, c):
        return _node(ast.ExpectTerminated, c, negated=True)

    def expect_chip(self, c):
        ops = _operands(c)
        colour = _name(ops[3]) if len(ops) > 3 else None
        return _node(ast.ExpectChip, c, tile=c[0], giver=_name(ops[1]), receiver=_name(ops[2]), colour=colour)

    def expect_forfeit(self, c):
        tile = c[-1] if isinstance(c[-1], ast.Tile) else None
        return _node(ast.ExpectForfeit, c, player=_name(c[0]), tile=tile)

    def expect_points(self, c):
        ops = _operands(c)
        return _node(ast.ExpectPoints, c, giver=_name(ops[0]), amount=ops[1], receiver=_name(ops[2]))

    def expect_nothing(self, c):
        return _node(ast.ExpectNothing, c)

    def expect_utility(self, c):
        return _node(ast.ExpectUtility, c, party=_name(c[1]), amount=c[2])

    def expect_score(self, c):
        return _node(ast.ExpectScore, c, player=_name(c[1]), amount=c[2])

    def test_case(self, c):
        blocks = [x for x in c if isinstance(x, _Block)]
        given = blocks[0] if len(blocks) == 2 else None
        expect = blocks[-1]
        return _node(
            ast.ScenarioTest,
            c,
            name=str(c[1])[1:-1],
            name_span=_span_of(c[1]),
            given=given.lines if given else (),
            given_span=given.span if given else None,
            expect=expect.lines,
            expect_span=expect.span,
        )

    def test_suite(self, c):
        tests = tuple(x for x in c if isinstance(x, ast.ScenarioTest))
        return _node(ast.ScenarioSuite, c, contract=str(c[2])[1:-1], contract_span=_span_of(c[2]), tests=tests)

    def start(self, c):
        return tuple(c)


class _Action(ast.Node):
    """What a `given` week line says happens, before the line is built."""

    action: str
    amount: ast.MoneyLit | None = None
    items: tuple[ast.Quantity, ...] = ()
    prices: tuple[ast.PriceEntry, ...] = ()


class _Block(ast.Node):
    """A `given { ... }` or `expect { ... }` block's lines, before the test that holds it is built."""

    lines: tuple = ()


class _MinimumBlock(ast.Node):
    """`{ minimum: ... }`; an empty block means the clause's default minimum."""

    items: tuple[ast.Quantity, ...] = ()


def _too_deep(exprs, path: str) -> Diagnostic | None:
    """Depth of assert expressions, measured with an explicit stack so deep input cannot recurse."""
    for expr in exprs:
        stack = [(expr, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_EXPRESSION_DEPTH:
                return Diagnostic(
                    code="E004",
                    message=f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep",
                    file=path,
                    span=expr.span,
                    hint="split the assertion into several simpler `assert` lines",
                )
            for child in (getattr(node, "left", None), getattr(node, "right", None), getattr(node, "operand", None)):
                if child is not None:
                    stack.append((child, depth + 1))
    return None


def _asserted(contracts: tuple[ast.Contract, ...]):
    return (clause.expr for contract in contracts for clause in contract.clauses if isinstance(clause, ast.Assert))


_COMMENT_OR_STRING = re.compile(r'"[^"\n]*"|//[^\n]*')


def _comments(text: str) -> tuple[ast.Comment, ...]:
    found = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for m in _COMMENT_OR_STRING.finditer(text):
        if not m.group().startswith("//"):
            continue
        line = _line_of(line_starts, m.start())
        col = m.start() - line_starts[line - 1] + 1
        found.append(
            ast.Comment(
                text=m.group().rstrip(),
                span=Span(line=line, column=col, end_line=line, end_column=col + len(m.group())),
            )
        )
    return tuple(found)


def _line_of(line_starts: list[int], offset: int) -> int:
    lo, hi = 0, len(line_starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if line_starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def _expected_words(expected: set[str]) -> str:
    words = sorted({_terminal_words().get(name, name.lower()) for name in expected})
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _acceptable(err: UnexpectedInput, fallback) -> set[str]:
    """The terminals the parser could really take here (LALR state merging widens `expected`)."""
    interactive = getattr(err, "interactive_parser", None)
    if interactive is not None:
        return set(interactive.accepts())
    return set(fallback or ())


_BRACE_OR_SKIPPED = re.compile(r'"[^"\n]*"|//[^\n]*|[{}]')


def _unclosed_block(text: str, before: int) -> tuple[int, int, str] | None:
    """(line, column, opening text) of the innermost `{` still open at offset `before`, or None."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    open_at: list[int] = []
    for m in _BRACE_OR_SKIPPED.finditer(text, 0, before):
        if m.group() == "{":
            open_at.append(m.start())
        elif m.group() == "}" and open_at:
            open_at.pop()
    if not open_at:
        return None
    offset = open_at[-1]
    line = _line_of(line_starts, offset)
    opening = text[line_starts[line - 1] : offset + 1].strip()
    return line, offset - line_starts[line - 1] + 1, opening


def _keyword_suggestion(word: str, acceptable: set[str]) -> str:
    """'did you mean `deliver`? ' when a misspelt word is close to a keyword the parser could take here."""
    keywords = [
        t.pattern.value
        for t in _lark().terminals
        if t.name in acceptable and isinstance(t.pattern, PatternStr) and t.pattern.value.isidentifier()
    ]
    return did_you_mean(word, keywords)


def _syntax_diagnostic(err: UnexpectedInput, text: str, path: str) -> Diagnostic:
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        return Diagnostic(
            code="E001",
            message=f"unexpected character {char!r}",
            file=path,
            span=Span.point(err.line, err.column),
            hint="expected " + _expected_words(_acceptable(err, err.allowed)),
        )
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    acceptable = _acceptable(err, err.expected)
    if tok.type == "$END":
        unclosed = _unclosed_block(text, len(text))
        if unclosed is not None:
            line, column, opening = unclosed
            return Diagnostic(
                code="E001",
                message=f"unexpected end of file: `{opening}` is never closed",
                file=path,
                span=Span.point(line, column),
                hint=UNCLOSED_HINT,
            )
        lines = text.splitlines() or [""]
        return Diagnostic(
            code="E001",
            message="unexpected end of file",
            file=path,
            span=Span.point(len(lines), len(lines[-1]) + 1),
            hint="expected " + _expected_words(acceptable),
        )
    hint = "expected " + _expected_words(acceptable)
    # lark's fallback lexer may read a keyword out of place as a NAME once the grammar has many keywords
    keyword = tok.type != "NAME" or f"'{tok}'" in _terminal_words().values()
    if not keyword:
        hint = _keyword_suggestion(str(tok), acceptable) + hint
    if str(tok) == "." and tok.column > 1 and text.splitlines()[tok.line - 1][tok.column - 2].isdigit():
        hint += "; amounts are whole numbers (no cents)"
    elif "RBRACE" in acceptable and keyword:
        unclosed = _unclosed_block(text, tok.start_pos)
        if unclosed is not None:
            hint += f"; is the '}}' closing `{unclosed[2]}` (line {unclosed[0]}) missing?"
    return Diagnostic(code="E001", message=f"unexpected {str(tok)!r}", file=path, span=_span_of(tok), hint=hint)


def decode_source(data: bytes, path: str) -> str:
    """Bytes → text; invalid UTF-8 is a diagnostic at the first bad byte, not an exception."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise ContractError(
            [
                Diagnostic(
                    code="E002",
                    message=f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                    file=path,
                    span=Span.point(line, col),
                    hint="save the contract as UTF-8 text",
                )
            ]
        ) from None


class Prefix(NamedTuple):
    """What the parser has read of a text cut short at the cursor, and the terminals it could take next."""

    tokens: tuple[Token, ...]
    accepts: frozenset[str]


def parse_prefix(text: str) -> Prefix | None:
    """Feed `text` to the LALR parser without ending the input; None if the text already has a syntax error."""
    parser = _lark().parse_interactive(text)
    tokens = []
    try:
        for token in parser.iter_parse():
            tokens.append(token)
        return Prefix(tokens=tuple(tokens), accepts=frozenset(parser.accepts()))
    except UnexpectedInput:
        return None


def keyword_of(terminal: str) -> str | None:
    """The literal text of a keyword or punctuation terminal (`CONTRACT` → `contract`); None for NAME, INT, …."""
    word = _terminal_words().get(terminal, "")
    return word[1:-1] if terminal not in _REGEX_TERMINAL_WORDS and word.startswith("'") else None


def parse(source: str | bytes, path: str = "<input>") -> ast.SourceFile:
    """Parse contract source text into a `SourceFile`; raises `ContractError` on a syntax error."""
    text = decode_source(source, path) if isinstance(source, bytes) else source
    try:
        top = _lark().parse(text)
    except UnexpectedInput as err:
        raise ContractError([_syntax_diagnostic(err, text, path)]) from None
    contracts = tuple(x for x in top if isinstance(x, ast.Contract))
    deep = _too_deep(_asserted(contracts), path)
    if deep is not None:
        raise ContractError([deep])
    suites = tuple(x for x in top if isinstance(x, ast.ScenarioSuite))
    return ast.SourceFile(path=path, contracts=contracts, comments=_comments(text), suites=suites)


def parse_expression(text: str, path: str = "<expression>") -> ast.Expr:
    """Parse one assert relation (`total pay == $90`); raises `ContractError` on a syntax error."""
    try:
        expr = _lark("expr").parse(text)
    except UnexpectedInput as err:
        raise ContractError([_syntax_diagnostic(err, text, path)]) from None
    deep = _too_deep((expr,), path)
    if deep is not None:
        raise ContractError([deep])
    return expr
