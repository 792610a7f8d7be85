"""contractlang: a typed contract language for ContractSim and CT-Bench, with its interpreter."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from contractlang import source as source_module
from contractlang.api import Face
from contractlang.api import __all__ as FACE  # the face's names; the face itself loads on first use
from contractlang.ast import SourceFile
from contractlang.checker import CheckResult
from contractlang.checker import check as check_tree
from contractlang.diagnostics import ContractError, Diagnostic, Span
from contractlang.errors import BadArgument, BadData, ContractlangError, Flag, Text, UnknownName, checked
from contractlang.files import MAX_CONTRACT_BYTES, read_capped
from contractlang.ir import CheckedContract, ContractIR, ContractSimIR, CTBenchIR
from contractlang.parser import parse as parse_source

try:
    __version__ = version("contractlang")
except PackageNotFoundError:  # a source checkout run without installing: no metadata to read
    __version__ = "unknown"

sys.modules[__name__].__class__ = Face  # `cl.render` and `cl.translate` stay the verbs, not the subpackages

__all__ = [
    "BadArgument",
    "BadData",
    "CheckResult",
    "CheckedContract",
    "ContractError",
    "ContractIR",
    "ContractSimIR",
    "ContractlangError",
    "CTBenchIR",
    "Diagnostic",
    "Span",
    "UnknownName",
    "__version__",
    "check",
    "check_source",
    "load",
    "parse",
    *FACE,
]


def __getattr__(name: str):
    if name in FACE:
        from contractlang import api

        return getattr(api, name)
    raise AttributeError(f"module 'contractlang' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The face as `dir(cl)` lists it: the public names and the lazily loaded verbs, none of the imports and
    subpackages this module is built from."""
    return sorted(__all__)


@checked
def parse(source: str | bytes, path: Text = "<input>") -> SourceFile:
    """Parse contract source text into a `SourceFile`; raises `ContractError` on a syntax error."""
    return parse_source(source, path)


@checked
def check(source: str | bytes | Path | SourceFile, path: Text = "<input>") -> CheckResult:
    """Check contract source (text, bytes, or the file a `Path` names) as `contractlang check` does, asserts
    decided; a parse tree is checked as it is. Diagnostics come back in the result, never raised."""
    if isinstance(source, Path):
        return check_source(read_capped(source, MAX_CONTRACT_BYTES), str(source), decide_asserts=True)
    if isinstance(source, (str, bytes)):
        return check_source(source, path, decide_asserts=True)
    return check_tree(source)


@checked
def check_source(source: str | bytes, path: Text = "<input>", decide_asserts: Flag = False) -> CheckResult:
    """Parse and check in one step; syntax errors come back as diagnostics, not exceptions. With
    `decide_asserts` (the `check` command) an `assert` that needs no environment and is false is an error too."""
    return source_module.check_source(source, path, decide_asserts)


@checked
def load(path: str | Path) -> list[CheckedContract]:
    """Read, parse and check a contract file; raises `ContractError` if anything is wrong in it, `FileError` if it
    cannot be read (a regular file of at most 1 MiB)."""
    return source_module.load(path)
