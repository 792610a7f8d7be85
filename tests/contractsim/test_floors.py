"""The floor rule set ([CS-14a]) wherever the rules apply (issue #46): `run`, `metrics`, `verify`, `experiment
rational` and `experiment performance` take `--floors`; a game, a job and a record carry it, so a store never
answers one rule set's job with another's games, and every table says which rule set played it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import contractlang as cl
from contractlang.errors import UnknownName

# the smallest synthetic set (one Env 1 base and its S+PD variant) and its fresh copies
from tests.helpers import ROOT, fresh, run_cli

DEDUCTION = ROOT / "examples" / "catering-deduction.contract"  # class {PD}: its minimum is a floor only under cs14
VARIANT = "no-deduction-floor"


def _run(*args) -> dict:
    done = run_cli("run", DEDUCTION, "--env", "1", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_run_plays_under_the_rule_set_and_metrics_replays_regret_under_the_records_one(tmp_path):
    """An RE Supplier delivers nothing: under cs14 every production week violates the deduction floor, without
    it the first weeks are deductions; regret replays RCC under the record's rule set (75 − 23), not cs14's."""
    default, variant = _run("--supplier", "re"), _run("--supplier", "re", "--floors", VARIANT)
    assert (default["floors"], variant["floors"]) == ("cs14", VARIANT)
    assert default["violation_counts"]["supplier"] == 5 and variant["violation_counts"]["supplier"] == 4
    rcc = {f: _run("--floors", f)["u_supplier"] for f in ("cs14", VARIANT)}
    assert rcc["cs14"] != rcc[VARIANT]
    records = tmp_path / "variant.jsonl"
    records.write_text(json.dumps(variant) + "\n")
    done = run_cli("metrics", records, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    supplier = next(r for r in result["roles"] if r["role"] == "supplier")
    assert result["floors"] == VARIANT and supplier["regret"]["mean"] == rcc[VARIANT] - variant["u_supplier"]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(default) + "\n" + json.dumps(variant) + "\n")
    done = run_cli("metrics", mixed)
    assert done.returncode == 1 and "different floor rule sets" in done.stderr and "Traceback" not in done.stderr


def test_a_default_record_reads_as_before_and_names_its_rule_set_when_asked():
    played = cl.play(DEDUCTION, env=1)
    assert played.record.detail.floors == "cs14" and "floors" not in played.record.detail.model_dump(mode="json")
    assert cl.play(DEDUCTION, env=1, floors=VARIANT).record.detail.floors == VARIANT
    with pytest.raises(UnknownName, match="floor rule set"):
        cl.play(DEDUCTION, env=1, floors="cs15")


def test_verify_takes_the_rule_set_with_an_environment_only():
    done = run_cli("verify", DEDUCTION, "--env", "1", "--floors", VARIANT, "--json")
    assert done.returncode == 0, done.stderr
    done = run_cli("verify", DEDUCTION, "--floors", VARIANT)
    assert done.returncode == 2 and "--floors" in done.stderr and "--env" in done.stderr
    done = run_cli("verify", DEDUCTION, "--env", "1", "--floors", "nope")
    assert done.returncode == 1 and "unknown floor rule set 'nope'" in done.stderr


def _experiment(command: str, directory: Path, *args) -> dict:
    done = run_cli("experiment", command, directory, *args, "--workers", "1", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_experiments_key_their_games_by_the_rule_set(synthetic, tmp_path):  # noqa: F811
    """A run under another rule set into the store of a default run plays every game again (its jobs differ),
    writes its tables beside the default ones and says which rule set played them; a rerun plays nothing. Here
    the variant floors this set exactly as cs14 does (S+PD's two minimums are equal), so its rows are the same."""
    directory = fresh(synthetic, tmp_path)
    assert _experiment("rational", directory)["played_now"] == 2
    store = directory / "jobs" / "rational.jsonl"
    assert '"floors"' not in store.read_text()  # default records are written as before rule sets existed
    first = _experiment("rational", directory, "--floors", VARIANT)
    assert first["played_now"] == 2 and first["floors"] == VARIANT
    assert first["tables"].endswith(f"tables.{VARIANT}.md") and store.read_text().count(f'"floors": "{VARIANT}"') > 0
    assert _experiment("rational", directory, "--floors", VARIANT)["played_now"] == 0
    md = (directory / "rational" / f"tables.{VARIANT}.md").read_text()
    assert md.splitlines()[0].endswith(f"Played under the {VARIANT} floor rule set [CS-14a].")
    assert "Played under the cs14 floor rule set" in (directory / "rational" / "tables.md").read_text()
    rows = {
        f: json.loads((directory / "rational" / name).read_text())["rows"]
        for f, name in (("cs14", "tables.json"), (VARIANT, f"tables.{VARIANT}.json"))
    }
    assert rows["cs14"] == rows[VARIANT]
    perf = _experiment("performance", directory, "--agent", "rcc", "--floors", VARIANT, "--contracts", "*-s-pd")
    assert perf["played_now"] == {"rational": 0, "agents": 6} and perf["floors"] == VARIANT
    assert (directory / "performance" / f"tables.{VARIANT}.md").read_text().startswith("Scored under the cs19")
    assert not (directory / "performance" / "tables.md").exists()


def test_a_synthetic_contracts_refuted_totals_point_to_the_reason():
    """`verify` on a shipped contract says its price/payment disagreement is the set's design, in the paper's
    words, with the page that explains it; a contract of no synthetic set gets no such note."""
    shipped = ROOT / "games/experiments/data/synthetic/contracts/synth-env5-rho0.5-s-pd-ro/contract.contract"
    done = run_cli("verify", shipped, "--json")
    report = json.loads(done.stdout)
    assert next(c for c in report["checks"] if c["name"] == "arithmetic.totals")["status"] == "refuted"
    note = report["notes"]["arithmetic.totals"]
    assert "arithmetically consistent" in note and "docs/explanation/fidelity.md" in note
    assert (ROOT / "docs/explanation/fidelity.md").read_text().count("## Prices that disagree with payments") == 1
    copy = json.loads(run_cli("verify", DEDUCTION, "--json").stdout)
    assert "notes" not in copy


def test_a_clone_with_the_rational_games_but_no_tables_hears_of_the_agent_phase_solves(synthetic, tmp_path):  # noqa: F811
    """Issue #46 item 5: on a clone the shipped set's rational games are on disk and no DP table is; the agent
    games solve every table, so the announcement counts them although the rational phase plays nothing."""
    directory = fresh(synthetic, tmp_path)
    _experiment("rational", directory)  # into the set's own store, with the test run's tables
    env = {**os.environ, "CONTRACTLANG_DP_CACHE": str(tmp_path / "clone-cache")}
    done = run_cli("experiment", "performance", directory, "--agent", "rcc", "--workers", "1", env=env)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 contracts to play have no solved DP table in " in done.stderr
    assert "(12 agent games and 0 rational jobs played now)" in done.stdout
