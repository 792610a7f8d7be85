"""One document's parse and check, made once per edit and shared by every feature."""

from __future__ import annotations

from collections.abc import Callable

from contractlang import ast
from contractlang.checker import CheckResult, check, check_board
from contractlang.diagnostics import ContractError, Diagnostic, Span
from contractlang.ir import CheckedContract
from contractlang.parser import parse
from contractlang.lsp.text import Position, span_contains
from contractlang.vocab import Frozen

# Live checking stops here: the parser reads ~100 KB a second on a loaded machine, and an editor that waits
# minutes for a multi-megabyte file is worse served than by one line pointing at `contractlang check`.
MAX_LIVE_CHARS = 256 * 1024

Colours = tuple[tuple[str, ...], ...]
BoardColours = Callable[[int], Colours]


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

    def checked(self, contract: ast.Contract) -> CheckedContract | None:
        """The checked form of a contract of this document; None if it has errors."""
        return next((c for c in self.result.contracts if c.spans["contract"] == contract.span), None)

    def contract_at(self, line: int) -> ast.Contract | None:
        """The contract whose text holds 1-based `line`."""
        if self.tree is None:
            return None
        return next((c for c in self.tree.contracts if c.span.line <= line <= c.span.end_line), None)


def too_large(source: str, path: str) -> Diagnostic:
    return Diagnostic(code="L001", severity="warning", file=path, span=Span.point(1, 1),
                      message=f"this file has {len(source):,} characters; live checking stops at "
                              f"{MAX_LIVE_CHARS:,}", hint=f"run `contractlang check {path}` in a terminal")


def analyse(source: str, path: str, board: Board | None = None) -> Analysis:
    """Parse and check `source` the way `contractlang check` does; with a board, also its colour checks."""
    if len(source) > MAX_LIVE_CHARS:
        return Analysis(source=source, tree=None, result=CheckResult(contracts=(), diagnostics=()), board=board,
                        diagnostics=(too_large(source, path),))
    try:
        tree = parse(source, path)
    except ContractError as err:
        result = CheckResult(contracts=(), diagnostics=tuple(err.diagnostics))
        return Analysis(source=source, tree=None, result=result, board=board, diagnostics=result.diagnostics)
    result = check(tree)
    found = list(result.diagnostics)
    if board is not None:
        for checked in result.contracts:
            found += check_board(checked, board.colour, f"board {board.id}")
    return Analysis(source=source, tree=tree, result=result, board=board, diagnostics=tuple(found))


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
