"""Benchmark: the synthetic contract search of `contractlang synth` (issue #18; ContractSim paper, App. C.4, [CS-34]).

Default: one coordinate ascent (Env 3, start 0, ρ = 0.9) twice — with the search's reuse (rounds shared
between contracts with the same later payments, valuations memoised, price moves not re-solved where no
deduction reads prices) and from scratch (every requested contract solved afresh) — and then one whole search
job (Env 3, start 0, all five targets) with reuse, from which the full generation (4 environments × 20
starts) on this machine's cores is projected. The two ascents end at the same contract (checked). Last, the
floor: every [CS-34] ascent ends with a full pass that keeps no move, so each of that job's end points is
valued again with all its neighbours (a fresh evaluator, rounds shared as in the search); that pass alone,
times the generation's 400 ascents, bounds from below what any search by [CS-34] costs with this DP.
`--full` instead times `contractlang synth` with the paper's plan into a temporary directory (`--starts N`: with
N starts instead of [CS-34]'s 20) and keeps its manifest beside the result. `--project` projects the 20-start
generation from timed jobs (issue #34): it reruns start 0 of every search environment the shipped store holds
(as a `synth` worker runs it: one numba thread, one BLAS thread), requires each record to equal the stored one
byte for byte, and scales each environment's CPU seconds per valued contract by the contracts all of that
environment's stored jobs valued (an environment still being searched: its mean job times 20). CPU time, not
wall time, so a busy machine does not inflate it. `--narrowing ENV START` times one
search job twice in the same run (issue #34): taking rounds solved with wider cash bounds (`RoundMemo`'s
default) and only rounds solved with the same bounds; the two records must be equal. `--profile ENV` values the
neighbours of that environment's start 0 under cProfile and splits the time between the compiled round kernel,
the forward pass and everything around them.
Usage: python3 bench/synth.py [--full [--starts N] | --narrowing ENV START | --project | --profile ENV]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, write_result  # noqa: E402

from contractlang.files import write_atomically  # noqa: E402
from games.experiments.synth import (  # noqa: E402
    MOVES,
    RHOS,
    SEARCH_ENVS,
    STARTS,
    Evaluator,
    SearchJob,
    coordinate_ascent,
    moved,
    run_search,
    starts,
)
from games.runner import limit_threads  # noqa: E402
from solver.dp import RoundMemo  # noqa: E402


def _ascent(reuse: bool) -> tuple[float, object, int]:
    evaluator = Evaluator(3, reuse=reuse)
    start = starts(evaluator.env)[0]
    t = time.perf_counter()
    end = coordinate_ascent(evaluator, start, 0.9)
    return time.perf_counter() - t, end, evaluator.solves


def _final_pass(env_id: int, terms) -> tuple[float, int]:
    """Seconds and DP evaluations to value an ascent's end point and every neighbour its last pass tries."""
    evaluator = Evaluator(env_id)
    t = time.perf_counter()
    evaluator(terms)
    for coordinate, step in MOVES:
        candidate = moved(terms, coordinate, step, evaluator.env.budget)
        if candidate is not None:
            evaluator(candidate)
    return time.perf_counter() - t, evaluator.solves


def _narrowing(env_id: int, start: int) -> None:
    job = SearchJob(env=env_id, start=start)
    runs = {}
    for wider in (False, True):
        evaluator = Evaluator(env_id)
        evaluator.memo = RoundMemo(wider=wider)
        t = time.perf_counter()
        record = run_search(job, evaluator)
        runs[wider] = (time.perf_counter() - t, record, evaluator.memo)
    (same_s, same_record, same_memo), (wide_s, wide_record, wide_memo) = runs[False], runs[True]
    assert same_record == wide_record, "narrowed rounds changed a search"
    print(
        f"one search job (Env {env_id}, start {start}): {same_s:.1f} s with rounds of the same cash bounds only "
        f"({same_memo.misses} rounds solved), {wide_s:.1f} s taking rounds of wider bounds too "
        f"({wide_memo.misses} solved, {wide_memo.narrowed} narrowed): {same_s / wide_s:.2f}x, same record"
    )
    write_result(
        f"synth_narrowing_env{env_id}",
        {
            "job": job.model_dump(mode="json"),
            "same_bounds_seconds": round(same_s, 1),
            "wider_bounds_seconds": round(wide_s, 1),
            "speedup": round(same_s / wide_s, 2),
            "rounds_solved_same_bounds": same_memo.misses,
            "rounds_solved_wider": wide_memo.misses,
            "rounds_narrowed": wide_memo.narrowed,
            "records_equal": True,
        },
    )


def _profile(env_id: int) -> None:
    """Where a search valuation's time goes: start 0's neighbours valued under cProfile, as a worker runs them."""
    import cProfile
    import pstats

    limit_threads(1)
    evaluator = Evaluator(env_id)
    start = starts(evaluator.env)[0]
    evaluator(start)  # compiled kernels load here, outside the profile
    neighbours = [
        c for c in (moved(start, coordinate, step, evaluator.env.budget) for coordinate, step in MOVES) if c is not None
    ]
    before = evaluator.solves
    profile = cProfile.Profile()
    t = time.perf_counter()
    profile.runcall(lambda: [evaluator(c) for c in neighbours])
    total = time.perf_counter() - t
    own = {
        f"{Path(file).parent.name}/{Path(file).name}:{name}": seconds
        for (file, _, name), (_, _, seconds, _, _) in pstats.Stats(profile).stats.items()
    }
    kernel = own.get("dp/kernels.py:solve_round", 0.0)
    forward = own.get("dp/kernels.py:forward_round", 0.0)
    print(
        f"Env {env_id}, {len(neighbours)} neighbours of start 0 ({evaluator.solves - before} solves): {total:.2f} s, "
        f"{kernel:.2f} s in solve_round ({kernel / total:.0%}), {forward:.2f} s in forward_round, "
        f"{total - kernel - forward:.2f} s elsewhere"
    )
    write_result(
        f"synth_profile_env{env_id}",
        {
            "neighbours": len(neighbours),
            "solves": evaluator.solves - before,
            "seconds": round(total, 2),
            "solve_round_seconds": round(kernel, 2),
            "forward_round_seconds": round(forward, 2),
            "elsewhere_seconds": round(total - kernel - forward, 2),
        },
    )


VARIANT_SOLVES_MINUTES = 23.2
"""The 240 variant solves of the timed two-start generation (`--full --starts 2`, 2 cores; the bases differ with
the starts but the variant classes and their count do not)."""


def _project() -> None:
    from games.experiments.synth import SHIPPED, SearchRecord
    from games.runner import stored_records

    limit_threads(1)
    stored = stored_records(SHIPPED / "jobs" / "search.jsonl", SearchRecord, lambda r: r.job, "search")
    cores = os.cpu_count() or 1
    rows, total = {}, 0.0
    for env_id in SEARCH_ENVS:
        job = SearchJob(env=env_id, start=0)
        if job not in stored:
            continue
        t = time.process_time()
        record = run_search(job, Evaluator(env_id))
        cpu = time.process_time() - t
        assert record.model_dump_json() == stored[job].model_dump_json(), (
            f"Env {env_id} start 0 is not the stored record"
        )
        valued = [len(r.valued) for j, r in stored.items() if j.env == env_id]
        env_valued = sum(valued) * STARTS / len(valued)
        env_seconds = cpu / len(record.valued) * env_valued
        total += env_seconds
        rows[env_id] = {
            "timed_cpu_seconds": round(cpu, 1),
            "timed_valued": len(record.valued),
            "stored_jobs": len(valued),
            "env_valued": round(env_valued),
            "env_cpu_minutes": round(env_seconds / 60, 1),
        }
        print(
            f"Env {env_id}: start 0 took {cpu:.0f} CPU s for {len(record.valued)} contracts (same record as stored); "
            f"{len(valued)} stored jobs valued {sum(valued):,}: about {env_seconds / 60:.0f} CPU min for 20 starts"
        )
    minutes = total / 60 / cores + VARIANT_SOLVES_MINUTES
    print(
        f"projected 20-start generation on {cores} cores: {total / 60 / cores:.0f} min of searches + "
        f"{VARIANT_SOLVES_MINUTES} min of variant solves = {minutes:.0f} min (target 150)"
    )
    write_result(
        "synth_projection",
        {
            "envs": rows,
            "search_cpu_minutes": round(total / 60, 1),
            "cores": cores,
            "variant_solves_minutes": VARIANT_SOLVES_MINUTES,
            "projected_minutes": round(minutes),
            "target_minutes": 150,
        },
        partial=len(rows) < len(SEARCH_ENVS),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="time the whole generation (hours on 2 cores)")
    parser.add_argument("--starts", type=int, default=STARTS, help="random starts of the timed generation")
    parser.add_argument(
        "--narrowing",
        type=int,
        nargs=2,
        metavar=("ENV", "START"),
        help="time one search job with and without rounds narrowed from wider cash bounds",
    )
    parser.add_argument(
        "--project",
        action="store_true",
        help="project the 20-start generation from start 0 of each searched environment",
    )
    parser.add_argument(
        "--profile",
        type=int,
        metavar="ENV",
        choices=SEARCH_ENVS,
        help="profile the valuation of start 0's neighbours in one search environment",
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    if args.profile is not None:
        _profile(args.profile)
        return
    if args.project:
        _project()
        return
    if args.narrowing:
        _narrowing(*args.narrowing)
        return
    if args.full:
        with tempfile.TemporaryDirectory() as tmp:
            environ = {k: v for k, v in os.environ.items() if k != "CONTRACTLANG_DP_CACHE"}  # no solved tables
            t = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "contractlang",
                    "synth",
                    "--out",
                    str(Path(tmp) / "s"),
                    "--starts",
                    str(args.starts),
                    "--json",
                ],
                check=True,
                cwd=tmp,
                stdout=subprocess.PIPE,
                text=True,
                env=environ,
            )
            seconds = time.perf_counter() - t
            summary = json.loads(done.stdout)
            manifest = (Path(tmp) / "s" / "manifest.json").read_text()
        print(
            f"full generation with {args.starts} starts: {seconds / 60:.1f} min on {cores} cores (target 60 min); "
            f"E14 holds for {summary['e14_holds']} of {len(summary['e14'])} bases, {summary['contracts']} contracts"
        )
        name = "synth_full" if args.starts == STARTS else f"synth_full_{args.starts}starts"
        write_result(
            name,
            {
                "starts": args.starts,
                "seconds": round(seconds, 1),
                "target_seconds": 3600,
                "e14_holds": summary["e14_holds"],
                "contracts": summary["contracts"],
                "not_mutually_beneficial": summary["not_mutually_beneficial"],
            },
        )
        write_atomically(RESULTS / f"{name}.manifest.json", manifest)
        return
    fast, end_fast, solves_fast = _ascent(reuse=True)
    slow, end_slow, solves_slow = _ascent(reuse=False)
    assert end_fast.terms == end_slow.terms and end_fast.valuation == end_slow.valuation
    print(
        f"one ascent (Env 3, start 0, ρ 0.9): {fast:.1f} s with reuse ({solves_fast} DP evaluations) against "
        f"{slow:.1f} s from scratch ({solves_slow}): {slow / fast:.2f}x"
    )
    t = time.perf_counter()
    record = run_search(SearchJob(env=3, start=0))
    job = time.perf_counter() - t
    jobs = len(SEARCH_ENVS) * STARTS
    projected = job * jobs / cores
    print(
        f"one search job (Env 3, start 0, {len(RHOS)} targets, {len(record.valued)} contracts valued): {job:.1f} s; "
        f"{jobs} jobs on {cores} cores ≈ {projected / 60:.0f} min if every job cost as much (target 60 min)"
    )
    passes = [_final_pass(3, a.terms) for a in record.ascents]
    per_ascent = sum(seconds for seconds, _ in passes) / len(passes)
    evaluations = sum(n for _, n in passes) / len(passes)
    floor = per_ascent * jobs * len(RHOS) / cores
    print(
        f"the final pass of an ascent: {per_ascent:.1f} s ({evaluations:.0f} DP evaluations); "
        f"{jobs * len(RHOS)} ascents on {cores} cores ≈ {floor / 60:.0f} min for the final passes alone"
    )
    write_result(
        "synth",
        {
            "ascent": {
                "reuse_seconds": round(fast, 1),
                "scratch_seconds": round(slow, 1),
                "speedup": round(slow / fast, 2),
                "reuse_evaluations": solves_fast,
                "scratch_evaluations": solves_slow,
            },
            "search_job": {"seconds": round(job, 1), "contracts_valued": len(record.valued)},
            "final_pass": {"seconds_per_ascent": round(per_ascent, 1), "evaluations_per_ascent": round(evaluations, 1)},
            "projected_full_minutes": round(projected / 60, 1),
            "final_passes_floor_minutes": round(floor / 60, 1),
            "target_minutes": 60,
        },
    )


if __name__ == "__main__":
    main()
