"""Run records read by `metrics` (issues #15, #30 and #48): hostile JSON is one line, a record never starts the
program it names unless allowed, and a record is held to the checker's rules and to what play can write."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.hardening.hostile import WORKED, agent, capped_cli, cli, one_json_failure
from tests.helpers import ROOT, assert_each_fails_in_one_line, run_cli

pytestmark = pytest.mark.e2e  # records of real games, read in memory-capped processes


@pytest.mark.parametrize(
    "content",
    ["[" * 100000 + "]" * 100000, '{"contract": ' + "1" * 5000 + "}", "[1, 2]"],
    ids=["deep", "5000-digits", "not-an-object"],
)
def test_metrics_refuses_hostile_records_in_one_line(tmp_path, content):
    path = tmp_path / "runs.jsonl"
    path.write_text(content + "\n")
    assert f"{path}:1: not a run record" in one_json_failure(cli("metrics", path, "--json"))["error"]


@pytest.fixture(scope="module")
def run_record(tmp_path_factory) -> dict:
    """A real `run --json` record (RE vs RE: no DP table to solve)."""
    cwd = tmp_path_factory.mktemp("record")
    proc = cli("run", WORKED, "--env", "1", "--customer", "re", "--supplier", "re", "--json", cwd=cwd)
    return json.loads(proc.stdout)


def _records(tmp_path: Path, name: str, record: dict, **changes) -> Path:
    changed = json.loads(json.dumps(record))
    for key, value in changes.items():
        if key.startswith("ir_"):
            changed["contract_ir"][key[3:]] = value
        else:
            changed[key] = value
    path = tmp_path / f"{name}.jsonl"
    path.write_text(json.dumps(changed) + "\n")
    return path


def test_metrics_never_starts_a_program_a_record_names_unless_allowed(tmp_path, run_record):
    marker = tmp_path / "started"
    program = agent(tmp_path, "planted", f"touch {marker}")
    records = _records(tmp_path, "planted", run_record, supplier=program)
    assert_each_fails_in_one_line(
        cli,
        [
            (
                ("metrics", records),
                f"would start the program {program!r} named in them; pass --allow-commands to let it run",
            )
        ],
    )
    assert not marker.exists()
    allowed = cli("metrics", records, "--allow-commands")
    assert allowed.returncode == 1 and "exited" in allowed.stderr and marker.exists()


def test_metrics_holds_records_to_the_checkers_rules(tmp_path, run_record):
    rollover = {**run_record["contract_ir"]["contingencies"], "rollover": {"max_deficit": 99}}
    cases = [
        (
            _records(tmp_path, "deficit", run_record, ir_contingencies=rollover),
            "(contract_ir: rollover max_deficit 99 is outside 0..2)",
        ),
        (
            _records(tmp_path, "price", run_record, ir_prices=[-10, 5, 3]),
            "(contract_ir: price of pizza must not be negative)",
        ),
        (
            _records(tmp_path, "huge", run_record, ir_prices=[10**12, 5, 3]),
            "(contract_ir: price of pizza is too large)",
        ),
        (_records(tmp_path, "setting", run_record, ir_setting="nowhere"), "(contract_ir: setting: unknown setting"),
        (_records(tmp_path, "seed", run_record, seed=-1), "(seed: -1 is negative; seeds are 0 or more)"),
        (_records(tmp_path, "env", run_record, env=99), "(env: no environment 99; there are 1..6)"),
        (_records(tmp_path, "policy", run_record, customer="nobody"), "(customer: unknown policy 'nobody'"),
        # round 3: a record without its weeks gave the compliant utility of a game of no weeks
        (_records(tmp_path, "weeks", run_record, weeks=[]), "(weeks: a record holds weeks 1..11 in order"),
        (
            _records(tmp_path, "reversed", run_record, weeks=run_record["weeks"][::-1]),
            "(weeks: a record holds weeks 1..11 in order",
        ),
        # round 4: JSON types are read as JSON has them; a lax read took `true` for seed 1 and "6" for a price
        (_records(tmp_path, "bool-seed", run_record, seed=True), "(seed: Input should be a valid integer"),
        (_records(tmp_path, "float-env", run_record, env=1.0), "(env: Input should be a valid integer"),
        (
            _records(tmp_path, "text-price", run_record, ir_prices=["6", 5, 3]),
            "(contract_ir: prices.0: Input should be a valid integer",
        ),
    ]
    rows = [(("metrics", path), f"{path}:1: not a run record {message}") for path, message in cases]
    start = time.monotonic()
    # the first row once allocated 29.8 GiB, so it runs in a process with capped memory; the others are refused
    # by the same check and run in this process, which saves a start-up per row
    assert_each_fails_in_one_line(lambda *args: capped_cli(*args, cwd=tmp_path), rows[:1])
    assert_each_fails_in_one_line(lambda *args: cli(*args, cwd=tmp_path), rows[1:])
    assert time.monotonic() - start < 120  # refused before any replay


def test_metrics_holds_a_record_to_what_play_can_write(tmp_path):
    played = run_cli("run", ROOT / "examples" / "catering-base.contract", "--env", "1", "--json")
    assert played.returncode == 0, played.stderr
    record = json.loads(played.stdout)
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(record) + "\n")
    assert run_cli("metrics", good, "--json").returncode == 0
    week = next(w for w in record["weeks"] if w["role"] == "supplier")
    cases = {"value": ("value", 1000 * 12), "paid": ("paid", 5), "utility": (None, None)}
    for what, (field, value) in cases.items():
        bad = json.loads(json.dumps(record))
        if field is None:
            bad["u_supplier"] += 1000
        else:
            next(w for w in bad["weeks"] if w["week"] == week["week"])[field] = value
        path = tmp_path / f"{what}.jsonl"
        path.write_text(json.dumps(bad) + "\n")
        done = run_cli("metrics", path)
        assert done.returncode == 1 and done.stderr.startswith(f"error: {path}:1: not a run record"), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
