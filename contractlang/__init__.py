"""contractlang: a typed contract language for ContractSim and CT-Bench, with its interpreter."""

from __future__ import annotations

from pathlib import Path

from contractlang.checker import CheckResult, check_asserts
from contractlang.checker import check as check_tree
from contractlang.diagnostics import ContractError, Diagnostic, Span
from contractlang.ir import CheckedContract, ContractIR, ContractSimIR, CTBenchIR
from contractlang.parser import parse

FACE = (
    "Agent",
    "AgentError",
    "Played",
    "Seat",
    "ctbench",
    "experiments",
    "game_for",
    "load_game",
    "load_one",
    "model_of",
    "play",
    "register_agent",
    "solve",
    "verify",
)
"""The verbs of the Python face (`contractlang.api`), imported on first use: they need the games and solvers."""

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
    *FACE,
]


def __getattr__(name: str):
    if name in FACE:
        import contractlang.api as face

        return getattr(face, name)
    raise AttributeError(f"module 'contractlang' has no attribute {name!r}")


def check(source, path: str = "<input>"):
    """Check contract source (text, bytes, or the file a `Path` names) as `contractlang check` does, asserts
    decided; a parse tree is checked as it is. Diagnostics come back in the result, never raised."""
    if isinstance(source, Path):
        return check_source(source.read_bytes(), str(source), decide_asserts=True)
    if isinstance(source, (str, bytes)):
        return check_source(source, path, decide_asserts=True)
    return check_tree(source)


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
    """Read, parse and check a contract file; raises `ContractError` if anything is wrong."""
    path = Path(path)
    result = check_source(path.read_bytes(), str(path))
    if not result.ok:
        raise ContractError(list(result.diagnostics))
    return list(result.contracts)
