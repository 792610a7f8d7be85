"""Source spans and diagnostics: the one error type every stage reports through."""

from __future__ import annotations

import difflib
import functools
import unicodedata
from typing import Literal, NamedTuple

from contractlang.vocab import Frozen


class Span(NamedTuple):
    """A region of source text; lines and columns are 1-based, the end column is exclusive.

    An immutable tuple rather than a pydantic model: the parser makes one per node and name,
    tens of thousands for a long file, and validation there bought nothing.
    """

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, line: int, column: int) -> Span:
        return cls(line, column, line, column + 1)

    def cover(self, other: Span) -> Span:
        return Span(self.line, self.column, other.end_line, other.end_column)


Severity = Literal["error", "warning"]


def unsafe_characters(text: str) -> list[str]:
    """Control and format characters (bidi overrides, zero-width marks) that would mislead a terminal."""
    return [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf")]


def printable(text: str) -> str:
    """`text` with each control or format character shown as U+FFFD, one column each (carets stay aligned)."""
    return "".join("\ufffd" if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)


@functools.lru_cache(maxsize=1)
def source_lines(source: str) -> tuple[str, ...]:
    """The lines of the source being reported on, split once for all its diagnostics: splitting it again for
    each one made a file with 20,000 errors take minutes to print."""
    return tuple(source.splitlines())


def did_you_mean(word: str, candidates) -> str:
    """`"did you mean `deliver`? "` for the candidate closest to a misspelt `word`, or "" when none is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`? " if close else ""


class Diagnostic(Frozen):
    """A located problem with a stable code, a message and a hint for fixing it."""

    code: str
    severity: Severity = "error"
    message: str
    file: str
    span: Span
    hint: str = ""

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "hint": self.hint,
        }

    @classmethod
    def from_json(cls, data: dict) -> Diagnostic:
        """The inverse of `to_json` (diagnostics kept in caches and records come back this way)."""
        return cls(
            code=data["code"],
            severity=data["severity"],
            message=data["message"],
            file=data["file"],
            span=Span(data["line"], data["column"], data["end_line"], data["end_column"]),
            hint=data["hint"],
        )

    def render(self, source: str | None) -> str:
        """`file:line:col: error[CODE]: message`, the source line, a caret under the span, the hint."""
        head = printable(
            f"{self.file}:{self.span.line}:{self.span.column}: {self.severity}[{self.code}]: {self.message}"
        )
        out = [head]
        lines = source_lines(source) if source is not None else ()
        if 1 <= self.span.line <= len(lines):
            text = printable(lines[self.span.line - 1].expandtabs(1))
            start = max(self.span.column - 1, 0)
            if self.span.end_line == self.span.line:
                width = max(self.span.end_column - self.span.column, 1)
            else:
                width = max(len(text) - start, 1)
            out.append(f"    {text}")
            out.append("    " + " " * start + "^" * min(width, max(len(text) - start, 1)))
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return "\n".join(out)


class ContractError(Exception):
    """Raised by a stage that cannot continue; carries every diagnostic found so far."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("; ".join(d.message for d in diagnostics))
