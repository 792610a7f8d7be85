"""Benchmark: the full offline CT-Bench sweep, 80 boards × 4 conditions × 2 modes with planner agents
(issue #7 target: under 2 minutes). Baseline in the same run: the same games in one process."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result  # noqa: E402

from games.ctbench.board import benchmark_boards  # noqa: E402
from games.ctbench.metrics import summarise  # noqa: E402
from games.ctbench.play import CONDITIONS  # noqa: E402
from games.ctbench.sweep import GameSpec, run_specs  # noqa: E402


def main() -> None:
    specs = [
        GameSpec(board_id=b.id, condition=c, mode=m, red="planner", blue="planner")
        for b in benchmark_boards()
        for c in CONDITIONS
        for m in ("pfp", "trade")
    ]
    start = time.perf_counter()
    records = list(run_specs(specs))
    parallel_s = time.perf_counter() - start
    start = time.perf_counter()
    list(run_specs(specs[:80], workers=1))
    serial_s = (time.perf_counter() - start) * len(specs) / 80
    independent = [r for r in records if r.board_class == "independent"]
    both_finished_independent = sum(len(r.finished) == 2 for r in independent) / len(independent)
    rows = summarise(records)
    payload = {
        "games": len(records),
        "seconds_all_cores": round(parallel_s, 2),
        "seconds_one_process_estimated": round(serial_s, 2),
        "speedup_vs_one_process": round(serial_s / parallel_s, 2),
        "both_finished_independent": both_finished_independent,
        "target_seconds": 120,
        "meets_target": parallel_s < 120,
        "rows": [{"condition": r.condition, "mode": r.mode, **{k: v.text() for k, v in r.cells.items()}} for r in rows],
    }
    path = write_result("ctbench_sweep", payload)
    print(
        f"ctbench sweep: {len(records)} games in {parallel_s:.1f} s on all cores ({payload['speedup_vs_one_process']}x "
        f"one process, est. {serial_s:.1f} s); Both Finished on Independent boards {both_finished_independent:.2f}; "
        f"target < 120 s -> {path}"
    )


if __name__ == "__main__":
    main()
