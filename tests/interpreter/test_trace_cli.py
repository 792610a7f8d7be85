"""`contractlang trace`: replay reports, and file:line errors for malformed logs."""

import json

import pytest

from tests.helpers import GOLDEN, compare_golden, run_cli

CONTRACT = "examples/worked-example-1.contract"


def trace(*args):
    return run_cli("trace", *args)


def test_trace_example_log_json():
    proc = trace(CONTRACT, "examples/traces/worked-example-1-late-breach.jsonl", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"]["first_breach"] == "supplier" and report["verdict"]["week"] == 6
    assert [w["compliant"] for w in report["weeks"]] == [True] * 5 + [False, True, False, True, False, True]
    compare_golden(GOLDEN / "trace-late-breach.json", json.dumps(report, indent=2) + "\n")


def test_trace_table_golden():
    proc = trace(CONTRACT, "examples/traces/worked-example-1-late-breach.jsonl")
    assert proc.returncode == 0
    compare_golden(GOLDEN / "trace-late-breach.txt", proc.stdout)


def test_trace_ctbench():
    """Blue lacks the chip for its second entry: the paper's rules forfeit its score, the authors' block the
    payment and keep the entry ([CT-24a]); `trace` takes the rule set as `run` does, authors by default."""
    reports = {}
    for rules in ("paper", "authors", None):
        proc = trace("examples/ctbench-board-24-swap.contract", "examples/traces/board-24-swap.jsonl", "--json",
                     *(("--rules", rules) if rules else ()))
        assert proc.returncode == 0, proc.stderr
        reports[rules] = json.loads(proc.stdout)
    assert [a["kind"] for a in reports["paper"]["enforcement"]] == ["chip_transfer", "forfeit"]
    assert reports["paper"]["forfeited"] == ["blue"]
    assert [a["kind"] for a in reports["authors"]["enforcement"]] == ["chip_transfer", "contract_blocked"]
    assert reports["authors"]["forfeited"] == [] and reports[None] == reports["authors"]


BAD = {
    "bad-json": ('{"type": "payment", "week": 1, "amount": 18}\n{"type": "payment",', 2, "invalid JSON"),
    "unknown-type": ('{"type": "refund", "week": 1}\n', 1, "unknown event type 'refund'"),
    "ctbench-event": ('{"type": "game_end"}\n', 1, "unknown event type 'game_end' for a contractsim contract"),
    "out-of-order": ('{"type": "week_end", "week": 1}\n{"type": "payment", "week": 1, "amount": 5}\n', 2,
                     "arrives after week 2 is open"),
    "wrong-kind": ('{"type": "delivery", "week": 1, "product": "pizza", "qty": 1}\n', 1, "delivery in payment week 1"),
    "missing-field": ('{"type": "payment", "week": 1}\n', 1, "bad payment event: amount: Field required"),
    "negative": ('{"type": "payment", "week": 1, "amount": -3}\n', 1, "greater than or equal to 0"),
    "unknown-product": ('{"type": "week_end", "week": 1}\n{"type": "delivery", "week": 2, "product": "sushi", '
                        '"qty": 1}\n', 2, "unknown product 'sushi'"),
    "not-object": ("[1, 2]\n", 1, "one JSON object"),
}


@pytest.mark.parametrize("name", BAD)
def test_malformed_logs(tmp_path, name):
    text, line, message = BAD[name]
    log = tmp_path / f"{name}.jsonl"
    log.write_text(text)
    proc = trace(CONTRACT, str(log))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"{log}:{line}: " in proc.stderr and message in proc.stderr, proc.stderr
