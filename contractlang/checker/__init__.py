"""Syntax tree → contract IR, resolving names against the game vocabulary and reporting every error.

`check` types a parsed file: its contracts (`contracts.py`) and the scenario tests against the contracts they
name (`scenarios.py`); `unformattable`, `check_board` and `check_asserts` are the checks later steps ask for.
Codes are stable (docs/reference/diagnostics.md); the checker never repairs a contract: a missing term is
reported as parse-incomplete, never filled in.
"""

from __future__ import annotations

from contractlang import ast
from contractlang.checker.contracts import CheckResult, ContractChecker, Reporter
from contractlang.checker.scenarios import DEFAULT_HOLDINGS, check_tests
from contractlang.diagnostics import Diagnostic, Span
from contractlang.formatter import money
from contractlang.ir import CheckedContract, CheckedScenario, ContractSimIR, CTBenchIR

__all__ = ["DEFAULT_HOLDINGS", "CheckResult", "check", "check_asserts", "check_board", "unformattable"]


def check(file: ast.SourceFile, known: dict[str, CheckedContract] | None = None) -> CheckResult:
    """Type-check every contract in a parsed file, and every test against the contract it names (in the file, else
    in `known`); all errors are reported, none repaired. A `tests for` block naming a contract found in neither
    is left unchecked and listed in `unresolved` (the test runner looks for the contract in the other files)."""
    report = Reporter(file.path)
    checked = []
    scenarios: list[CheckedScenario] = []
    names: dict[str, ast.Contract] = {}
    if not file.contracts and not file.suites:
        report.error(
            "E005",
            Span(1, 1, 1, 2),
            "the file holds no contract",
            'a file holds one or more contracts: contract "name" { game ... }',
        )
    for contract in file.contracts:
        report.safe_name(contract.name, contract.name_span, "the contract name")
        if contract.name in names:
            report.error(
                "E106",
                contract.name_span,
                f'a second contract named "{contract.name}"',
                f"the first is on line {names[contract.name].span.line}; contract names are unique in a file",
            )
        names.setdefault(contract.name, contract)
        result = ContractChecker(contract, report).run()
        if result is not None:
            checked.append(result)
            scenarios.extend(check_tests(contract.tests, contract, result, report))
    here = {c.ir.name: c for c in checked}
    unresolved = []
    for suite in file.suites:
        target = here.get(suite.contract) or (known or {}).get(suite.contract)
        if target is None:
            if suite.contract not in names:  # a contract of this file with errors has reported them already
                unresolved.append(suite.contract)
            continue
        scenarios.extend(check_tests(suite.tests, None, target, report))
    ordered = sorted(report.items, key=lambda d: (d.span.line, d.span.column, d.code))
    return CheckResult(
        contracts=tuple(checked),
        diagnostics=tuple(ordered),
        scenarios=tuple(scenarios),
        unresolved=tuple(dict.fromkeys(unresolved)),
    )


def unformattable(tree: ast.SourceFile) -> tuple[Diagnostic, ...]:
    """The check errors that leave a file without a canonical form, by the same rules `check` applies: a number
    the printer would change (E003), no contract (E005), two contracts of one name (E106: tests, logs and coverage
    name a contract by its name, so a file that cannot be read back as named contracts has no form to keep), a
    name unsafe to print (E107)."""
    return tuple(d for d in check(tree).diagnostics if d.code in ("E003", "E005", "E106", "E107"))


def check_board(checked: CheckedContract, colour_of, board_name: str) -> tuple[Diagnostic, ...]:
    """Board-dependent checks for a CT-Bench contract: each `with ... chip` colour must match its tile.

    `colour_of(tile) -> "red" | "blue" | "green"` describes the board; contractlang knows no boards itself.
    """
    if not isinstance(checked.ir, CTBenchIR):
        return ()
    report = Reporter(checked.file)
    for k, entry in enumerate(checked.ir.coverage):
        tile_colour = colour_of(entry.tile)
        if entry.colour is not None and entry.colour != tile_colour:
            report.error(
                "E611",
                checked.span(f"cover.{k}"),
                f"tile {entry.tile} is {tile_colour} on {board_name}, but this entry pays with a {entry.colour} chip",
                f"write `with {tile_colour} chip`, or leave the colour out",
            )
    return tuple(report.items)


def check_asserts(checked: CheckedContract) -> tuple[Diagnostic, ...]:
    """Every `assert` that needs no environment value, decided exactly from the terms: a false one is E703.
    (One that names budget or capital waits for `verify --env N`.)"""
    if not isinstance(checked.ir, ContractSimIR):
        return ()
    report = Reporter(checked.file)
    for k, term in enumerate(checked.ir.asserts):
        if term.uses_environment:
            continue
        holds, left, right = term.decide(checked.ir)
        if not holds:
            unit = money if term.unit == "money" else str
            report.error(
                "E703",
                checked.span(f"assert.{k}"),
                f"`{term.text}` is false: the left side is {unit(left)}, the right side {unit(right)}",
                "correct the terms or the stated amount: an assert is checked, never repaired",
            )
    return tuple(report.items)
