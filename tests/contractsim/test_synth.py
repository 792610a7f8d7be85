"""Synthetic contracts, the rational experiment and the Pareto frontiers (ContractSim paper, App. C.4–D.3, issue #18)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from contractlang import load
from contractlang.vocab import Frozen
from games.contractsim.environments import environment
from games.experiments.frontier import Point, enumeration, f2_seeds, pareto, sweep
from games.experiments.synth import (
    SHIPPED,
    AscentRecord,
    SearchJob,
    SearchRecord,
    SynthPlan,
    Terms,
    Valuation,
    choose_bases,
    contingencies,
    coordinate_ascent,
    starts,
)
from games.runner import run_phase
from solver.dp import RoundMemo, build_problem, evaluate, solve
from solver.dp.induction import backward
from tests.helpers import ROOT, assert_each_fails_in_one_line, run_cli, run_process


@pytest.mark.slow
def test_tail_cover_and_shared_rounds_give_the_schedule_solve_exactly():
    """The search's solves (cover `tail`, rounds shared through the memo) equal `solve` bit for bit, and a move
    of M_5 re-solves only rounds 1–2."""
    env = environment(3)
    memo = RoundMemo()
    base = Terms(quantities=(1, 2, 2), prices=(10, 5, 3), payments=(31, 31, 24, 25, 22, 22))
    neighbour = base.model_copy(update={"payments": (31, 31, 25, 25, 22, 22)})
    for terms, variant in ((base, "base"), (neighbour, "base"), (base, "S+PD")):
        ir = terms.contract("t", variant)
        expected, _ = solve(ir, env)
        misses = memo.misses
        got = evaluate(build_problem(ir, env, "tail"), memo)
        assert (got.p_sat, got.u_customer, got.u_supplier, got.completeness) == (
            expected.p_sat,
            expected.u_customer,
            expected.u_supplier,
            expected.completeness,
        )
        if terms is neighbour:
            assert memo.misses - misses == 2  # rounds 3–5 read only M_7..M_11, unchanged
    assert memo.hits == 3


@pytest.mark.slow
def test_a_round_solved_over_wider_cash_serves_a_narrower_one_bit_for_bit():
    """Issue #34: two schedules with the same later payments whose totals lie in different 16-dollar buckets
    (cover `tail`) have every cash bound 16 apart; the wider one's rounds, cut down, are the narrower one's own
    solve entry for entry (orders, P_t, V_t, states), deductions and rollover memory included."""
    env = environment(3)
    wide = Terms(quantities=(1, 2, 2), prices=(10, 5, 3), payments=(40, 31, 24, 25, 22, 22))
    narrow = wide.model_copy(update={"payments": (27, 31, 24, 25, 22, 22)})
    problems = [build_problem(t.contract("t", "S+PD+RO"), env, "tail") for t in (wide, narrow)]
    assert list(problems[0].cash_reach - problems[1].cash_reach) == [16] * 5
    memo = RoundMemo()
    backward(problems[0], memo=memo)
    got, own = backward(problems[1], memo=memo, keep_values=True), backward(problems[1], keep_values=True)
    assert memo.narrowed == 5 and memo.misses == 5  # the wide solve's five, then none
    assert all(np.array_equal(a, b) for a, b in zip(got.policies, own.policies))
    assert all(np.array_equal(a, b) for pair in zip(got.values, own.values) for a, b in zip(*pair))
    assert (got.p_sat, got.v_supplier, got.states) == (own.p_sat, own.v_supplier, own.states)
    memo.wider = False  # the baseline: only rounds solved with the same bounds
    assert memo.get(problems[1], 4) is None and memo.get(problems[0], 4) is not None


class Landscape:
    """A hand-made valuation: P_sat falls by 0.1 per unit delivered above (1,1,1); the Customer values a unit at
    10 and the Supplier spends 4 on it; prices are never read."""

    env = environment(3)

    def __init__(self):
        self.calls = 0

    def __call__(self, terms: Terms, variant: str = "base") -> Valuation:
        self.calls += 1
        units = sum(terms.quantities)
        p = max(0.0, 1.0 - 0.1 * (units - 3))
        paid = sum(terms.payments)
        return Valuation(p, 200 + 5 * 10 * units - paid, paid - 5 * 4 * units, p)


def test_coordinate_ascent_reaches_the_band_and_then_climbs():
    """From (1,1,1) (P_sat 1, above the 0.7 band) the ascent adds units until P_sat = 0.7 (6 units: the band
    [0.65, 0.75] allows no more), then every further move leaves the band or changes nothing, so the end is
    the constrained optimum U_Cust + U_Supp = 200 + 30·6 = 380; prices never move (ties are not moves)."""
    start = Terms(quantities=(1, 1, 1), prices=(7, 3, 2), payments=(60, 0, 0, 0, 0, 0))
    end = coordinate_ascent(Landscape(), start, 0.7)
    assert end.feasible
    assert sum(end.terms.quantities) == 6
    assert end.valuation.u_customer + end.valuation.u_supplier == pytest.approx(380)
    assert end.terms.prices == (7, 3, 2)
    # individual rationality: U_Supp = paid − 120 ≥ 0 and U_Cust = 500 − paid ≥ 200
    assert 120 <= sum(end.terms.payments) <= 300


def test_an_ascent_that_cannot_reach_the_band_is_not_feasible():
    end = coordinate_ascent(
        Landscape(), Terms(quantities=(1, 1, 1), prices=(1, 1, 1), payments=(60, 0, 0, 0, 0, 0)), 1.2
    )
    assert not end.feasible and end.terms.quantities == (1, 1, 1)


def test_starts_are_seeded_valid_and_affordable():
    env = environment(5)
    first, again = starts(env), starts(env)
    assert first == again and len(first) == 20 and len(set(first)) == 20
    cost = np.array(
        [2 + 1.5 + 2.5, 2 + 1.5, 2.5]
    )  # Env 5's expected unit ingredient costs (ContractSim paper, App. A.3)
    for t in first:
        assert t.valid(env.budget)
        assert 5 * cost @ t.quantities <= env.budget


def _record(env: int, start: int, ends: list[tuple[float, bool]]) -> SearchRecord:
    """A search record whose ascent for the i-th target ends at objective ends[i][0] (feasible or not)."""
    ascents = []
    for (value, ok), rho in zip(ends, (0.9, 0.8)):
        terms = Terms(quantities=(1, 1, start + 1), prices=(1, 1, 1), payments=(1, 0, 0, 0, 0, 0))
        ascents.append(
            AscentRecord(
                rho=rho, terms=terms, valuation=Valuation(rho, 200 + value, 0.0, 1.0), feasible=ok, passes=1, moves=0
            )
        )
    job = SearchJob(env=env, start=start, rhos=(0.9, 0.8))
    return SearchRecord(job=job, start_terms=ascents[0].terms, ascents=tuple(ascents), valued=())


def test_bases_are_the_best_feasible_ends_and_env1_reuses_env3():
    plan = SynthPlan(starts=3, search_envs=(3,), rhos=(0.9, 0.8))
    records = [
        _record(3, 0, [(10, True), (5, False)]),
        _record(3, 1, [(30, False), (5, False)]),
        _record(3, 2, [(10, True), (7, False)]),
    ]
    bases = choose_bases(records, plan)
    assert [(b.env, b.rho) for b in bases] == [(1, 0.9), (1, 0.8), (3, 0.9), (3, 0.8)]
    env3 = {b.rho: b for b in bases if b.env == 3}
    assert env3[0.9].start == 0 and env3[0.9].feasible_starts == 2  # tie at 10: the lower start; 30 was infeasible
    assert env3[0.8].terms is None and env3[0.8].start is None
    env1 = {b.rho: b for b in bases if b.env == 1}
    assert env1[0.9].terms == env3[0.9].terms and env1[0.9].terms_env == 3


def test_variants_carry_exactly_their_clauses_and_grim_trigger():
    assert contingencies("base").explicit_count == 0
    full = contingencies("S+PD+RO")
    assert full.mode == "PDRO" and full.substitution is not None and full.grim_trigger
    assert full.rollover.max_deficit == 2 and full.payment_deduction.min_qty == (1, 1, 1)
    assert contingencies("PD").mode == "PD" and contingencies("PD").substitution is None


def _point(uc: float, us: float, p: float = 1.0) -> Point:
    return Point(
        terms=Terms(quantities=(1, 1, 1), prices=(0, 0, 0), payments=(1, 0, 0, 0, 0, 0)),
        variant="base",
        p_sat=p,
        u_customer=uc,
        u_supplier=us,
    )


def test_pareto_keeps_the_nondominated_satisfiable_points():
    pts = [_point(300, 10), _point(250, 40), _point(260, 30), _point(240, 35), _point(400, 50, p=0.94), _point(300, 5)]
    front = pareto(pts)
    assert [(p.u_customer, p.u_supplier) for p in front] == [(250, 40), (260, 30), (300, 10)]
    best = sweep(pts, "customer", [0, 30, 45])
    assert [None if p is None else p.u_customer for _, p in best] == [300, 260, None]


@pytest.mark.slow
def test_deterministic_frontier_points_are_the_dp_values():
    """The closed form of `enumeration` against the DP on every 200th point of Envs 1 and 2, and one unit below
    a point's smallest total the contract is unsatisfiable."""
    from games.experiments.synth import Evaluator

    for env_id in (1, 2):
        ev = Evaluator(env_id)
        points = enumeration(env_id)
        for p in points[::200]:
            v = ev(p.terms)
            assert (v.p_sat, v.u_customer, v.u_supplier) == (p.p_sat, p.u_customer, p.u_supplier)
            total = p.terms.payments[0]
            if total > 1 and p.u_supplier < 0:  # a smallest satisfiable total (the Supplier's capital pays part)
                below = p.terms.model_copy(update={"payments": (total - 1, 0, 0, 0, 0, 0)})
                assert ev(below).p_sat == 0.0


def test_f2_seeds_take_the_most_valuable_contract_of_each_reliability_band():
    """Hand-made pool: the three near-copies at P_sat 0.41–0.415 worth the most get no seed while the 8 bands
    reach down to 0.60, and one (the best) when 12 reach 0.40; the [0.95, 1] band's best comes first; a tie
    keeps the earlier contract; empty bands are skipped; 0.95 − 1e-12 counts as 0.95 (the threshold's
    tolerance), 0.8999 does not count as 0.90."""

    def point(i: int, p_sat: float, joint: float) -> Point:
        terms = Terms(quantities=(1, 1, 1), prices=(8, 4, 2), payments=(i, 0, 0, 0, 0, 0))
        return Point(terms=terms, variant="base", p_sat=p_sat, u_customer=joint - 10, u_supplier=10)

    pool = [
        point(1, 0.41, 409),
        point(2, 0.41, 409.5),
        point(3, 0.415, 409.2),
        point(4, 0.97, 300),
        point(5, 0.95 - 1e-12, 310),
        point(6, 0.92, 320),
        point(7, 0.8999, 330),
        point(8, 0.91, 320),
        point(9, 0.61, 200),
        point(10, 0.59, 500),
    ]
    assert [p.terms.payments[0] for p in f2_seeds(pool)] == [5, 6, 7, 9]
    assert [p.terms.payments[0] for p in f2_seeds(pool, 2)] == [5, 6]
    assert [p.terms.payments[0] for p in f2_seeds(pool, 12)] == [5, 6, 7, 9, 10, 2]
    assert f2_seeds(pool, 0) == []


SMALL = ("--search-envs", "1", "--rhos", "1.0", "--starts", "1", "--workers", "2")


def _outputs(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "jobs" not in p.parts
    }


@pytest.mark.slow
def test_synth_experiment_and_frontier_through_the_cli(tmp_path):
    """A small plan (searched in Env 1 with ρ = 1.0, one start): interrupted after its first variant solve and
    rerun (its search taken from the uninterrupted run's store), it writes the same bytes as an uninterrupted
    run on Ray; the rational tables satisfy every identity and a rerun plays nothing; the frontier of Env 1 is drawn."""
    whole = tmp_path / "whole"
    # The uninterrupted run is on `--ray local` (a Ray cluster started for the run; issue #34: the full plan's 80
    # search jobs are independent, so a cluster runs them): the interrupted run below uses local processes, so
    # the comparison shows both that the backends write the same bytes and that a resumed run does.
    # Real processes: these runs fork workers that run the DP kernels, and a fork of a process whose kernel
    # threads have started (as this one's may have, in an earlier test) can hang.
    done = run_process("synth", "--out", str(whole), *SMALL, "--ray", "local", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["contracts"] == 6 and summary["excluded"] == 2 and summary["e14_holds"] == 1
    assert summary["searched_now"] == 1 and summary["solved_now"] == 8

    cut = tmp_path / "cut"
    (cut / "jobs").mkdir(parents=True)  # the store is keyed by job content: the finished search is reused
    shutil.copy(whole / "jobs" / "search.jsonl", cut / "jobs" / "search.jsonl")
    own_tables = {**os.environ, "CONTRACTLANG_DP_CACHE": str(tmp_path / "cut-tables")}  # solves take real time
    store = cut / "jobs" / "solve.jsonl"
    # An attempt that is not interrupted (the run ended before the signal could be sent) is recorded and tried
    # afresh; each outcome is printed if none is interrupted.
    outcomes = []
    for _ in range(3):
        store.unlink(missing_ok=True)
        (cut / "manifest.json").unlink(missing_ok=True)
        shutil.rmtree(tmp_path / "cut-tables", ignore_errors=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "contractlang", "synth", "--out", str(cut), *SMALL],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=own_tables,
        )
        while proc.poll() is None and not (store.exists() and store.read_bytes().count(b"\n") >= 1):
            time.sleep(0.02)
        running = proc.poll() is None
        solved_when_signalled = store.read_bytes().count(b"\n") if store.exists() else 0
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 130 and "interrupted" in err:
            break
        outcomes.append((running, solved_when_signalled, proc.returncode, out[-300:], err[-300:]))
    assert proc.returncode == 130 and "interrupted" in err, outcomes
    assert not (cut / "manifest.json").exists()
    # the rerun may read the tables the whole run solved: what it must show is that the store resumes
    resumed = run_process("synth", "--out", str(cut), *SMALL, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    resumed_summary = json.loads(resumed.stdout)
    assert resumed_summary["searched_now"] == 0 and 0 < resumed_summary["solved_now"] < 8
    assert _outputs(cut) == _outputs(whole)
    contract = whole / "contracts" / "synth-env1-rho1.0-s-ro"
    assert load(contract / "contract.contract")[0].ir.name == "synth-env1-rho1.0-s-ro"  # parses and checks
    assert "Substitution:" in (contract / "contract.txt").read_text()

    first = run_process("experiment", "rational", str(whole), "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["contracts"] == 6 and report["played_now"] == 6
    assert report["identities_hold"] == 13, [i for i in report["identities"] if not i["holds"]]
    tables = (whole / "rational" / "tables.md").read_bytes()
    assert b"Table 10" in tables
    again = run_process("experiment", "rational", str(whole), "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["played_now"] == 0
    assert (whole / "rational" / "tables.md").read_bytes() == tables

    frontier = run_process("experiment", "frontier", str(whole), "--json", cwd=tmp_path)
    assert frontier.returncode == 0, frontier.stderr
    envs = json.loads(frontier.stdout)["envs"]
    assert [e["env"] for e in envs] == [1] and envs[0]["f1"] == envs[0]["f2"] > 1
    assert (whole / "frontiers" / "env1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.e2e
def test_commands_default_to_the_shipped_set_and_say_how_far_it_is(tmp_path, monkeypatch):
    """Issue #34: without a directory, `experiment …` read the set shipped in the repository; while it is still
    being generated they say how many of its 80 search jobs are done (the store is read without its lock, so a
    running generation can be watched), and `synth --out` into it takes the paper's plan only."""
    import games.experiments.synth as synth

    shipped = tmp_path / "shipped"
    (shipped / "jobs").mkdir(parents=True)
    real = synth.SHIPPED
    committed = (real / "jobs" / "search.jsonl").read_bytes().splitlines(keepends=True)
    (shipped / "jobs" / "search.jsonl").write_bytes(b"".join(committed[:3]) + committed[3][:40])  # one cut short
    monkeypatch.setattr(synth, "SHIPPED", shipped)
    message = "the shipped synthetic set is incomplete here (3 of 80 search jobs done)"
    cases = [
        (("experiment", "rational"), message),
        (("experiment", "frontier"), message),
        (("experiment", "performance", "--agent", "rcc"), message),
        (("synth", "--out", str(shipped), "--starts", "2"), "the shipped synthetic set is the paper's plan"),
    ]
    assert_each_fails_in_one_line(lambda *args: run_cli(*args, cwd=tmp_path), cases)
    assert (shipped / "jobs" / "search.jsonl").read_bytes().endswith(committed[3][:40])  # watched, not repaired
    # with the manifest of a finished generation but searches missing (the state this repository's set was in
    # for three sessions, while 30 lost search records were run again), only the frontiers need them
    shutil.copy(real / "manifest.json", shipped / "manifest.json")
    shutil.copytree(real / "contracts", shipped / "contracts")
    assert_each_fails_in_one_line(
        lambda *args: run_cli(*args, cwd=tmp_path),
        [
            (("experiment", "frontier"), "the shipped set's search store is incomplete here (3 of 80 search jobs"),
            (("experiment", "frontier", "--envs", "2,5"), "(0 of 20 search jobs of Env 5 done)"),
        ],
    )
    # an environment whose searches are all in (here Env 1, enumerated, which needs none) is drawn already, and
    # the panels drawn before for other environments stay (the shipped set gains its frontiers as its searches
    # land); the run writes into ./contractlang-out/frontiers, never into the shipped set
    shutil.copytree(real / "frontiers", shipped / "frontiers")
    before = json.loads((shipped / "frontiers" / "frontiers.json").read_text())
    (shipped / "frontiers" / "env1.png").unlink()
    done = run_cli("experiment", "frontier", "--envs", "1", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [e["env"] for e in json.loads(done.stdout)["envs"]] == [1]
    written = tmp_path / "contractlang-out" / "frontiers"
    assert (written / "env1.png").exists() and not (shipped / "frontiers" / "env1.png").exists()
    after = json.loads((written / "frontiers.json").read_text())
    assert [f["env"] for f in before["frontiers"]][:4] == [1, 2, 3, 4]  # the shipped panels, Env 1 among them
    assert after == before  # Env 1 drawn again as it was, the others kept


@pytest.mark.parametrize(
    "args, message",
    [
        (("synth", "--rhos", "1.5"), "--rhos takes probabilities in [0, 1]"),
        (("synth", "--search-envs", "9"), "--search-envs takes environments 1..6"),
        (("experiment", "rational", "nowhere"), "nowhere/manifest.json: no manifest there"),
        (("experiment", "frontier", "nowhere"), "nowhere/manifest.json: no manifest there"),
        (("experiment", "rational", "/dev/null"), "/dev/null: a file, not a directory"),
    ],
)
def test_bad_experiment_input_is_one_line(tmp_path, args, message):
    json_form = args[0] == "experiment"  # one of each form per command: one failure path writes both
    done = run_cli(*args, *(("--json",) if json_form else ()), cwd=tmp_path)
    assert done.returncode == 1
    text = json.loads(done.stdout)["error"] if json_form else done.stderr
    assert message in text and "Traceback" not in done.stderr
    assert len(text.strip().splitlines()) == 1


class _WaitJob(Frozen):
    index: int
    release: str


class _WaitRecord(Frozen):
    job: _WaitJob
    released: bool | None


def _held_until_released(job: _WaitJob) -> _WaitRecord:
    """Job 1 waits (at most 10 s) for the test to release it; every other job ends at once."""
    if job.index != 1:
        return _WaitRecord(job=job, released=None)
    deadline = time.monotonic() + 10
    while not Path(job.release).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return _WaitRecord(job=job, released=Path(job.release).exists())


def test_each_record_reaches_the_store_when_its_job_ends(tmp_path):
    """The 39 quick jobs are stored while job 1 still waits, and only then is job 1 released. Handed to the
    workers in chunks, job 0 would wait in its worker for job 1, and a search job of minutes for its
    neighbours (an interrupt would lose them all)."""
    release = tmp_path / "release"
    jobs = [_WaitJob(index=i, release=str(release)) for i in range(40)]

    def progress(phase: str, done: int, total: int) -> None:
        if done == total - 1:
            release.touch()

    records, ran = run_phase(
        "waits", tmp_path / "waits.jsonl", _WaitRecord, _held_until_released, jobs, workers=2, progress=progress
    )
    assert ran == 40 and records[jobs[1]].released, "job 1 timed out: the others were held back with it"


def test_a_store_line_that_is_not_a_record_stops_with_its_line_number(tmp_path):
    jobs = tmp_path / "out" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "search.jsonl").write_text('{"not": "a record"}\n')
    done = run_cli("synth", "--out", str(tmp_path / "out"), *SMALL, cwd=tmp_path)
    assert done.returncode == 1 and "search.jsonl:1: not a search record" in done.stderr


HALF_SENT = """
import gc, multiprocessing.queues, os, signal, struct, sys, time
from games.runner import run_jobs

def work(job):
    if job == 0:
        return job
    # as if ended while sending its record: a 1 MB message's header and a few of its bytes reach the pipe
    queue = next(o for o in gc.get_objects() if isinstance(o, multiprocessing.queues.SimpleQueue))
    os.write(queue._writer.fileno(), struct.pack("!i", 1 << 20) + b"partial")
    if sys.argv[1] == "deaf":  # as if inside a compiled kernel, where its SIGTERM handler cannot run
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    time.sleep(60)

records = run_jobs(work, [0, 1], workers=2, chunksize=1)
print(next(records), flush=True)
time.sleep(1.0)
records.close()
print("closed", flush=True)
"""


@pytest.mark.e2e
@pytest.mark.parametrize("worker", ["listening", "deaf"])
def test_a_worker_ended_half_way_through_sending_does_not_hang_the_run(tmp_path, worker):
    """A run interrupted while a worker was sending its record (a SIGTERM, then Ctrl-Cs, once hung the
    `ctbench sweep` of a test for good): the pool's manager thread waited for the rest of the message. Closing
    the run ends the workers, killing one that does not end itself within WORKER_END_SECONDS, and the run."""
    script = tmp_path / "half_sent.py"
    script.write_text(HALF_SENT)
    done = subprocess.run(
        [sys.executable, str(script), worker],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (done.returncode, done.stdout.split()) == (0, ["0", "closed"]), done.stderr


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()
    }


@pytest.mark.e2e
def test_commands_on_the_shipped_set_write_only_into_the_working_directory(tmp_path):
    """Issue #45: the shipped set is read-only input. `experiment rational` without a directory reuses its 180
    finished games and writes the tables into ./contractlang-out/rational; `synth` without --out reuses its
    searches and solves and writes the set into ./contractlang-out/synth. Nothing in the package changes."""
    package = _tree(SHIPPED)
    done = run_cli("experiment", "rational", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["contracts"], report["played_now"], report["identities_hold"]) == (180, 0, 13)
    tables = tmp_path / "contractlang-out" / "rational" / "tables.md"  # one folder, not rational/rational
    assert report["tables"] == "contractlang-out/rational/tables.md"
    assert tables.read_bytes() == (SHIPPED / "rational" / "tables.md").read_bytes()
    done = run_cli("synth", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["contracts"], report["searched_now"], report["solved_now"]) == (180, 0, 0)
    out = tmp_path / "contractlang-out" / "synth"
    assert (out / "manifest.json").read_bytes() == (SHIPPED / "manifest.json").read_bytes()
    assert not (out / "jobs" / "search.jsonl").exists()  # nothing ran, so nothing was copied
    assert _tree(SHIPPED) == package
