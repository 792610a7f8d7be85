"""Source text → syntax tree. `parse` is the only public function; syntax errors become diagnostics."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import PatternStr
from lark.visitors import Transformer_NonRecursive

from contractlang import ast
from contractlang.diagnostics import ContractError, Diagnostic, Span

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


def _grammar_text() -> str:
    # A wheel ships the grammar inside the package; a source checkout keeps it in grammar/.
    packaged = resources.files("contractlang").joinpath("grammar/contract.lark")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parent.parent / "grammar" / "contract.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_grammar_text(), parser="lalr", propagate_positions=True, maybe_placeholders=False)


@lru_cache(maxsize=1)
def _terminal_words() -> dict[str, str]:
    words = dict(_REGEX_TERMINAL_WORDS)
    for term in _lark().terminals:
        if isinstance(term.pattern, PatternStr) and term.name not in words:
            words[term.name] = f"'{term.pattern.value}'"
    return words


def _span_of(item) -> Span:
    if isinstance(item, Token):
        return Span(line=item.line, column=item.column, end_line=item.end_line, end_column=item.end_column)
    return item.span


def _meta_span(meta) -> Span:
    return Span(line=meta.line, column=meta.column, end_line=meta.end_line, end_column=meta.end_column)


# Literals longer than this are clamped; the checker reports anything above its limit (E003), and
# Python refuses to convert very long digit strings at all.
_MAX_LITERAL_DIGITS = 15


def _to_int(digits: str) -> int:
    digits = digits.lstrip("0") or "0"
    return 10**_MAX_LITERAL_DIGITS if len(digits) > _MAX_LITERAL_DIGITS else int(digits)


def _money_value(text: str) -> int:
    return _to_int(text.lstrip("$").replace(",", ""))


def _name(tok: Token) -> ast.Name:
    return ast.Name(value=str(tok), span=_span_of(tok))


def _strip(items):
    """Drop keyword tokens kept by the tree builder so rules see only their operands."""
    return [i for i in items if not (isinstance(i, Token) and i.type in ("WEEK", "WEEKS"))]


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    def __init__(self):
        super().__init__()
        self._depth: dict[int, int] = {}

    # literals
    def integer(self, meta, c):
        sign = -1 if len(c) == 2 else 1
        return ast.IntLit(value=sign * _to_int(c[-1]), span=_meta_span(meta))

    def money(self, meta, c):
        sign = -1 if len(c) == 2 else 1
        return ast.MoneyLit(value=sign * _money_value(c[-1]), span=_meta_span(meta))

    # expressions
    def _deep(self, node, *children):
        depth = 1 + max((self._depth.get(id(ch), 1) for ch in children), default=0)
        if depth > MAX_EXPRESSION_DEPTH:
            raise ContractError([
                Diagnostic(
                    code="E004",
                    message=f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep",
                    file="",
                    span=node.span,
                    hint="split the assertion into several simpler `assert` lines",
                )
            ])
        self._depth[id(node)] = depth
        return node

    def money_atom(self, meta, c):
        return ast.MoneyAtom(value=_money_value(c[0]), span=_span_of(c[0]))

    def int_atom(self, meta, c):
        return ast.IntAtom(value=_to_int(c[0]), span=_span_of(c[0]))

    def price_ref(self, meta, c):
        return ast.PriceRef(product=_name(c[0]), span=_meta_span(meta))

    def total_pay(self, meta, c):
        return ast.TotalPay(span=_meta_span(meta))

    def total_deliver(self, meta, c):
        return ast.TotalDeliver(product=_name(c[0]), span=_meta_span(meta))

    def total_value(self, meta, c):
        return ast.TotalValue(span=_meta_span(meta))

    def budget(self, meta, c):
        return ast.Budget(span=_meta_span(meta))

    def capital(self, meta, c):
        return ast.Capital(span=_meta_span(meta))

    def negate(self, meta, c):
        node = ast.Negate(operand=c[1], span=_meta_span(meta))
        return self._deep(node, c[1])

    def binary(self, meta, c):
        node = ast.Binary(op=str(c[1]), left=c[0], right=c[2], span=c[0].span.cover(c[2].span))
        return self._deep(node, c[0], c[2])

    def compare(self, meta, c):
        node = ast.Compare(op=str(c[1]), left=c[0], right=c[2], span=c[0].span.cover(c[2].span))
        return self._deep(node, c[0], c[2])

    # schedule pieces
    def single_week(self, meta, c):
        return ast.WeekSpec(form="single", weeks=tuple(_strip(c)), span=_meta_span(meta))

    def week_range(self, meta, c):
        return ast.WeekSpec(form="range", weeks=tuple(_strip(c)), span=_meta_span(meta))

    def week_list(self, meta, c):
        return ast.WeekSpec(form="list", weeks=tuple(_strip(c)), span=_meta_span(meta))

    def quantity(self, meta, c):
        return ast.Quantity(product=_name(c[0]), amount=c[1], span=_meta_span(meta))

    def party_entry(self, meta, c):
        label = str(c[1])
        if c[1].type == "STRING":
            label = label[1:-1]
        return ast.PartyEntry(role=_name(c[0]), label=label, span=_meta_span(meta))

    def price_entry(self, meta, c):
        return ast.PriceEntry(product=_name(c[0]), amount=c[1], span=_meta_span(meta))

    def delivery_entry(self, meta, c):
        return ast.DeliveryEntry(weeks=c[0], items=tuple(c[1:]), span=_meta_span(meta))

    def payment_entry(self, meta, c):
        return ast.PaymentEntry(weeks=c[0], amount=c[1], span=_meta_span(meta))

    def tile(self, meta, c):
        return ast.Tile(row=c[0], col=c[1], span=_meta_span(meta))

    def cover_entry(self, meta, c):
        colour = _name(c[3]) if len(c) > 3 else None
        return ast.CoverEntry(tile=c[0], giver=_name(c[1]), receiver=_name(c[2]), colour=colour, span=_meta_span(meta))

    def goal_entry(self, meta, c):
        return ast.GoalEntry(
            trigger=_name(c[0]), giver=_name(c[1]), amount=c[2], receiver=_name(c[3]), span=_meta_span(meta)
        )

    # clauses
    def parties(self, meta, c):
        return ast.Parties(entries=tuple(c), span=_meta_span(meta))

    def prices(self, meta, c):
        return ast.Prices(entries=tuple(c), span=_meta_span(meta))

    def deliver(self, meta, c):
        return ast.Deliver(entries=tuple(c), span=_meta_span(meta))

    def pay(self, meta, c):
        return ast.Pay(entries=tuple(c), span=_meta_span(meta))

    def assert_stmt(self, meta, c):
        return ast.Assert(expr=c[0], span=_meta_span(meta))

    def minimum_block(self, meta, c):
        return tuple(c)

    def substitution(self, meta, c):
        return ast.Substitution(minimum=c[0] if c else None, span=_meta_span(meta))

    def payment_deduction(self, meta, c):
        return ast.PaymentDeduction(minimum=c[0] if c else None, span=_meta_span(meta))

    def rollover(self, meta, c):
        return ast.Rollover(max_deficit=c[0] if c else None, span=_meta_span(meta))

    def on_breach(self, meta, c):
        return ast.OnBreach(span=_meta_span(meta))

    def cover(self, meta, c):
        return ast.Cover(entries=tuple(c), span=_meta_span(meta))

    def on_goal(self, meta, c):
        return ast.OnGoal(entries=tuple(c), span=_meta_span(meta))

    def game_decl(self, meta, c):
        return ast.GameRef(parts=tuple(str(t) for t in c), span=_meta_span(meta))

    def contract(self, meta, c):
        name_tok = c[0]
        return ast.Contract(
            name=str(name_tok)[1:-1],
            name_span=_span_of(name_tok),
            game=c[1],
            clauses=tuple(c[2:]),
            span=_meta_span(meta),
        )

    def start(self, meta, c):
        return tuple(c)


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
    if tok.type == "$END":
        lines = text.splitlines() or [""]
        line = max(len(lines), 1)
        return Diagnostic(
            code="E001",
            message="unexpected end of file",
            file=path,
            span=Span.point(line, len(lines[-1]) + 1 if lines else 1),
            hint="expected " + _expected_words(_acceptable(err, err.expected)) + "; is a closing '}' missing?",
        )
    hint = "expected " + _expected_words(_acceptable(err, err.expected))
    if str(tok) == "." and tok.column > 1 and text.splitlines()[tok.line - 1][tok.column - 2].isdigit():
        hint += "; amounts are whole numbers (no cents)"
    return Diagnostic(code="E001", message=f"unexpected {str(tok)!r}", file=path, span=_span_of(tok), hint=hint)


def decode_source(data: bytes, path: str) -> str:
    """Bytes → text; invalid UTF-8 is a diagnostic at the first bad byte, not an exception."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise ContractError([
            Diagnostic(
                code="E002",
                message=f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                file=path,
                span=Span.point(line, col),
                hint="save the contract as UTF-8 text",
            )
        ]) from None


def parse(source: str | bytes, path: str = "<input>") -> ast.SourceFile:
    """Parse contract source text into a `SourceFile`; raises `ContractError` on a syntax error."""
    text = decode_source(source, path) if isinstance(source, bytes) else source
    try:
        tree: Tree = _lark().parse(text)
    except UnexpectedInput as err:
        raise ContractError([_syntax_diagnostic(err, text, path)]) from None
    try:
        contracts = _ToAst().transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, ContractError):
            raise ContractError([d.model_copy(update={"file": path}) for d in err.orig_exc.diagnostics]) from None
        raise
    return ast.SourceFile(path=path, contracts=contracts, comments=_comments(text))
