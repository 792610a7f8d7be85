"""Benchmark: the exact DP against the simulator at full size (issue #5): 20,000 RCC-vs-RCC games for every
bundled ContractSim example in Envs 3–6, each figure as a difference in standard errors.

Tables come from the on-disk table cache (solved on first use). Usage:
python3 bench/dp_montecarlo.py [--games N] [--envs 3,4,5,6] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, contractsim_examples, write_result  # noqa: E402

from games.contractsim.environments import environment  # noqa: E402
from games.experiments.crosscheck import cross_check  # noqa: E402
from solver.dp import TableCache  # noqa: E402
from solver.dp.cache import DEFAULT_DIR  # noqa: E402


def _z(agreement) -> str:
    if agreement is None:
        return "     n/a"
    return f"{agreement.z:+8.2f}" if agreement.z is not None else "   exact"


FULL_GAMES = 20_000
STOCHASTIC_ENVS = "3,4,5,6"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=FULL_GAMES)
    parser.add_argument("--envs", default=STOCHASTIC_ENVS)
    parser.add_argument("--only", default=None, help="only the contract with this name")
    args = parser.parse_args()
    tables = TableCache(ROOT / DEFAULT_DIR)
    contracts = contractsim_examples(args.only)
    rows = []
    start = time.perf_counter()
    print(f"{'contract':24s} env  {'P_sat':>8s} {'share':>8s} {'z':>8s} {'z U_c':>8s} {'z U_s':>8s}")
    for ir in contracts:
        for env_id in (int(e) for e in args.envs.split(",")):
            check = cross_check(ir, environment(env_id), args.games, tables)
            rows.append(check.model_dump() | {"agrees": check.agrees})
            print(
                f"{ir.name:24s} {env_id:3d}  {check.violation_free.exact:8.4f} {check.violation_free.sample:8.4f} "
                f"{_z(check.violation_free)} {_z(check.u_customer)} {_z(check.u_supplier)}"
                f"{'' if check.agrees else '  DISAGREES'}",
                flush=True,
            )
    zs = [
        abs(a["z"])
        for r in rows
        for a in (r["violation_free"], r["u_customer"], r["u_supplier"])
        if a is not None and a["z"] is not None
    ]
    summary = {
        "pairs": len(rows),
        "games_per_pair": args.games,
        "agree": sum(r["agrees"] for r in rows),
        "max_abs_z": max(zs, default=0.0),
        "over_2_se": sum(z > 2 for z in zs),
        "figures": len(zs),
        "seconds": round(time.perf_counter() - start, 1),
    }
    partial = args.only is not None or args.envs != STOCHASTIC_ENVS or args.games != FULL_GAMES
    path = write_result("dp_montecarlo", {"summary": summary, "rows": rows}, partial)
    print(
        f"dp_montecarlo: {summary['agree']}/{summary['pairs']} pairs within 3 SE, max |z| {summary['max_abs_z']:.2f}, "
        f"{summary['over_2_se']} of {summary['figures']} figures beyond 2 SE; {summary['seconds']} s -> {path}"
    )


if __name__ == "__main__":
    main()
