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


LOCAL = RESULTS / "local"
"""Where a run writes unless BENCH_UPDATE=1 asks it to replace the committed figures (git ignores it)."""


def write_result(name: str, payload: dict, partial: bool = False) -> Path:
    """Write <name>.json by rename, under bench/results/ with BENCH_UPDATE=1 (the committed figures) and under
    bench/results/local/ otherwise, so trying a benchmark never dirties the tree; a run over part of the
    benchmark (a chosen contract or environment) goes to <name>.partial.json, never replacing the full figures."""
    folder = RESULTS if os.environ.get("BENCH_UPDATE") == "1" else LOCAL
    folder.mkdir(parents=True, exist_ok=True)
    payload = {"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(), **payload}
    path = folder / f"{name}{'.partial' if partial else ''}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(path)
    return path


def contractsim_examples(only: str | None = None) -> list:
    """The IR of every bundled ContractSim example (or just the one named `only`), in file order."""
    from contractlang import load

    return [
        c.ir
        for path in sorted((ROOT / "examples").glob("*.contract"))
        for c in load(path)
        if c.ir.kind == "contractsim" and only in (None, c.ir.name)
    ]
