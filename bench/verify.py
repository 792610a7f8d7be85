"""Benchmark: every verifier check on every bundled ContractSim example in all six environments
(issue #6 target: <= 0.5 s per contract per environment). Baseline in the same run: parse + check."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, best_of, write_result  # noqa: E402

from contractlang import check_source, load  # noqa: E402
from games.contractsim.environments import ENVIRONMENTS  # noqa: E402
from solver.verify import verify  # noqa: E402


def main() -> None:
    rows = []
    for path in sorted((ROOT / "examples").glob("*.contract")):
        for checked in load(path):
            if checked.ir.kind != "contractsim":
                continue
            for env in ENVIRONMENTS.values():
                start = time.perf_counter()
                report = verify(checked, env=env)
                seconds = time.perf_counter() - start
                rows.append(
                    {
                        "contract": checked.ir.name,
                        "env": env.id,
                        "seconds": round(seconds, 4),
                        "statuses": {c.name: c.status for c in report.checks},
                    }
                )
    text = (ROOT / "examples" / "catering-env5-a.contract").read_text()
    check_s = best_of(lambda: check_source(text, "x"), repeat=20)
    times = [r["seconds"] for r in rows]
    payload = {
        "pairs": len(rows),
        "median_seconds": round(statistics.median(times), 4),
        "max_seconds": round(max(times), 4),
        "ratio_median_to_parse_and_check": round(statistics.median(times) / check_s, 1),
        "unknown": sum(s == "unknown" for r in rows for s in r["statuses"].values()),
        "target_seconds": 0.5,
        "meets_target": max(times) <= 0.5,
        "rows": rows,
    }
    path = write_result("verify", payload)
    print(
        f"verify: {len(rows)} (contract, env) pairs, median {payload['median_seconds']} s, max "
        f"{payload['max_seconds']} s ({payload['ratio_median_to_parse_and_check']}x parse+check of one contract); "
        f"{payload['unknown']} unknown; target <= 0.5 s -> {path}"
    )


if __name__ == "__main__":
    main()
