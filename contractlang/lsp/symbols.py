"""Document symbols: each contract, with its game, its clauses and its tests as children, and each `tests for`
block with its tests (the editor's outline)."""

from __future__ import annotations

from typing import Literal

from contractlang import ast
from contractlang.formatter import format_expr
from contractlang.lsp.analysis import Analysis
from contractlang.lsp.text import Range, span_range
from contractlang.vocab import Frozen


class Symbol(Frozen):
    name: str
    kind: Literal["contract", "clause", "test"]
    detail: str
    range: Range
    selection: Range
    children: tuple[Symbol, ...] = ()


def document_symbols(analysis: Analysis) -> tuple[Symbol, ...]:
    """One symbol per contract and per `tests for` block of a file that parses; none while it has a syntax error."""
    if analysis.tree is None:
        return ()
    contracts = [
        Symbol(
            name=c.name,
            kind="contract",
            detail=f"game {c.game.game_id}",
            range=span_range(c.span),
            selection=span_range(c.name_span),
            children=tuple(_clause(k) for k in c.clauses) + tuple(_test(t) for t in c.tests),
        )
        for c in analysis.tree.contracts
    ]
    suites = [
        Symbol(
            name=f"tests for {s.contract}",
            kind="contract",
            detail=f"{len(s.tests)} test{'s' * (len(s.tests) != 1)}",
            range=span_range(s.span),
            selection=span_range(s.contract_span),
            children=tuple(_test(t) for t in s.tests),
        )
        for s in analysis.tree.suites
    ]
    return tuple(sorted([*contracts, *suites], key=lambda x: (x.range.start.line, x.range.start.character)))


def _test(test: ast.ScenarioTest) -> Symbol:
    detail = f"{len(test.expect)} expectation{'s' * (len(test.expect) != 1)}"
    return Symbol(
        name=f"test {test.name}",
        kind="test",
        detail=detail,
        range=span_range(test.span),
        selection=span_range(test.name_span),
    )


def _clause(clause: ast.Clause) -> Symbol:
    name = clause.kind.replace("_", " ")
    if isinstance(clause, ast.Assert):
        name = f"assert {format_expr(clause.expr)}"
    entries = getattr(clause, "entries", None)
    detail = "" if entries is None else f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    return Symbol(
        name=name, kind="clause", detail=detail, range=span_range(clause.span), selection=span_range(clause.span)
    )
