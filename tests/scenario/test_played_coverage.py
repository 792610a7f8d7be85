"""Clause coverage of games the batch engine played: its records name the contingencies each game fired, the
same ones the monitor sees when the reference engine's game of the same seed and policies is replayed."""

from __future__ import annotations

import json

import pytest

from contractlang import load
from contractlang.interpreter.events import monitor_events
from contractlang.scenario.played import checked_ir, game_of_events, game_of_weeks
from games.contractsim.batch import play_batch
from games.contractsim.environments import environment
from games.contractsim.play import play
from tests.helpers import ROOT, run_cli

PAIRINGS = [("rcc", "rcc"), ("re", "rcc"), ("rc", "re")]


@pytest.mark.parametrize(
    "name,env_id,contingencies",
    [
        ("catering-sub-deduction", 5, {"substitution", "payment_deduction"}),
        ("catering-rollover", 3, {"rollover"}),
    ],
)
def test_the_batch_engine_fires_the_contingencies_the_replayed_reference_game_fires(
    tables, name, env_id, contingencies
):
    ir, env = load(ROOT / "examples" / f"{name}.contract")[0].ir, environment(env_id)
    checked = checked_ir(ir)
    seen: dict[str, int] = dict.fromkeys(contingencies, 0)
    games = 0
    for customer, supplier in PAIRINGS:
        seeds = range(100)
        for seed, record in zip(seeds, play_batch(ir, env, customer, supplier, seeds, tables=tables)):
            reference = play(ir, env, customer, supplier, seed=seed, keep_log=True, tables=tables)
            events = list(enumerate(monitor_events(reference.log), start=1))
            replayed = game_of_events(checked, events, "<log>", floors=reference.floors)
            firsts = (record.customer_first_violation, record.supplier_first_violation)
            batched = game_of_weeks(checked, record.weeks, firsts, record.contingencies_fired)
            assert batched == replayed, (customer, supplier, seed)
            assert set(record.contingencies_fired) == replayed.fired & contingencies
            for kind in replayed.fired & contingencies:
                seen[kind] += 1
            games += 1
    # the comparison has teeth: each contingency fired in some games and not in others
    assert all(0 < n < games for n in seen.values()), seen


def test_a_record_without_its_contingencies_leaves_them_not_observable(tables):
    ir, env = load(ROOT / "examples" / "catering-sub-deduction.contract")[0].ir, environment(5)
    checked = checked_ir(ir)
    [record] = play_batch(ir, env, "re", "rcc", [0], tables=tables)
    firsts = (record.customer_first_violation, record.supplier_first_violation)
    known = game_of_weeks(checked, record.weeks, firsts, record.contingencies_fired)
    unknown = game_of_weeks(checked, record.weeks, firsts, None)
    assert "payment_deduction" in known.fired and "payment_deduction" in known.observable
    assert {"substitution", "payment_deduction"}.isdisjoint(unknown.observable | unknown.fired)
    assert known.fired - {"substitution", "payment_deduction"} == unknown.fired


@pytest.mark.e2e
def test_coverage_over_a_tournament_judges_every_clause_of_its_games(tmp_path):
    out = tmp_path / "tournament"
    args = ("--agents", "rcc,random", "--seeds", "1", "--envs", "1", "--limit", "2", "--workers", "1")
    done = run_cli("tournament", *args, "--out", out)
    assert done.returncode == 0, done.stderr
    found = run_cli("coverage", out, "--json")
    assert found.returncode == 0, found.stderr
    contracts = json.loads(found.stdout)["contracts"]
    assert len(contracts) == 2 and all(c["games"] == 4 for c in contracts)
    rows = [row for c in contracts for row in c["clauses"]]
    assert "substitution" in {row["key"] for row in rows}
    assert all(row["observable_in"] == 4 for row in rows) and not any(c["not_observable"] for c in contracts)
