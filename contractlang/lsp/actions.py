"""Code actions: the fixes a checker hint spells out exactly, as text edits."""

from __future__ import annotations

from contractlang import ast
from contractlang.diagnostics import Diagnostic
from contractlang.lsp.analysis import Analysis, nodes_at
from contractlang.lsp.text import Lines, Position, Range, span_range
from contractlang.parser import UNCLOSED_HINT
from contractlang.vocab import Frozen


class Edit(Frozen):
    range: Range
    text: str


class Fix(Frozen):
    title: str
    diagnostic: Diagnostic
    edits: tuple[Edit, ...]


def fixes(analysis: Analysis, diagnostics: tuple[Diagnostic, ...]) -> tuple[Fix, ...]:
    """The mechanical fixes for `diagnostics` (E611 chip colour, E205 reversed range, E604 giver, E001 brace)."""
    out: list[Fix] = []
    for d in diagnostics:
        if d.code == "E001" and d.hint == UNCLOSED_HINT:
            end = Lines(analysis.source).end()
            out.append(
                Fix(
                    title="add the closing '}'",
                    diagnostic=d,
                    edits=(Edit(range=Range(start=end, end=end), text="\n}\n"),),
                )
            )
            continue
        node = _node_at(analysis, d)
        if d.code == "E611" and isinstance(node, ast.CoverEntry) and node.colour and analysis.board:
            colour = analysis.board.colour((node.tile.row.value, node.tile.col.value))
            out.append(
                Fix(
                    title=f"write `with {colour} chip`",
                    diagnostic=d,
                    edits=(Edit(range=span_range(node.colour.span), text=colour),),
                )
            )
            cut = Range(start=span_range(node.receiver.span).end, end=span_range(node.span).end)
            out.append(Fix(title="leave the colour out", diagnostic=d, edits=(Edit(range=cut, text=""),)))
        elif d.code == "E205" and isinstance(node, ast.WeekSpec):
            low, high = node.weeks
            out.append(
                Fix(
                    title=f"write the range as {high.value}..{low.value}",
                    diagnostic=d,
                    edits=(
                        Edit(range=span_range(low.span), text=_text(analysis, high)),
                        Edit(range=span_range(high.span), text=_text(analysis, low)),
                    ),
                )
            )
        elif d.code == "E604" and isinstance(node, ast.Name):
            entry = next((n for n in nodes_at_span(analysis, d) if isinstance(n, ast.GoalEntry)), None)
            if entry is not None:
                trigger = entry.trigger.value
                out.append(
                    Fix(
                        title=f"write `{trigger}: {trigger} transfers ...`",
                        diagnostic=d,
                        edits=(Edit(range=span_range(node.span), text=trigger),),
                    )
                )
    return tuple(out)


def nodes_at_span(analysis: Analysis, d: Diagnostic) -> list[ast.Node]:
    contract = analysis.contract_at(d.span.line)
    if contract is None:
        return []
    return nodes_at(contract, Position(line=d.span.line - 1, character=d.span.column - 1))


def _node_at(analysis: Analysis, d: Diagnostic) -> ast.Node | None:
    """The node the diagnostic's span covers exactly (the checker reports at a node's own span)."""
    return next((n for n in reversed(nodes_at_span(analysis, d)) if n.span == d.span), None)


def _text(analysis: Analysis, node: ast.Node) -> str:
    lines = Lines(analysis.source)
    rng = span_range(node.span)
    return analysis.source[lines.offset(rng.start) : lines.offset(rng.end)]
