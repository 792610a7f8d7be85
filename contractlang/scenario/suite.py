"""`contractlang test`: find the tests under some paths, bind each to its contract, run them, measure coverage."""

from __future__ import annotations

from pathlib import Path

from contractlang.checker import CheckResult, check
from contractlang.diagnostics import ContractError, Diagnostic
from contractlang.files import MAX_CONTRACT_BYTES, read_capped
from contractlang.ir import CheckedContract
from contractlang.parser import parse
from contractlang.scenario.clauses import Clause, clauses, terms_key
from contractlang.scenario.generate import Dead, generate
from contractlang.scenario.run import TestResult, contract_files, run_scenario
from contractlang.scenario.world import Worlds
from contractlang.vocab import Frozen


class ClauseCoverage(Frozen):
    """One clause: the tests (or games) that fired it; `dead` says why nothing can."""

    clause: Clause
    fired_by: tuple[str, ...] = ()
    dead: str | None = None

    @property
    def covered(self) -> bool:
        return bool(self.fired_by)


class ContractCoverage(Frozen):
    contract: str
    file: str
    terms: str  # `terms_key` of its terms: the games of the same terms are matched by it
    clauses: tuple[ClauseCoverage, ...]

    @property
    def reachable(self) -> int:
        return sum(c.dead is None for c in self.clauses)

    @property
    def covered(self) -> int:
        return sum(c.covered for c in self.clauses)

    @property
    def percent(self) -> float:
        """Covered share of the reachable clauses (a dead clause cannot be covered and does not count)."""
        return 100.0 if not self.reachable else round(100.0 * self.covered / self.reachable, 1)

    def to_json(self) -> dict:
        return {
            "contract": self.contract,
            "file": self.file,
            "covered": self.covered,
            "reachable": self.reachable,
            "percent": self.percent,
            "clauses": [
                {
                    "key": c.clause.key,
                    "clause": c.clause.label,
                    "line": c.clause.span.line if c.clause.span else None,
                    "fired_by": list(c.fired_by),
                    "dead": c.dead,
                }
                for c in self.clauses
            ],
        }


class TestReport(Frozen):
    """Every test's result, the check errors that kept files from running, and clause coverage per contract."""

    __test__ = False  # a report, not a pytest class

    results: tuple[TestResult, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    coverage: tuple[ContractCoverage, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diagnostics and all(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return sum(not r.passed for r in self.results)

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "passed": len(self.results) - self.failed,
            "failed": self.failed,
            "tests": [
                {
                    "name": r.name,
                    "contract": r.contract,
                    "file": r.file,
                    "line": r.span.line,
                    "passed": r.passed,
                    "failures": [
                        {
                            "line": f.span.line,
                            "column": f.span.column,
                            "kind": f.kind or None,
                            "expected": f.expected or None,
                            "got": f.got or None,
                            "problem": f.problem,
                            "trace": list(f.trace),
                            "message": f.text(),
                        }
                        for f in r.failures
                    ],
                    "fired": list(r.fired),
                    "utilities": r.utilities or None,
                }
                for r in self.results
            ],
            "errors": [d.to_json() for d in self.diagnostics],
            "coverage": [c.to_json() for c in self.coverage],
        }


class Loaded(Frozen):
    """The checked files under some paths: their contracts by name and their tests, bound."""

    files: tuple[tuple[str, CheckResult, dict[str, CheckedContract]], ...]  # each with the contracts in its scope
    contracts: dict[str, CheckedContract]
    diagnostics: tuple[Diagnostic, ...]


def _check_file(path: Path, known: dict[str, CheckedContract] | None) -> CheckResult:
    try:
        tree = parse(read_capped(path, MAX_CONTRACT_BYTES), str(path))
    except ContractError as err:
        return CheckResult(contracts=(), diagnostics=tuple(err.diagnostics))
    return check(tree, known)


def load(paths) -> Loaded:
    """Check every `.contract` file under `paths`; a `tests for` block finds its contract in any of them, or in
    a sibling file of its own folder."""
    files = contract_files(paths)
    siblings = [p for f in files for p in sorted(f.parent.glob("*.contract")) if p not in files]
    first = {p: _check_file(p, None) for p in [*files, *dict.fromkeys(siblings)]}
    contracts: dict[str, CheckedContract] = {}
    for result in first.values():
        for c in result.contracts:
            contracts.setdefault(c.ir.name, c)
    checked, diagnostics = [], []
    for path in files:
        result = first[path]
        # the file's own contracts come first, then its folder's, then those of the other paths
        near = {c.ir.name: c for p, r in first.items() if p.parent == path.parent for c in r.contracts}
        scope = {**contracts, **near, **{c.ir.name: c for c in result.contracts}}
        if result.unresolved:
            result = _check_file(path, scope)
        diagnostics.extend(result.diagnostics)
        for name in result.unresolved:
            if name not in contracts:
                diagnostics.append(
                    Diagnostic(
                        code="E801",
                        message=f'no contract named "{name}" for these tests',
                        file=str(path),
                        span=_suite_span(path, name),
                        hint="name a contract of this file or of a .contract file in its folder",
                    )
                )
        checked.append((str(path), result, scope))
    return Loaded(files=tuple(checked), contracts=contracts, diagnostics=tuple(diagnostics))


def _suite_span(path: Path, name: str):
    tree = parse(read_capped(path, MAX_CONTRACT_BYTES), str(path))
    return next(s.contract_span for s in tree.suites if s.contract == name)


def run_tests(paths, coverage: bool = False, only: str | None = None, worlds: Worlds | None = None) -> TestReport:
    """Run every test under `paths` (only the one named `only`, when given) through the monitor, utilities
    through the game engines in `worlds`; with `coverage`, which tests fired each clause of each contract that
    has tests, and which clauses are dead."""
    loaded = load(paths)
    results = []
    for _path, result, scope in loaded.files:
        for scenario in result.scenarios:
            if only is None or scenario.ir.name == only:
                results.append(run_scenario(scope[scenario.ir.contract], scenario, worlds))
    report = TestReport(results=tuple(results), diagnostics=loaded.diagnostics)
    if not coverage:
        return report
    tested = {s.ir.contract: scope[s.ir.contract] for _p, r, scope in loaded.files for s in r.scenarios}
    return report.model_copy(
        update={"coverage": tuple(clause_coverage(checked, results) for checked in tested.values())}
    )


def clause_coverage(checked: CheckedContract, results: tuple[TestResult, ...] | list) -> ContractCoverage:
    """Which of `results` fired each clause of `checked`; the clauses none fired are searched for and, when no
    sequence fires them, marked dead."""
    fired_by: dict[str, list[str]] = {}
    for r in results:
        if r.contract == checked.ir.name:
            for key in r.fired:
                fired_by.setdefault(key, []).append(r.name)
    _, dead = generate(checked, set(fired_by))
    return coverage_of(checked, fired_by, dead)


def coverage_of(checked: CheckedContract, fired_by: dict[str, list[str]], dead: tuple[Dead, ...]) -> ContractCoverage:
    why = {d.clause.key: d.reason for d in dead}
    return ContractCoverage(
        contract=checked.ir.name,
        file=checked.file,
        terms=terms_key(checked.ir),
        clauses=tuple(
            ClauseCoverage(clause=c, fired_by=tuple(fired_by.get(c.key, ())), dead=why.get(c.key))
            for c in clauses(checked)
        ),
    )
