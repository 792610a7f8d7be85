"""Scenario tests in the editor: a code lens above each test, and the command it runs (one test, through the
monitor the games use), answering with the test's failures as `file:line:col` messages."""

from __future__ import annotations

from contractlang.lsp.analysis import Analysis, sibling_contracts
from contractlang.lsp.text import Range, span_range
from contractlang.scenario.run import run_scenario
from contractlang.scenario.world import Worlds
from contractlang.vocab import Frozen

RUN_TEST_COMMAND = "contractlang.runTest"


class Lens(Frozen):
    """A code lens: where it shows, its title, and the test it runs."""

    range: Range
    title: str
    test: str


def test_lenses(analysis: Analysis) -> list[Lens]:
    """One `Run test` lens on the first line of each test of the document."""
    return [
        Lens(range=span_range(t.name_span), title=f"▶ Run test \u201c{t.name}\u201d", test=t.name)
        for t in analysis.tests()
    ]


def run_named_test(analysis: Analysis, path: str, name: str, worlds: Worlds | None = None) -> dict:
    """Run the document's test named `name`, its utilities on the game engines in `worlds`; its outcome as
    `contractlang test --json` gives one test."""
    scenario = next((s for s in analysis.result.scenarios if s.ir.name == name), None)
    if scenario is None:
        known = {t.name for t in analysis.tests()}
        why = "it does not check (see the problems list)" if name in known else "there is no test of that name"
        raise ValueError(f"cannot run test {name!r}: {why}")
    contracts = {c.ir.name: c for c in analysis.result.contracts}
    checked = contracts.get(scenario.ir.contract) or sibling_contracts(path)[scenario.ir.contract]
    result = run_scenario(checked, scenario, worlds)
    return {
        "name": result.name,
        "contract": result.contract,
        "passed": result.passed,
        "failures": [f.text() for f in result.failures],
        "fired": list(result.fired),
        "utilities": result.utilities or None,
    }
