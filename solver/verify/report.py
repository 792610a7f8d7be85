"""Verification results: each check is proved, refuted (with a counterexample) or unknown (with a reason)."""

from __future__ import annotations

from typing import Literal

from contractlang.diagnostics import Span
from contractlang.vocab import Frozen

Status = Literal["proved", "refuted", "unknown"]


class CheckOutcome(Frozen):
    name: str
    status: Status
    message: str
    span: Span | None = None
    counterexample: dict | None = None

    def to_json(self) -> dict:
        span = (
            None
            if self.span is None
            else {
                "line": self.span.line,
                "column": self.span.column,
                "end_line": self.span.end_line,
                "end_column": self.span.end_column,
            }
        )
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "span": span,
            "counterexample": self.counterexample,
        }


class VerificationReport(Frozen):
    contract: str
    checks: tuple[CheckOutcome, ...]

    def status(self, name: str) -> Status:
        return next(c.status for c in self.checks if c.name == name)

    def to_json(self) -> dict:
        return {"contract": self.contract, "checks": [c.to_json() for c in self.checks]}
