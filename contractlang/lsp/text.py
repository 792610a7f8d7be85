"""Positions in source text: the parser's 1-based spans, the editor's 0-based positions in UTF-16 units."""

from __future__ import annotations

from contractlang.diagnostics import Span
from contractlang.vocab import Frozen


class Position(Frozen):
    """0-based line and column; the column counts code points (the parser's unit), not UTF-16 units."""

    line: int
    character: int


class Range(Frozen):
    start: Position
    end: Position

    def contains(self, pos: Position) -> bool:
        return (self.start.line, self.start.character) <= (pos.line, pos.character) <= (self.end.line,
                                                                                        self.end.character)


def span_range(span: Span) -> Range:
    return Range(start=Position(line=span.line - 1, character=span.column - 1),
                 end=Position(line=span.end_line - 1, character=span.end_column - 1))


def span_contains(span: Span, pos: Position) -> bool:
    """Whether the cursor touches the span (its end included, so a word is found with the cursor just after it)."""
    return span_range(span).contains(pos)


class Lines:
    """A document's lines, split where the parser counts them (at `\\n`), for offset and unit conversions."""

    def __init__(self, source: str):
        self.source = source
        self.starts = [0]
        at = source.find("\n")
        while at != -1:
            self.starts.append(at + 1)
            at = source.find("\n", at + 1)

    def text(self, line: int) -> str:
        if not 0 <= line < len(self.starts):
            return ""
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[line]:end]

    def offset(self, pos: Position) -> int:
        """Offset of a position, clamped into the text (editors may ask about positions past the end)."""
        if pos.line < 0:
            return 0
        if pos.line >= len(self.starts):
            return len(self.source)
        return self.starts[pos.line] + min(max(pos.character, 0), len(self.text(pos.line)))

    def end(self) -> Position:
        return Position(line=len(self.starts) - 1, character=len(self.text(len(self.starts) - 1)))

    def to_units(self, pos: Position, encoding: str = "utf-16") -> int:
        """The editor's column (in the negotiated encoding's units) for a code-point column."""
        prefix = self.text(pos.line)[:max(pos.character, 0)]
        return max(pos.character - len(prefix), 0) + sum(_width(ch, encoding) for ch in prefix)

    def from_units(self, line: int, units: int, encoding: str = "utf-16") -> Position:
        """The code-point position of an editor's column (clamped to the line)."""
        count = column = 0
        for ch in self.text(line):
            count += _width(ch, encoding)
            if count > units:
                break
            column += 1
        return Position(line=max(line, 0), character=column)


def _width(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return 1
    return 2 if ord(ch) > 0xFFFF else 1
