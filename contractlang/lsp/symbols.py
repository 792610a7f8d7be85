"""Document symbols: each contract, with its game and its clauses as children (the editor's outline)."""

from __future__ import annotations

from typing import Literal

from contractlang import ast
from contractlang.formatter import format_expr
from contractlang.lsp.analysis import Analysis
from contractlang.lsp.text import Range, span_range
from contractlang.vocab import Frozen


class Symbol(Frozen):
    name: str
    kind: Literal["contract", "clause"]
    detail: str
    range: Range
    selection: Range
    children: tuple[Symbol, ...] = ()


def document_symbols(analysis: Analysis) -> tuple[Symbol, ...]:
    """One symbol per contract of a file that parses; none while it has a syntax error."""
    if analysis.tree is None:
        return ()
    return tuple(
        Symbol(
            name=c.name,
            kind="contract",
            detail=f"game {c.game.game_id}",
            range=span_range(c.span),
            selection=span_range(c.name_span),
            children=tuple(_clause(k) for k in c.clauses),
        )
        for c in analysis.tree.contracts
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
