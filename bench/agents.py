"""Benchmark (issue #43): what seating an agent through the registry costs. Per game, the same logic as a
built-in and as a `py:` agent (the built-in class loaded by spec, so only the seating differs: target within
1.5x), and a Python Customer as `py:` against the same file run as a `cmd:` program over JSON lines (target
>= 10x). ContractSim: Env 1, Example 1's contract against the RCC Supplier; CT-Bench: board 24 under its swap
contract against the planner. All ratios come from the same run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

from contractlang import load  # noqa: E402
from games.contractsim.environments import environment  # noqa: E402
from games.contractsim.play import play  # noqa: E402
from games.ctbench.board import benchmark_board  # noqa: E402
from games.ctbench.play import play as play_ctbench  # noqa: E402

STINGY = ROOT / "examples" / "agents" / "stingy.py"


def rates(configs: dict, games: dict, rounds: int = 3) -> dict:
    """Games per second of each configuration: the best of `rounds` rounds that take the configurations in turn
    (so load on a shared machine falls on all of them alike), after one warm-up game each."""
    for play_one in configs.values():
        play_one(0)
    best = dict.fromkeys(configs, 0.0)
    for _ in range(rounds):
        for name, play_one in configs.items():
            start = time.perf_counter()
            for seed in range(games[name]):
                play_one(seed)
            best[name] = max(best[name], games[name] / (time.perf_counter() - start))
    return best


def main() -> None:
    quick = os.environ.get("BENCH_QUICK") == "1"
    n = 40 if quick else 200
    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    env = environment(1)

    def contractsim(customer: str):
        return lambda seed: play(ir, env, customer, "rcc", seed=seed, keep_log=False)

    swap = load(ROOT / "examples" / "ctbench-board-24-swap.contract")[0].ir
    bench = benchmark_board(24)

    def ctbench(red: str):
        return lambda seed: play_ctbench(bench, "file", "pfp", red, "planner", seed=seed, contract=swap)

    configs = {
        "contractsim_builtin_rcc": contractsim("rcc"),
        "contractsim_py_rcc": contractsim("py:games.contractsim.agents:RCCCustomer"),
        "contractsim_py_stingy": contractsim(f"py:{STINGY}:Stingy"),
        "contractsim_cmd_stingy": contractsim(f"cmd:{sys.executable} {STINGY}"),
        "ctbench_builtin_planner": ctbench("planner"),
        "ctbench_py_planner": ctbench("py:games.ctbench.agents:CooperativePlanner"),
    }
    games = {name: n // 10 if "cmd" in name else n // 4 if "ctbench" in name else n for name in configs}
    figures = rates(configs, games)
    ratios = {
        "contractsim_builtin_over_py": figures["contractsim_builtin_rcc"] / figures["contractsim_py_rcc"],
        "ctbench_builtin_over_py": figures["ctbench_builtin_planner"] / figures["ctbench_py_planner"],
        "contractsim_py_over_cmd": figures["contractsim_py_stingy"] / figures["contractsim_cmd_stingy"],
    }
    payload = {
        "games_per_second": {k: round(v, 1) for k, v in figures.items()},
        "ratios": {k: round(v, 2) for k, v in ratios.items()},
        "targets": {"builtin_over_py_at_most": 1.5, "py_over_cmd_at_least": 10},
        "holds": ratios["contractsim_builtin_over_py"] <= 1.5
        and ratios["ctbench_builtin_over_py"] <= 1.5
        and ratios["contractsim_py_over_cmd"] >= 10,
    }
    path = write_result("agents", payload, partial=quick)
    print(
        f"ContractSim: built-in RCC {figures['contractsim_builtin_rcc']:,.0f} games/s, the same class as py: "
        f"{figures['contractsim_py_rcc']:,.0f} ({ratios['contractsim_builtin_over_py']:.2f}x); Stingy as py: "
        f"{figures['contractsim_py_stingy']:,.0f}, as cmd: {figures['contractsim_cmd_stingy']:,.1f} "
        f"({ratios['contractsim_py_over_cmd']:.0f}x). CT-Bench: built-in planner "
        f"{figures['ctbench_builtin_planner']:,.1f} games/s, as py: {figures['ctbench_py_planner']:,.1f} "
        f"({ratios['ctbench_builtin_over_py']:.2f}x). Targets hold: {payload['holds']} -> {path}"
    )


if __name__ == "__main__":
    main()
