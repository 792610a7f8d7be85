"""Benchmark: the job runner's BLAS limit (issue #34). Two solves run side by side, as two workers of
`run_jobs` do on this 2-core machine: once with each process's BLAS pool at its default size (the whole
machine, which the processes then oversubscribe), once limited to one thread as `run_jobs` now does. The
tables must be bit-identical (P_sat, utilities and the SHA-256 of every round's policy).

    python3 bench/blas_threads.py [--contract catering-rollover] [--env 5] [--repeat 2]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import threadpoolctl  # noqa: E402
from _common import contractsim_examples, write_result  # noqa: E402

from games.contractsim.environments import environment  # noqa: E402
from solver.dp import solve  # noqa: E402


def _solve(ir, env_id: int, blas_threads: int | None, out) -> None:
    with threadpoolctl.threadpool_limits(blas_threads):
        start = time.perf_counter()
        result, table = solve(ir, environment(env_id))
        seconds = time.perf_counter() - start
    policy = hashlib.sha256(b"".join(p.tobytes() for p in table.policies)).hexdigest()
    out.put(
        {
            "seconds": seconds,
            "p_sat": result.p_sat.hex(),
            "v_supplier": result.v_supplier.hex(),
            "u_supplier": None if result.u_supplier is None else result.u_supplier.hex(),
            "policy": policy,
        }
    )


def side_by_side(ir, env_id: int, blas_threads: int | None) -> list[dict]:
    """Two solves at once, each in its own fresh process."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_solve, args=(ir, env_id, blas_threads, out)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contract", default="catering-rollover")
    parser.add_argument("--env", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    [ir] = contractsim_examples(args.contract)
    side_by_side(ir, args.env, 1)  # compiles the kernels into numba's cache, so no timed run pays for it
    runs = {"default": [], "one": []}
    for _ in range(args.repeat):  # interleaved, so a change in the machine's load hits both alike
        for name, threads in (("default", None), ("one", 1)):
            runs[name] += side_by_side(ir, args.env, threads)
    results = {name: {"seconds": sorted(round(r["seconds"], 2) for r in rs)} for name, rs in runs.items()}
    identical = (
        len({(r["p_sat"], r["v_supplier"], r["u_supplier"], r["policy"]) for rs in runs.values() for r in rs}) == 1
    )
    best = {name: min(r["seconds"] for r in rs) for name, rs in runs.items()}
    payload = {
        "contract": args.contract,
        "env": args.env,
        "blas_default": results["default"],
        "blas_one_thread": results["one"],
        "speedup_best": round(best["default"] / best["one"], 2),
        "tables_bit_identical": identical,
        "blas": [i["internal_api"] + " " + i["version"] for i in threadpoolctl.threadpool_info()],
    }
    path = write_result("blas_threads", payload)
    print(
        f"{args.contract} Env {args.env}, two solves side by side: default BLAS pool {results['default']['seconds']} s, "
        f"one thread {results['one']['seconds']} s ({payload['speedup_best']}× on the best); tables bit-identical: "
        f"{identical} → {path}"
    )


if __name__ == "__main__":
    main()
