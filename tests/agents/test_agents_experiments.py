"""Python agents in the experiments (issue #43): `experiment performance` with a `py:` agent on a slice of a
synthetic set, in one process and in two workers, and the same from Python with the agent as an object — the
same tables every time; a later full run reuses the slice's games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import contractlang as cl
from examples.agents.stingy import Stingy

# the smallest synthetic set and its fresh copies, made once for both experiment test files
from tests.helpers import fresh, run_cli

pytestmark = pytest.mark.e2e  # experiments with workers on a synthetic set


def performance(directory: Path, *args) -> dict:
    done = run_cli("experiment", "performance", directory, *args, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


SLICE = ("--contracts", "synth-env1-*", "--limit", "1")  # Stingy says it plays only the customer


def test_a_py_agent_on_a_slice_gives_the_same_tables_in_one_process_two_workers_and_from_python(synthetic, tmp_path):
    one, two, py = (fresh(synthetic, tmp_path / name) for name in ("one", "two", "python"))
    spec = "stingy=py:examples/agents/stingy.py:Stingy"
    first = performance(one, "--agent", spec, *SLICE, "--workers", "1")
    assert first["contracts"] == 1 and first["played_now"]["agents"] == 3 and first["roles"] == ["customer"]
    assert first["covers"] == "a slice (contracts synth-env1-*; limit 1): 1 of the set's 2 contracts"
    performance(two, "--agent", spec, *SLICE, "--workers", "2")
    result = cl.experiments.performance(agent=Stingy(), directory=py, contracts="synth-env1-*", limit=1, workers=2)
    tables = [(d / "performance" / "tables.md").read_text() for d in (one, two, py)]
    assert tables[0] == tables[1] == tables[2]
    assert "Contracts: a slice (contracts synth-env1-*; limit 1): 1 of the set's 2 contracts." in tables[0]
    assert "| RCC | stingy |" in tables[0]
    assert (one / "performance" / "tables.json").read_bytes() == (two / "performance" / "tables.json").read_bytes()
    rows = result.rows()
    assert [(r["policy"], r["counterparty"]) for r in rows if not r["rational"]] == [
        ("stingy", "rcc"),
        ("stingy", "rc"),
        ("stingy", "re"),
    ]
    assert all(isinstance(r["summary.utility.mean"], float) for r in rows)

    whole = performance(one, "--agent", spec, "--workers", "1")
    assert whole["played_now"]["agents"] == 3 and whole["covers"] == ""  # the slice's 3 games are reused
    assert "Contracts:" not in (one / "performance" / "tables.md").read_text()


def test_slices_that_keep_nothing_or_name_no_agent_are_one_line(synthetic, tmp_path):
    directory = fresh(synthetic, tmp_path)
    nothing = run_cli("experiment", "rational", directory, "--envs", "5", "--workers", "1")
    assert nothing.returncode == 1 and "no contract of" in nothing.stderr and "envs 5" in nothing.stderr
    rational = run_cli("experiment", "rational", directory, "--variants", "base", "--workers", "1", "--json")
    assert json.loads(rational.stdout)["contracts"] == 1, rational.stderr
    missing = run_cli("experiment", "performance", directory, "--agent", "py:examples/agents/stingy.py:Nobody")
    assert missing.returncode == 1 and "has no attribute 'Nobody'" in missing.stderr
