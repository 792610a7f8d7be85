"""Benchmark: lazy receipt-window rows (issue #34). With one numba thread, as each worker of `synth` runs, a row
of the solver's last expectation stage is computed when the selection first needs it instead of when its window
comes into use. Both ways are timed in the same run (best of `--repeat`, alternating) on the search's own
contracts — the ascent ends of the first Env 5 and Env 6 search jobs in the shipped store, each as the base
contract and its S+PD+RO and RO variants, cover `tail` as the search solves them — and on the bundled rollover
examples in Envs 5–6. Every policy and every P_t/V_t must be identical.

    NUMBA_NUM_THREADS=1 python3 bench/dp_rows.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numba  # noqa: E402
import numpy as np  # noqa: E402
from _common import contractsim_examples, write_result  # noqa: E402

from games.contractsim.environments import environment  # noqa: E402
from games.experiments.synth import SHIPPED, SearchRecord  # noqa: E402
from solver.dp import build_problem  # noqa: E402
from solver.dp.induction import backward  # noqa: E402


def _problems() -> list[tuple[str, object]]:
    records: dict = {}
    for line in (SHIPPED / "jobs" / "search.jsonl").read_bytes().splitlines():
        record = SearchRecord.model_validate_json(line)
        records.setdefault(record.job.env, record)
    cases = []
    for env_id in (5, 6):
        if env_id not in records:
            continue
        for ascent in records[env_id].ascents[:2]:
            for variant in ("base", "S+PD+RO", "RO"):
                ir = ascent.terms.contract(f"search-env{env_id}-rho{ascent.rho}-{variant}", variant)
                cases.append((ir.name, build_problem(ir, environment(env_id), "tail")))
    for ir in contractsim_examples():
        if ir.contingencies.rollover is not None:
            for env_id in (5, 6):
                cases.append((f"{ir.name}-env{env_id}", build_problem(ir, environment(env_id))))
    return cases


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.policies, b.policies)) and all(
        np.array_equal(x, y) for pair in zip(a.values, b.values) for x, y in zip(*pair)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if numba.get_num_threads() != 1:
        sys.exit("run with NUMBA_NUM_THREADS=1: lazy rows are for one thread")
    rows = []
    for name, problem in _problems():
        best = {True: float("inf"), False: float("inf")}
        solved = {}
        for _ in range(args.repeat):
            for lazy in (False, True):
                start = time.perf_counter()
                solved[lazy] = backward(problem, keep_values=True, lazy_rows=lazy)
                best[lazy] = min(best[lazy], time.perf_counter() - start)
        assert _same(solved[True], solved[False]), f"{name}: lazy rows changed the table"
        rows.append(
            {
                "case": name,
                "eager_seconds": round(best[False], 3),
                "lazy_seconds": round(best[True], 3),
                "ratio": round(best[False] / best[True], 3),
            }
        )
        print(
            f"{name:44s} eager {best[False]:6.2f} s  lazy {best[True]:6.2f} s  {best[False] / best[True]:.2f}x",
            flush=True,
        )
    eager, lazy = sum(r["eager_seconds"] for r in rows), sum(r["lazy_seconds"] for r in rows)
    print(f"all {len(rows)} solves: eager {eager:.1f} s, lazy {lazy:.1f} s: {eager / lazy:.2f}x, tables identical")
    write_result(
        "dp_rows",
        {
            "cases": rows,
            "eager_seconds": round(eager, 2),
            "lazy_seconds": round(lazy, 2),
            "ratio": round(eager / lazy, 3),
            "tables_identical": True,
            "numba_threads": 1,
        },
    )


if __name__ == "__main__":
    main()
