"""Benchmark: the paper's 80-board experiment offline, the authors' 80 boards × 4 conditions × 2 modes with
planner agents, once under each rule set (issue #32 target: under 2 minutes each on this machine).

    python bench/ctbench_paper_sweep.py [--rules authors|paper]   (default: both, one after the other)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result  # noqa: E402

from contractlang.vocab import RULE_SETS  # noqa: E402
from games.ctbench.board import benchmark_boards  # noqa: E402
from games.ctbench.metrics import summarise  # noqa: E402
from games.ctbench.play import CONDITIONS  # noqa: E402
from games.ctbench.sweep import GameSpec, run_specs  # noqa: E402

TARGET_SECONDS = 120


def sweep(rules: str) -> dict:
    specs = [
        GameSpec(board_id=b.id, board_set="paper", condition=c, mode=m, red="planner", blue="planner", rules=rules)
        for b in benchmark_boards("paper")
        for c in CONDITIONS
        for m in ("pfp", "trade")
    ]
    start, cpu = time.perf_counter(), _cpu_seconds()
    records = list(run_specs(specs))
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    rows = summarise(records)
    return {
        "rules": rules,
        "games": len(records),
        "seconds_all_cores": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),  # all processes: the wall time of an unloaded machine is about this / cores
        "meets_target": seconds < TARGET_SECONDS,
        "forfeits": sum(len(r.forfeited) for r in records),
        "rows": [{"condition": r.condition, "mode": r.mode, **{k: v.text() for k, v in r.cells.items()}} for r in rows],
    }


def _cpu_seconds() -> float:
    """CPU time of this process and of the finished worker processes it waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", choices=RULE_SETS, help="one rule set only (default: both)")
    args = parser.parse_args()
    runs = [sweep(r) for r in ([args.rules] if args.rules else RULE_SETS)]
    path = write_result(
        "ctbench_paper_sweep", {"target_seconds": TARGET_SECONDS, "runs": runs}, partial=args.rules is not None
    )
    for run in runs:
        print(
            f"ctbench paper sweep, {run['rules']} rules: {run['games']} games in {run['seconds_all_cores']:.1f} s "
            f"on all cores ({run['cpu_seconds']:.1f} CPU s); target < {TARGET_SECONDS} s -> "
            f"{'met' if run['meets_target'] else 'MISSED'}"
        )
    print(f"-> {path}")


if __name__ == "__main__":
    main()
