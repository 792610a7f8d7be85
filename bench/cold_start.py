"""Benchmark: the first `experiment performance --agent rcc` from a clone (no DP table on disk) against the same
run with every table on disk (issue #46, item 5).

Both runs are real processes on the shipped set, each into an empty `--out` (so the agent games are played
both times; the rational records come from the set's own store, as on a clone) with one DP cache directory
that starts empty: the first run solves every table it needs, the second finds them. The slice defaults to
one target ρ, which keeps every environment and contingency variant (the solve time depends on both). The
full set's figures are extrapolated per contract at the slice's load (180 × the slice's seconds a contract,
cold and warm), and for a quiet machine from the measured quiet warm run (bench/results/performance.json) plus
180 tables at the quiet solve time (`QUIET_SECONDS_PER_TABLE`). The load average is recorded beside the times,
since the machine is shared.
Usage: python3 bench/cold_start.py [--rhos 0.7] [--contracts GLOB] [--workers 2]
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

from _common import RESULTS, ROOT, write_result  # noqa: E402

sys.path.insert(0, str(ROOT))

SET_SIZE = 180


def timed_run(slice_args: list[str], out: Path, cache: Path, workers: int) -> dict:
    """One `experiment performance --agent rcc` on the slice into `out`, with `cache` as the DP cache: its wall
    time, the load average at its end, the games it played and the tables it solved (files the cache gained)."""
    before = len(list(cache.rglob("*"))) if cache.exists() else 0
    env = {**os.environ, "CONTRACTLANG_DP_CACHE": str(cache)}
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "contractlang",
            "experiment",
            "performance",
            "--agent",
            "rcc",
            *slice_args,
            "--out",
            str(out),
            "--workers",
            str(workers),
            "--json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    report = json.loads(done.stdout)
    return {
        "seconds": round(seconds, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "contracts": report["contracts"],
        "agent_games": report["played_now"]["agents"],
        "rational_jobs": report["played_now"]["rational"],
        "cache_files_added": len(list(cache.rglob("*"))) - before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rhos", default="0.7", help="the slice's target ρ (default 0.7: 36 contracts)")
    parser.add_argument("--contracts", help="a name glob instead of --rhos, e.g. 'synth-env5-*'")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    slice_args = ["--contracts", args.contracts] if args.contracts else ["--rhos", args.rhos]
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        cache = Path(tmp) / "dp"
        cold = timed_run(slice_args, Path(tmp) / "cold", cache, args.workers)
        warm = timed_run(slice_args, Path(tmp) / "warm", cache, args.workers)
    from games.experiments.rational import QUIET_SECONDS_PER_TABLE

    n = cold["contracts"]
    quiet_warm = json.loads((RESULTS / "performance.json").read_text())["performance"]["seconds"]
    payload = {
        "slice": " ".join(slice_args),
        "workers": args.workers,
        "cold": cold,
        "warm": warm,
        "solve_seconds_per_contract": round((cold["seconds"] - warm["seconds"]) / n, 1),
        "full_set_at_this_load": {
            "contracts": SET_SIZE,
            "cold_seconds": round(SET_SIZE * cold["seconds"] / n),
            "warm_seconds": round(SET_SIZE * warm["seconds"] / n),
        },
        "full_set_quiet": {
            "warm_seconds": quiet_warm,
            "cold_seconds": round(quiet_warm + SET_SIZE * QUIET_SECONDS_PER_TABLE),
            "note": "warm measured (bench/results/performance.json); cold = warm + 180 tables "
            f"at {QUIET_SECONDS_PER_TABLE} s (issue #46's quiet figure)",
        },
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    path = write_result("cold_start", payload)
    full = payload["full_set_at_this_load"]
    print(
        json.dumps(payload, indent=1)
        if args.json
        else f"{n} contracts: cold {cold['seconds']} s, warm {warm['seconds']} s (load {cold['load_average_1min']}, "
        f"{warm['load_average_1min']}); the full set at this load ≈ {full['cold_seconds']} s cold, "
        f"{full['warm_seconds']} s warm; quiet ≈ {payload['full_set_quiet']['cold_seconds']} s cold; {path}"
    )


if __name__ == "__main__":
    main()
