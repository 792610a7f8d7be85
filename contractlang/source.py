"""Contract source to checked contracts: parse and check in one step, the way library code reads a contract."""

from __future__ import annotations

from pathlib import Path

from contractlang.checker import CheckResult, check_asserts
from contractlang.checker import check as check_tree
from contractlang.diagnostics import ContractError
from contractlang.files import MAX_CONTRACT_BYTES, read_capped
from contractlang.ir import CheckedContract
from contractlang.parser import parse


def check_source(source: str | bytes, path: str = "<input>", decide_asserts: bool = False) -> CheckResult:
    """Parse and check in one step; syntax errors come back as diagnostics, not exceptions. With
    `decide_asserts` (the `check` command) an `assert` that needs no environment and is false is an error too."""
    try:
        tree = parse(source, path)
    except ContractError as err:
        return CheckResult(contracts=(), diagnostics=tuple(err.diagnostics))
    result = check_tree(tree)
    if not decide_asserts:
        return result
    false = [d for c in result.contracts for d in check_asserts(c)]
    ordered = sorted((*result.diagnostics, *false), key=lambda d: (d.span.line, d.span.column, d.code))
    return result.model_copy(update={"diagnostics": tuple(ordered)})


def load(path: str | Path) -> list[CheckedContract]:
    """Read, parse and check a contract file; raises `ContractError` if anything is wrong in it, `FileError` if it
    cannot be read (a regular file of at most 1 MiB)."""
    path = Path(path)
    result = check_source(read_capped(path, MAX_CONTRACT_BYTES), str(path))
    if not result.ok:
        raise ContractError(list(result.diagnostics))
    return list(result.contracts)
