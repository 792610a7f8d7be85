"""Benchmark: the README's first `solve` on a fresh machine, cold and warm. Cold: numba's cache and the DP table
cache both empty (temporary NUMBA_CACHE_DIR and CONTRACTLANG_DP_CACHE), so the kernels compile before the first
table; warm: the same command again, the kernels loaded from that cache and the table re-solved (the table cache
emptied again). Each runs in a fresh process, as a user's command does; the load average is recorded beside."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

COMMAND = ["solve", "examples/worked-example-1.contract", "--env", "5"]


def timed(env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of the command in a fresh process: on a loaded machine the CPU time is what an idle
    one would take, about (the compilation is single-threaded)."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "contractlang", *COMMAND], cwd=ROOT, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return wall, cpu


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="cold-solve-"))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(scratch / "numba"), "CONTRACTLANG_DP_CACHE": str(scratch / "dp")}
    try:
        load_before = os.getloadavg()[0]
        cold = timed(env)
        shutil.rmtree(scratch / "dp")
        warm = timed(env)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = {
        "command": "contractlang " + " ".join(COMMAND),
        "cold_seconds": round(cold[0], 1),
        "warm_seconds": round(warm[0], 1),
        "cold_cpu_seconds": round(cold[1], 1),
        "warm_cpu_seconds": round(warm[1], 1),
        "compile_cpu_seconds": round(cold[1] - warm[1], 1),
        "load_average_1min": [round(load_before, 2), round(load_after, 2)],
    }
    print(result)
    write_result("cold_solve", result)


if __name__ == "__main__":
    main()
