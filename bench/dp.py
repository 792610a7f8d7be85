"""Benchmark: the exact DP on every bundled ContractSim example in all six environments (issue #5).

Each solve runs in its own child process (started fresh; compiled kernels load from the numba cache), so its
peak resident memory is its own. Targets on a 2-core machine: median ≤ 2 s per (contract, env),
worst ≤ 20 s, peak ≤ 2 GB. Times are also given as multiples of worked example 1 in Env 1, solved
in the same run, so runs on different machines compare.
Usage: python3 bench/dp.py [--envs 1,2,...] [--only NAME] [--golden]
(--golden also rewrites tests/golden/dp_examples.json, the figures the tests compare against.)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, contractsim_examples, write_result  # noqa: E402

from games.contractsim.environments import environment  # noqa: E402
from solver.dp import solve  # noqa: E402


def _solve_one(ir, env_id: int) -> dict:
    start = time.perf_counter()
    result, _ = solve(ir, environment(env_id))
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    c = ir.contingencies
    return {
        "contract": ir.name,
        "env": env_id,
        "mode": c.mode + ("+sub" if c.substitution else ""),
        "p_sat": result.p_sat,
        "p_sat_forward": result.p_sat_forward,
        "u_customer": result.u_customer,
        "u_supplier": result.u_supplier,
        "completeness": result.completeness,
        "states": result.states,
        "seconds": round(seconds, 3),
        "peak_mb": round(peak_mb, 1),
    }


ALL_ENVS = "1,2,3,4,5,6"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default=ALL_ENVS)
    parser.add_argument("--only", default=None, help="solve only the contract with this name")
    parser.add_argument("--golden", action="store_true", help="rewrite tests/golden/dp_examples.json")
    args = parser.parse_args()
    partial = args.only is not None or args.envs != ALL_ENVS
    if args.golden and partial:
        parser.error("--golden rewrites the figures of every example in every environment; drop --only/--envs")
    envs = [int(e) for e in args.envs.split(",")]
    contracts = contractsim_examples(args.only)
    reference = contractsim_examples("worked-example-1")[0]
    _solve_one(reference, 1)  # compile the kernels once, into the on-disk cache the children load
    spawn = multiprocessing.get_context("spawn")
    rows = []
    with spawn.Pool(processes=1, maxtasksperchild=1) as pool:
        unit = pool.apply(_solve_one, (reference, 1))["seconds"]
        for ir in contracts:
            for env_id in envs:
                row = pool.apply(_solve_one, (ir, env_id))
                row["x_reference"] = round(row["seconds"] / unit, 1)
                rows.append(row)
                print(
                    f"{row['contract']:24s} env {env_id}  {row['mode']:9s} P_sat {row['p_sat']:.6f}  "
                    f"U {row['u_customer']:10.2f} / {row['u_supplier']:9.2f}  states {row['states']:>10,}  "
                    f"{row['seconds']:7.2f} s  {row['peak_mb']:7.1f} MB",
                    flush=True,
                )
    times = [r["seconds"] for r in rows]
    worst = max(rows, key=lambda r: r["seconds"])
    summary = {
        "solves": len(rows),
        "median_seconds": statistics.median(times),
        "max_seconds": worst["seconds"],
        "slowest": f"{worst['contract']} env {worst['env']} ({worst['mode']})",
        "peak_mb": max(r["peak_mb"] for r in rows),
        "reference_seconds": unit,
        "targets": {"median_seconds": 2, "max_seconds": 20, "peak_mb": 2048},
    }
    path = write_result("dp", {"summary": summary, "rows": rows}, partial)
    if args.golden:
        golden = {f"{r['contract']}/{r['env']}": {k: r[k] for k in ("p_sat", "u_customer", "u_supplier")} for r in rows}
        (ROOT / "tests" / "golden" / "dp_examples.json").write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(
        f"dp: {len(rows)} solves, median {summary['median_seconds']:.2f} s, max {summary['max_seconds']:.2f} s "
        f"({summary['slowest']}), peak {summary['peak_mb']:.0f} MB; reference {unit:.2f} s -> {path}"
    )


if __name__ == "__main__":
    main()
