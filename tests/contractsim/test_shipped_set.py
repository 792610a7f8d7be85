"""Issue #34: the 20-start synthetic set committed under games/experiments/data/synthetic is what its job
stores say: its contract files and manifest are the variant solves written out, its bases are the best ends of
the search jobs in the store, its rational tables are its games scored, and those games replay byte for byte."""

from __future__ import annotations

import json
import shutil

import pytest

from contractlang import load
from games.experiments.rational import RationalJob, RationalRecord, run_rational
from games.experiments.synth import (
    SHIPPED,
    BaseChoice,
    SearchRecord,
    SolveRecord,
    SynthPlan,
    choose_bases,
    read_manifest,
    write_outputs,
)
from games.runner import stored_records
from tests.dp_helpers import FULL
from tests.helpers import run_cli

PLAN = SynthPlan()


def _records(name: str, record_type):
    """A shipped store's records, read as every run reads them (each line's check verified)."""
    return list(stored_records(SHIPPED / "jobs" / name, record_type, lambda r: r.job, name).values())


def _outputs(directory) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in [directory / "manifest.json", *sorted((directory / "contracts").rglob("*"))]
        if p.is_file()
    }


@pytest.mark.e2e
def test_the_shipped_manifest_and_contracts_are_its_variant_solves_written_out(tmp_path):
    """write_outputs on the committed solve records (the bases' terms as solved, their feasible-start counts as
    the manifest gives them) writes every committed file byte for byte: 180 contracts, E14 for all 20 bases."""
    manifest = read_manifest(SHIPPED)
    assert manifest.plan == PLAN and len(manifest.contracts) == 180 and manifest.e14_holds == 20
    solves = {r.job: r for r in _records("solve.jsonl", SolveRecord)}
    e14 = {(r.env, r.rho): r for r in manifest.e14}
    bases = [
        BaseChoice(
            env=j.env,
            rho=j.rho,
            terms_env=PLAN.terms_env(j.env),
            start=None,
            terms=j.terms,
            feasible_starts=e14[PLAN.terms_env(j.env), j.rho].feasible_starts,
        )
        for j in solves
        if j.variant == "base"
    ]
    assert len(bases) == 30 and len(solves) == 240
    order = {(e, rho): i for i, (e, rho) in enumerate((e, rho) for e in PLAN.envs for rho in PLAN.rhos)}
    bases.sort(key=lambda b: order[b.env, b.rho])
    write_outputs(tmp_path, bases, solves, PLAN)
    assert _outputs(tmp_path) == _outputs(SHIPPED)


@pytest.mark.e2e
def test_the_shipped_bases_are_the_best_ends_of_the_stored_searches():
    """For every environment whose 20 search jobs are all in the committed store, the bases chosen from them
    (ContractSim paper, App. C.4, [CS-34]) are the ones the manifest's contracts were written from, with the same feasible-start
    counts. The store is committed as the generation goes, so more environments are checked as it grows."""
    searches = _records("search.jsonl", SearchRecord)
    done = {e for e in PLAN.search_envs if {r.job.start for r in searches if r.job.env == e} == set(range(20))}
    assert {3, 4} <= done
    solved = {
        (r.job.env, r.job.rho): r.job.terms for r in _records("solve.jsonl", SolveRecord) if r.job.variant == "base"
    }
    e14 = {(r.env, r.rho): r.feasible_starts for r in read_manifest(SHIPPED).e14}
    plan = SynthPlan(search_envs=tuple(sorted(done)))
    bases = choose_bases([r for r in searches if r.job.env in done], plan)
    assert len(bases) == 5 * len(plan.envs)
    assert [(b.terms, b.feasible_starts) for b in bases] == [
        (solved[b.env, b.rho], e14[b.terms_env, b.rho]) for b in bases
    ]


@pytest.mark.e2e
def test_the_shipped_tables_are_its_games_scored(tmp_path):
    """`experiment rational` on a copy of the set plays nothing (every game is in the committed store) and
    rewrites both conventions' tables byte for byte, with all 13 identities holding."""
    copy = tmp_path / "synthetic"
    shutil.copytree(SHIPPED / "contracts", copy / "contracts")
    shutil.copy(SHIPPED / "manifest.json", copy / "manifest.json")
    (copy / "jobs").mkdir()
    shutil.copy(SHIPPED / "jobs" / "rational.jsonl", copy / "jobs" / "rational.jsonl")
    for convention, stem in (("cs19", "tables"), ("paper-tables", "tables.paper-tables")):
        done = run_cli("experiment", "rational", copy, "--convention", convention, "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["contracts"], report["played_now"], report["identities_hold"]) == (180, 0, 13)
        for suffix in (".md", ".json"):
            assert (copy / "rational" / (stem + suffix)).read_bytes() == (
                SHIPPED / "rational" / (stem + suffix)
            ).read_bytes()


REPLAYED = ("synth-env1-rho0.9-base", "synth-env3-rho0.9-s-pd", "synth-env5-rho0.9-s")
"""CI's sample: one contract of each deterministic and stochastic kind without rollover (those solve in
seconds; a rollover variant takes 9–26 s). CONTRACTLANG_SLOW_SCALE=full replays all 180 (about 8 minutes on
2 cores)."""


@pytest.mark.slow
def test_the_shipped_games_replay_byte_for_byte(tables):
    """The nine pairings on a shipped contract, played afresh with seed 42 from its file, give the committed
    record's exact line."""
    committed = {r.job: r for r in _records("rational.jsonl", RationalRecord)}
    entries = [e for e in read_manifest(SHIPPED).contracts if FULL or e.name in REPLAYED]
    assert len(entries) == (180 if FULL else len(REPLAYED))
    for entry in entries:
        job = RationalJob(contract=load(SHIPPED / entry.path)[0].ir, env=entry.env)
        assert run_rational(job, tables).model_dump_json() == committed[job].model_dump_json(), entry.name
