"""Shared benchmark plumbing: timing by best-of-N and atomic result files under bench/results/."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def best_of(fn, repeat: int = 5) -> float:
    """Fastest wall time of `repeat` calls: the least noisy estimate on a shared machine."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def write_result(name: str, payload: dict, partial: bool = False) -> Path:
    """Write bench/results/<name>.json by rename; a run over part of the benchmark (a chosen contract or
    environment) goes to <name>.partial.json, so it never replaces the full figures."""
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
               **payload}
    path = RESULTS / f"{name}{'.partial' if partial else ''}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(path)
    return path


def contractsim_examples(only: str | None = None) -> list:
    """The IR of every bundled ContractSim example (or just the one named `only`), in file order."""
    from contractlang import load

    return [c.ir for path in sorted((ROOT / "examples").glob("*.contract")) for c in load(path)
            if c.ir.kind == "contractsim" and only in (None, c.ir.name)]
