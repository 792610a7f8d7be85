"""The `verify` command: z3 checks of a document's contracts, refutations turned into warnings.

contractlang never imports the verifier (it lives in `solver`); the CLI hands `verify_document` a function.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Protocol

from contractlang.diagnostics import Diagnostic, Span
from contractlang.ir import CheckedContract
from contractlang.lsp.analysis import Analysis
from contractlang.vocab import Frozen


class Outcome(Protocol):
    """One check of a verification report (`solver.verify.CheckOutcome`)."""

    name: str
    status: str
    message: str
    span: Span | None
    counterexample: dict | None


class Report(Protocol):
    contract: str
    checks: Sequence[Outcome]


# (checked contract, ContractSim environment or None, CT-Bench board ID or None) → its report.
Verify = Callable[[CheckedContract, int | None, int | None], Report]


class Summary(Frozen):
    """What the command answers: per contract, how many checks were proved, refuted or left unknown."""

    contract: str
    proved: int
    refuted: int
    unknown: int


class Verified(Frozen):
    diagnostics: tuple[Diagnostic, ...]
    summaries: tuple[Summary, ...]


def counterexample_text(counterexample: dict | None) -> str:
    """The counterexample in one line; the replayable event log stays for `contractlang verify --events-out`."""
    shown = {k: v for k, v in (counterexample or {}).items() if k != "events"}
    return json.dumps(shown, separators=(",", ":")) if shown else ""


def verify_document(
    analysis: Analysis, verify: Verify, env: int | None, board: int | None, line: int | None = None
) -> Verified:
    """Verify every checked contract of the document (or the one holding 1-based `line`)."""
    chosen = analysis.result.contracts
    if line is not None:
        contract = analysis.contract_at(line)
        chosen = tuple(c for c in chosen if contract is not None and c.spans["contract"] == contract.span)
    found, summaries = [], []
    for checked in chosen:
        report = verify(checked, env, board)
        for check in report.checks:
            if check.status != "refuted":
                continue
            example = counterexample_text(check.counterexample)
            found.append(
                Diagnostic(
                    code=check.name,
                    severity="warning",
                    file=checked.file,
                    span=check.span or checked.span("contract"),
                    message=f"{check.message}" + (f"; counterexample: {example}" if example else ""),
                    hint="`contractlang verify --events-out DIR` writes the counterexample as an "
                    "event log for `contractlang trace`",
                )
            )
        statuses = [c.status for c in report.checks]
        summaries.append(
            Summary(
                contract=report.contract,
                proved=statuses.count("proved"),
                refuted=statuses.count("refuted"),
                unknown=statuses.count("unknown"),
            )
        )
    return Verified(diagnostics=tuple(found), summaries=tuple(summaries))
