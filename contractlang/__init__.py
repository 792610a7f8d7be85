"""contractlang: a typed contract language for ContractSim and CT-Bench, with its interpreter."""

from __future__ import annotations

from pathlib import Path

from contractlang.checker import CheckResult, check
from contractlang.diagnostics import ContractError, Diagnostic, Span
from contractlang.ir import CheckedContract, ContractIR, ContractSimIR, CTBenchIR
from contractlang.parser import parse

__all__ = [
    "CheckResult",
    "CheckedContract",
    "ContractError",
    "ContractIR",
    "ContractSimIR",
    "CTBenchIR",
    "Diagnostic",
    "Span",
    "check",
    "check_source",
    "load",
    "parse",
]


def check_source(source: str | bytes, path: str = "<input>") -> CheckResult:
    """Parse and check in one step; syntax errors come back as diagnostics, not exceptions."""
    try:
        tree = parse(source, path)
    except ContractError as err:
        return CheckResult(contracts=(), diagnostics=tuple(err.diagnostics))
    return check(tree)


def load(path: str | Path) -> list[CheckedContract]:
    """Read, parse and check a contract file; raises `ContractError` if anything is wrong."""
    path = Path(path)
    result = check_source(path.read_bytes(), str(path))
    if not result.ok:
        raise ContractError(list(result.diagnostics))
    return list(result.contracts)
