"""Positions in source text: the parser's 1-based spans, the editor's 0-based positions in UTF-16 units."""

from __future__ import annotations

import re
from collections.abc import Iterable

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
        return (
            (self.start.line, self.start.character) <= (pos.line, pos.character) <= (self.end.line, self.end.character)
        )


def span_range(span: Span) -> Range:
    return Range(
        start=Position(line=span.line - 1, character=span.column - 1),
        end=Position(line=span.end_line - 1, character=span.end_column - 1),
    )


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
        return self.source[self.starts[line] : end]

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
        prefix = self.text(pos.line)[: max(pos.character, 0)]
        return max(pos.character - len(prefix), 0) + _units(prefix, encoding)

    def from_units(self, line: int, units: int, encoding: str = "utf-16") -> Position:
        """The code-point position of an editor's column (clamped to the line)."""
        return Position(line=max(line, 0), character=column_of(self.text(line), units, encoding))


# Text as the editor changes it (textDocument/didChange): a change with a range replaces that range, one without
# replaces the whole text. Ranges are (start line, start column, end line, end column) in the encoding's units.
Change = tuple[tuple[int, int, int, int] | None, str]
# The characters one notification's changes may touch (the lines they edit, the text they insert): about a second
# of work. Edits of ordinary lines cost their length, so 100,000 of them fit; 100,000 edits deep in one line of
# 200,000 characters would take minutes and are refused instead.
MAX_CHANGE_WORK = 2**27


class ChangesRefused(ValueError):
    """The changes of one notification would touch more than MAX_CHANGE_WORK characters."""


def apply_changes(source: str, changes: Iterable[Change], encoding: str = "utf-16") -> str:
    """`source` after the editor's changes, in order, each clamped into the text as it stands then.

    The text is held as a list of lines while the changes apply, so a change costs the length of the lines it
    touches, never the whole document; ChangesRefused if together they would touch over MAX_CHANGE_WORK characters.
    """
    lines = source.split("\n")
    work = 0
    for count, (where, text) in enumerate(changes, start=1):
        if where is None:
            lines = text.split("\n")
            continue
        start_line, start_units, end_line, end_units = where
        (first, start), (last, end) = (
            _clamped(lines, start_line, start_units, encoding),
            _clamped(lines, end_line, end_units, encoding),
        )
        last, end = max((last, end), (first, start))
        new = text.split("\n")
        work += (
            len(lines[first])
            + len(lines[last])
            + len(text)
            + (len(lines) - first if len(new) != last + 1 - first else 0)
        )
        if work > MAX_CHANGE_WORK:
            raise ChangesRefused(
                f"change {count:,} of the notification brings the characters its changes touch over {MAX_CHANGE_WORK:,}"
            )
        new[0] = lines[first][:start] + new[0]
        new[-1] += lines[last][end:]
        lines[first : last + 1] = new
    return "\n".join(lines)


def _clamped(lines: list[str], line: int, units: int, encoding: str) -> tuple[int, int]:
    """An editor position as (line, code-point column) inside `lines`; past the end is the end of the text."""
    if line < 0:
        return 0, 0
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    return line, column_of(lines[line], units, encoding)


_SURROGATE = re.compile("[\ud800-\udfff]")
_CODECS = {"utf-16": ("utf-16-le", 2), "utf-8": ("utf-8", 1)}  # the protocol's default is UTF-16


def column_of(text: str, units: int, encoding: str) -> int:
    """The code points of `text` that fit in `units` of the encoding (a character cut by the column is left out).

    Counted by the codec, not character by character, so a column deep in a line of 100,000 characters costs
    microseconds."""
    units = max(units, 0)
    if encoding == "utf-32" or text.isascii():
        return min(units, len(text))
    codec, width = _CODECS.get(encoding, _CODECS["utf-16"])
    if _SURROGATE.search(text):  # lone surrogates: the codec would pair or refuse them, so count one by one
        count = column = 0
        for ch in text:
            count += _width(ch, encoding)
            if count > units:
                break
            column += 1
        return column
    return len(text.encode(codec)[: units * width].decode(codec, "ignore"))


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32" or text.isascii():
        return len(text)
    codec, width = _CODECS.get(encoding, _CODECS["utf-16"])
    return len(text.encode(codec, "surrogatepass")) // width


def _width(ch: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(ch.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return 1
    return 2 if ord(ch) > 0xFFFF else 1
