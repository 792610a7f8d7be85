"""One document's parse and check, made once per edit and shared by every feature."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from contractlang import ast, check_source
from contractlang.checker import CheckResult, check, check_board
from contractlang.diagnostics import ContractError, Diagnostic, Span
from contractlang.files import FileError, read_capped
from contractlang.ir import CheckedContract
from contractlang.lsp.text import Position, span_contains
from contractlang.parser import parse
from contractlang.vocab import Frozen

# Live checking stops here: the parser reads ~100 KB a second on a loaded machine, and an editor that waits
# minutes for a multi-megabyte file is worse served than by one line pointing at `contractlang check`.
MAX_LIVE_CHARS = 256 * 1024

# Braces outside strings and comments: where they close at depth 0, one contract ends and the next may begin.
_BRACES = re.compile(r'"[^"\n]*"|//[^\n]*|[{}]')

Colours = tuple[tuple[str, ...], ...]
BoardColours = Callable[[int], Colours]
# A piece of the file (its text, first line, first column) → its parse, kept for the next edit.
Pieces = dict[tuple[str, int, int], ast.SourceFile]


class Board(Frozen):
    """The CT-Bench board the author chose in the editor's settings: its ID and its tiles' colours by row."""

    id: int
    colours: Colours

    def colour(self, tile: tuple[int, int]) -> str:
        return self.colours[tile[0]][tile[1]]


class Analysis(Frozen):
    """Parse tree (None after a syntax error), check result and every diagnostic of one document version."""

    source: str
    tree: ast.SourceFile | None
    result: CheckResult
    board: Board | None
    diagnostics: tuple[Diagnostic, ...]
    pieces: Pieces = {}

    def checked(self, contract: ast.Contract) -> CheckedContract | None:
        """The checked form of a contract of this document; None if it has errors."""
        return next((c for c in self.result.contracts if c.spans["contract"] == contract.span), None)

    def contract_at(self, line: int) -> ast.Contract | None:
        """The contract whose text holds 1-based `line`."""
        if self.tree is None:
            return None
        return next((c for c in self.tree.contracts if c.span.line <= line <= c.span.end_line), None)

    def test_at(self, line: int) -> ast.ScenarioTest | None:
        """The scenario test whose text holds 1-based `line`, in a contract or a `tests for` block."""
        return next((t for t in self.tests() if t.span.line <= line <= t.span.end_line), None)

    def tests(self) -> list[ast.ScenarioTest]:
        if self.tree is None:
            return []
        return [t for block in (*self.tree.contracts, *self.tree.suites) for t in block.tests]


def too_large(source: str, path: str) -> Diagnostic:
    return Diagnostic(
        code="L001",
        severity="warning",
        file=path,
        span=Span.point(1, 1),
        message=f"this file has {len(source):,} characters; live checking stops at {MAX_LIVE_CHARS:,}",
        hint=f"run `contractlang check {path}` in a terminal",
    )


def not_analysed(source: str, path: str, board: Board | None, why: Diagnostic) -> Analysis:
    """The analysis of a document that is not parsed: one diagnostic saying why, no tree, nothing checked."""
    return Analysis(
        source=source, tree=None, result=CheckResult(contracts=(), diagnostics=()), board=board, diagnostics=(why,)
    )


def analyse(source: str, path: str, board: Board | None = None, previous: Analysis | None = None) -> Analysis:
    """Parse and check `source` the way `contractlang check` does; with a board, also its colour checks.

    With the analysis of the previous version, only the contracts whose text or place changed are parsed again.
    """
    if len(source) > MAX_LIVE_CHARS:
        return not_analysed(source, path, board, too_large(source, path))
    try:
        tree, pieces = parse_by_contract(source, path, previous.pieces if previous else {})
    except ContractError as err:
        result = CheckResult(contracts=(), diagnostics=tuple(err.diagnostics))
        return Analysis(source=source, tree=None, result=result, board=board, diagnostics=result.diagnostics)
    result = check(tree)
    if result.unresolved:  # `tests for` a contract of another file: the folder's contract files have it
        result = check(tree, sibling_contracts(path))
    found = list(result.diagnostics)
    if board is not None:
        for checked in result.contracts:
            found += check_board(checked, board.colour, f"board {board.id}")
    return Analysis(source=source, tree=tree, result=result, board=board, diagnostics=tuple(found), pieces=pieces)


def parse_by_contract(source: str, path: str, known: Pieces) -> tuple[ast.SourceFile, Pieces]:
    """The tree `parse(source)` gives, parsing each contract on its own (or taking it from `known`).

    The file is cut where a `}` closes at depth 0. Each piece is parsed behind as many newlines and spaces as
    precede it, so its spans are the file's. The grammar is `contract*` and unambiguous, so when every piece
    parses, their contracts are the file's; when one does not, the whole file is parsed for `check`'s error.
    """
    pieces: Pieces = {}
    contracts: list[ast.Contract] = []
    suites: list[ast.ScenarioSuite] = []
    comments: list[ast.Comment] = []
    line = column = 1
    for text in _pieces(source):
        key = (text, line, column)
        try:
            part = known.get(key) or parse("\n" * (line - 1) + " " * (column - 1) + text, path)
        except ContractError:
            return parse(source, path), {}
        pieces[key] = part
        contracts += part.contracts
        suites += part.suites
        comments += part.comments
        breaks = text.count("\n")
        line, column = line + breaks, (len(text) - text.rfind("\n") if breaks else column + len(text))
    tree = ast.SourceFile(path=path, contracts=tuple(contracts), comments=tuple(comments), suites=tuple(suites))
    return tree, pieces


def sibling_contracts(path: str) -> dict[str, CheckedContract]:
    """The contracts of the other `.contract` files in the folder of `path` (a test file's contract is there)."""
    here = Path(path)
    found: dict[str, CheckedContract] = {}
    if not here.is_absolute() or not here.parent.is_dir():
        return found
    for other in sorted(here.parent.glob("*.contract")):
        if other != here and other.is_file():
            try:
                data = read_capped(other, MAX_LIVE_CHARS)
            except (OSError, FileError):
                continue
            for checked in check_source(data, str(other)).contracts:
                found.setdefault(checked.ir.name, checked)
    return found


def _pieces(source: str) -> list[str]:
    out, depth, start = [], 0, 0
    for m in _BRACES.finditer(source):
        if m.group() == "{":
            depth += 1
        elif m.group() == "}":
            depth -= 1
            if depth == 0:
                out.append(source[start : m.end()])
                start = m.end()
    out.append(source[start:])
    return out


def nodes_at(node: ast.Node, pos: Position) -> list[ast.Node]:
    """The nodes whose span holds `pos`, outermost first (an explicit stack: expressions may nest deep)."""
    path: list[ast.Node] = []
    frontier = [node] if span_contains(node.span, pos) else []
    while frontier:
        current = frontier.pop()
        path.append(current)
        children = []
        for field in type(current).model_fields:
            value = getattr(current, field, None)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, ast.Node) and span_contains(child.span, pos):
                    children.append(child)
        frontier = children[:1]
    return path
