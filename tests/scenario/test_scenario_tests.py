"""Scenario tests in the language: `contractlang test` over the examples, mutated clauses caught at their
expectations, generated tests that cover every reachable clause, JUnit output, coverage over played games."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from lxml import etree

import contractlang as cl
from contractlang.api.tests import test as run_tests
from tests.helpers import ROOT, run_cli

EXAMPLES = ROOT / "examples"
LOCATED = re.compile(r"^\S+\.contract:\d+:\d+: ", re.M)


def test_every_bundled_example_has_tests_and_all_pass():
    done = run_cli("test", "examples/", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    payload = json.loads(done.stdout)
    assert payload["ok"] and payload["failed"] == 0 and not payload["errors"]
    tested = {t["contract"] for t in payload["tests"]}
    for path in EXAMPLES.glob("*.contract"):
        for checked in cl.check_source(path.read_bytes(), str(path)).contracts:
            assert checked.ir.name in tested, f"{path.name}: {checked.ir.name} has no test"


# (file, what changes, old text, new text): an amount, a week, a contingency, `on breach`, CT-Bench terms
MUTATIONS = [
    ("catering-env5-a.contract", "an amount", "weeks 3..9: $25", "weeks 3..9: $30"),
    ("catering-env5-a.contract", "the week of a payment", "week 1: $15", "week 1: $10"),
    ("catering-env5-a.contract", "a contingency's limit", "max_deficit: 2", "max_deficit: 3"),
    (
        "catering-env5-a.contract",
        "a contingency removed",
        "  payment_deduction { minimum: pizza 1, pasta 1, soup 1 }\n",
        "",
    ),
    ("catering-env5-a.contract", "on breach removed", "  on breach: terminate\n", ""),
    (
        "worked-example-1.contract",
        "a delivery",
        "weeks 2..10: pizza 1, pasta 1, soup 1",
        "weeks 2..10: pizza 2, pasta 1, soup 1",
    ),
    ("catering-substitution.contract", "substitution removed", "  substitution\n", ""),
    (
        "ctbench-board-24-swap.contract",
        "a chip colour",
        "(0,1): red pays for blue with red chip",
        "(0,1): red pays for blue with green chip",
    ),
    ("ctbench-points.contract", "points", "blue transfers 10 points", "blue transfers 12 points"),
]


@pytest.mark.parametrize("name, what, old, new", MUTATIONS, ids=[m[1] for m in MUTATIONS])
def test_changing_a_clause_of_an_example_fails_a_test_at_its_expectation(tmp_path, name, what, old, new):
    text = (EXAMPLES / name).read_text()
    assert old in text, (name, old)
    mutant = tmp_path / name
    if "week 1: $15" in old:  # move the $15 to week 11 and the $10 to week 1: the total stays $125
        text = text.replace("week 11: $10", "week 11: $15")
    mutant.write_text(text.replace(old, new, 1))
    report = run_tests([mutant])
    assert not report.ok, what
    messages = [f.text() for r in report.results for f in r.failures] + [d.render(None) for d in report.diagnostics]
    assert messages and all(LOCATED.match(m) for m in messages), messages


def test_a_failure_names_the_expectation_and_shows_the_week(tmp_path):
    mutant = tmp_path / "env5a.contract"
    mutant.write_text((EXAMPLES / "catering-env5-a.contract").read_text().replace("week 3: pay $0", "week 3: pay $25"))
    done = run_cli("test", mutant)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    at = lines.index(f"  {mutant}:29:7: expected breach customer week 3 by pay, got no breach by customer")
    assert lines[at + 1].strip() == "week 3 (customer): due $25, paid $25: compliant"
    assert f"{mutant}:30:7: expected owed customer $25, got owed customer $0" in done.stdout
    assert "1 failed" in done.stdout


UNTESTED = """\
contract "untested" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $2 }
  deliver { weeks 2..10: pizza 2, pasta 1, soup 1 }
  pay {
    weeks 1..9: $20
    week 11: $0
  }
  substitution { minimum: pizza 1, pasta 1, soup 1 }
  payment_deduction
  rollover { max_deficit: 1 }
  on breach: terminate
}

contract "untested-points" {
  game ctbench
  cover { (2,2): blue pays for red }
  on goal {
    red: red transfers 5 points to blue
    blue: blue transfers 0 points to red
  }
}
"""


def test_generate_writes_shortest_tests_that_pass_and_cover_every_reachable_clause(tmp_path):
    contract = tmp_path / "untested.contract"
    contract.write_text(UNTESTED)
    done = run_cli("test", "--generate", contract, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["written"] == [str(tmp_path / "untested.generated.contract")]
    assert {d["clause"]: d["reason"] for d in out["dead"]} == {
        "pay week 11: $0": "it schedules $0: nothing ever falls due",
        "on goal: blue transfers 0 points to red": "it transfers 0 points: nothing ever moves",
    }
    written = (tmp_path / "untested.generated.contract").read_text()
    # shrunk: the rollover test says only the one week that differs from the agreement
    rollover = written[written.index('test "fires rollover"') :].split("expect", 1)[0]
    assert rollover.count("week ") == 1 and "week 2: deliver pizza 1, pasta 1, soup 1" in rollover
    assert run_cli("fmt", "--check", tmp_path / "untested.generated.contract").returncode == 0

    done = run_cli("test", tmp_path, "--coverage", "--json")
    assert done.returncode == 0, done.stdout
    coverage = {c["contract"]: c for c in json.loads(done.stdout)["coverage"]}
    assert coverage["untested"]["percent"] == 100.0 and coverage["untested-points"]["percent"] == 100.0
    assert coverage["untested"]["reachable"] == 6  # two pay entries less the dead one, deliver, three contingencies
    dead = [c["clause"] for c in coverage["untested"]["clauses"] if c["dead"]]
    assert dead == ["pay week 11: $0"]

    again = run_cli("test", "--generate", contract)
    assert again.returncode == 0 and "nothing written" in again.stdout


def test_junit_output_validates_against_the_junit_schema(tmp_path):
    mutant = tmp_path / "env5a.contract"
    mutant.write_text((EXAMPLES / "catering-env5-a.contract").read_text().replace("weeks 3..9: $25", "weeks 3..9: $30"))
    shutil.copy(EXAMPLES / "worked-example-1.contract", tmp_path)
    report = tmp_path / "junit.xml"
    done = run_cli("test", tmp_path, "--junit", report)
    assert done.returncode == 1
    schema = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("junit.xsd"))))
    document = etree.parse(str(report))
    schema.assertValid(document)
    suites = {s.get("name"): s for s in document.getroot()}
    assert set(suites) == {"catering-env5-a", "worked-example-1"}
    assert int(suites["catering-env5-a"].get("failures")) >= 1 and suites["worked-example-1"].get("failures") == "0"
    failure = document.find(".//failure")
    assert LOCATED.match(failure.text)


BAD = """\
tests for "worked-example-1" {
  test "typed" {
    given {
      week 2: pay $5
      red moves onto red tile (0,1)
    }
    expect {
      breach customer week 3 by rollover
      carried after week 2: pizza 1
    }
  }
}
tests for "nowhere" {
  test "x" { expect { no breach } }
}
"""


def test_a_test_the_contract_cannot_mean_is_a_check_error_with_a_caret(tmp_path):
    shutil.copy(EXAMPLES / "worked-example-1.contract", tmp_path)
    bad = tmp_path / "bad.test.contract"
    bad.write_text(BAD)
    done = run_cli("test", bad)
    assert done.returncode == 1
    err = done.stderr
    assert f"{bad}:4:12: error[E202]: payment scheduled in production week 2" in err
    assert f"{bad}:5:7: error[E803]: this event belongs to a CT-Bench game" in err
    assert f"{bad}:8:33: error[E806]: 'worked-example-1' has no `rollover` clause" in err
    assert f"{bad}:9:7: error[E806]:" in err
    assert f'{bad}:13:11: error[E801]: no contract named "nowhere"' in err
    assert "\n          week 2: pay $5\n               ^\n" in err


def test_one_test_runs_by_name_and_the_facade_gives_typed_results():
    report = cl.test(EXAMPLES / "catering-env5-a.contract", only="late payment breaches in week 3")
    assert [r.name for r in report.results] == ["late payment breaches in week 3"] and report.ok
    assert set(report.results[0].fired) == {"on_breach", "deliver@8:5", "pay@12:5", "pay@13:5"}


def test_coverage_over_run_logs_names_triggered_and_never_triggered_clauses(tmp_path):
    log = tmp_path / "g.jsonl"
    done = run_cli(
        "run", EXAMPLES / "worked-example-1.contract", "--env", "1", "--supplier", "random", "--seed", "3", "--log", log
    )
    assert done.returncode == 0, done.stderr
    out = run_cli("coverage", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    [contract] = json.loads(out.stdout)["contracts"]
    assert contract["contract"] == "worked-example-1" and contract["games"] == 1
    assert "pay weeks 1, 3, 5, 7, 9: $18" in contract["triggered"]
    assert "pay week 11: $0" in contract["never_triggered"]
    text = run_cli("coverage", log).stdout
    assert "worked-example-1: 1 game" in text and "pay week 11: $0: never triggered (0/1 games)" in text


@pytest.mark.e2e
def test_coverage_over_an_experiment_performance_output(synthetic, tmp_path):
    from tests.helpers import fresh

    directory = fresh(synthetic, tmp_path)
    done = run_cli("experiment", "performance", directory, "--agent", "re", "--role", "customer", "--workers", "1")
    assert done.returncode == 0, done.stderr
    out = run_cli("coverage", directory, "--json")
    assert out.returncode == 0, out.stderr
    contracts = json.loads(out.stdout)["contracts"]
    assert contracts and all(c["games"] > 0 for c in contracts)
    for c in contracts:
        assert c["triggered"], c
        labels = {row["clause"] for row in c["clauses"]}
        # the batch engine's records name the contingencies they fired: every clause is judged
        assert set(c["triggered"]) | set(c["never_triggered"]) == labels and not c["not_observable"]
    judged = {row["key"] for c in contracts for row in c["clauses"] if row["observable_in"]}
    assert judged & {"substitution", "payment_deduction", "rollover"}, judged


@pytest.mark.e2e
def test_coverage_over_a_ctbench_sweep_keeps_contracts_of_one_name_apart(tmp_path):
    out = tmp_path / "sweep"
    args = ("--boards", "24", "--conditions", "prog_trading,prog_points", "--modes", "pfp", "--workers", "1")
    done = run_cli("ctbench", "sweep", *args, "--out", out)
    assert done.returncode == 0, done.stderr
    found = run_cli("coverage", out, "--json")
    assert found.returncode == 0, found.stderr
    contracts = json.loads(found.stdout)["contracts"]
    assert [c["games"] for c in contracts] == [1, 1] and contracts[0]["contract"] != contracts[1]["contract"]
    kinds = [{row["key"].split(".")[0] for row in c["clauses"]} for c in contracts]
    assert {"cover"} in kinds and {"goal"} in kinds
    for c in contracts:
        assert set(c["triggered"]) | set(c["never_triggered"]) == {row["clause"] for row in c["clauses"]}
