"""Benchmark: games per second of `experiment performance` with a built-in agent, against `experiment rational`
in the same run (issue #31). Each command is timed twice as a real process: once playing its games into an
empty store, once with nothing left to play (startup, reading the contracts and records, tables and figure);
games/s is the games over the difference, so the fixed cost is reported apart.

Default set: built here in a temporary directory, the smallest that plays every code path cheaply — Env 1
(deterministic, fast solves) with worked example 1's terms (docs/rules/checks.md) at five payment levels, each in the variants base, S
and S+PD (15 contracts). `--set DIR` times a set `contractlang synth` wrote instead (its job records are
copied away first, never changed); give it the DP cache that set's solves filled through CONTRACTLANG_DP_CACHE,
or the rational run solves every table first and its time is mostly solving. Without `--record` the result is
performance.partial.json; with it performance.json (under bench/results/ with BENCH_UPDATE=1).
Usage: [CONTRACTLANG_DP_CACHE=DIR] python3 bench/performance.py [--set DIR] [--agent rcc] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

VARIANTS = ("base", "S", "S+PD")
PAYMENTS = (16, 18, 20, 22, 24)  # weekly payment of Example 1's schedule (five weeks, then 0)


def build_set(out: Path) -> None:
    from games.experiments.synth import BaseChoice, SolveJob, SynthPlan, Terms, run_solve, write_outputs
    from solver.dp import TableCache

    rhos = tuple(round(1.0 - 0.1 * i, 1) for i in range(len(PAYMENTS)))
    bases, solved = [], {}
    tables = TableCache()
    for rho, pay in zip(rhos, PAYMENTS):
        terms = Terms(quantities=(1, 1, 1), prices=(10, 5, 3), payments=(pay,) * 5 + (0,))
        bases.append(BaseChoice(env=1, rho=rho, terms_env=1, start=0, terms=terms, feasible_starts=1))
        for v in VARIANTS:
            job = SolveJob(env=1, rho=rho, variant=v, terms=terms)
            solved[job] = run_solve(job, tables)
    write_outputs(out, bases, solved, SynthPlan(starts=1, search_envs=(1,), rhos=rhos))


def timed(*args: str, cwd: Path, env: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "contractlang", *args, "--json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set", type=Path, help="a directory `contractlang synth` wrote (default: a small one built here)"
    )
    parser.add_argument("--agent", default="rcc", help="a built-in agent: rc, rcc, re or random")
    parser.add_argument(
        "--record", action="store_true", help="a full run: write performance.json, not performance.partial.json"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "set"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if args.set is None:
            env["CONTRACTLANG_DP_CACHE"] = os.environ["CONTRACTLANG_DP_CACHE"] = str(Path(tmp) / "dp")
            start = time.perf_counter()
            build_set(work)
            setup = time.perf_counter() - start
        else:
            shutil.copytree(args.set, work, ignore=shutil.ignore_patterns("jobs", "rational", "performance"))
            setup = 0.0
        rational, r = timed("experiment", "rational", str(work), cwd=Path(tmp), env=env)
        rational_fixed, _ = timed("experiment", "rational", str(work), cwd=Path(tmp), env=env)
        agent, p = timed("experiment", "performance", str(work), "--agent", args.agent, cwd=Path(tmp), env=env)
        agent_fixed, _ = timed("experiment", "performance", str(work), "--agent", args.agent, cwd=Path(tmp), env=env)
    assert p["played_now"]["rational"] == 0, "the rational records were not reused"
    rational_games, agent_games = 9 * r["played_now"], p["played_now"]["agents"]
    rate = {
        "rational": rational_games / max(rational - rational_fixed, 1e-9),
        "performance": agent_games / max(agent - agent_fixed, 1e-9),
    }
    payload = {
        "set": str(args.set) if args.set else f"built: Env 1, {len(PAYMENTS)} bases × {VARIANTS}",
        "contracts": p["contracts"],
        "agent": args.agent,
        "setup_seconds": round(setup, 1),
        "rational": {
            "games": rational_games,
            "seconds": round(rational, 2),
            "fixed_seconds": round(rational_fixed, 2),
            "games_per_second": round(rate["rational"], 1),
        },
        "performance": {
            "games": agent_games,
            "seconds": round(agent, 2),
            "fixed_seconds": round(agent_fixed, 2),
            "games_per_second": round(rate["performance"], 1),
        },
        "performance_to_rational": round(rate["performance"] / rate["rational"], 2),
    }
    path = write_result("performance", payload, partial=not args.record)
    print(
        f"{p['contracts']} contracts: experiment rational {rational_games} games in {rational:.1f} s "
        f"({rational_fixed:.1f} s with nothing to play) = {rate['rational']:.1f} games/s; experiment performance "
        f"--agent {args.agent} {agent_games} games in {agent:.1f} s ({agent_fixed:.1f} s fixed) = "
        f"{rate['performance']:.1f} games/s ({payload['performance_to_rational']}x) -> {path}"
    )


if __name__ == "__main__":
    main()
