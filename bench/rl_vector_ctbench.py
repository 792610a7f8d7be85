"""Benchmark: environment steps per second of the vectorised CT-Bench environment on one core, against each
compiled opponent (planner, conditional, exploiter), and the PettingZoo AEC loop and the single-game gym
environment measured in the same run. A step is one decision of the learning player (P-Red: an offer or none, an
answer, a move, an honour; the opponent's decisions happen inside it); the AEC loop counts both players' steps,
both random, and the gym environment the same step as the vector against the same planner (the ratio of like to
like). Every loop plays a legal action drawn at random (in the vector, the
argmax of the mask plus noise drawn beforehand: that policy's cost counts against the rate), on the board-24
swap contract in Pay-for-Partner mode under the authors' rules. An opponent the engine cannot compile (here the
seeded random player) is played game by game in Python behind the same API: its rate is measured too. Rates are
per CPU second of this process (`time.process_time`, one thread); the wall-clock rates are written beside them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core, as the target says
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import ROOT, write_result  # noqa: E402
from rl_vector import Rate, aec_rate, gym_rate  # noqa: E402

from contractlang.api.rl import CTBENCH_ACTIONS, ctbench_env, ctbench_gym, ctbench_vector_env  # noqa: E402

CONTRACT = str(ROOT / "examples" / "ctbench-board-24-swap.contract")
BOARD = 24
OPPONENTS = ("planner", "conditional", "exploiter")


def vector_rate(num_envs: int, opponent: str = "planner", seconds: float = 2.0) -> tuple[float, float]:
    env = ctbench_vector_env(CONTRACT, BOARD, num_envs, role="red", opponent=opponent, seed=0)
    observations, _ = env.reset(seed=0)
    noise = np.random.default_rng(0).random((8, num_envs, len(CTBENCH_ACTIONS)), dtype=np.float32)
    env.step(np.zeros(num_envs, np.int64))  # compiled already: this loads the kernels
    rate, k = Rate(), 0
    while rate.running(seconds):
        observations, *_ = env.step(np.argmax(observations["action_mask"] + noise[k % 8], axis=1))
        rate.steps += num_envs
        k += 1
    return rate.per_second()


def main() -> None:
    load = os.getloadavg()[0]
    sizes = (256, 1024, 4096)
    planner = {n: vector_rate(n) for n in sizes}
    best = max(planner, key=lambda n: planner[n][0])
    others = {o: vector_rate(best, o) for o in OPPONENTS[1:]}
    one_by_one = vector_rate(64, "random", seconds=3.0)
    aec = aec_rate(ctbench_env(CONTRACT, board=BOARD))
    single = gym_rate(ctbench_gym(CONTRACT, board=BOARD, role="red", opponent="planner"))
    payload = {
        "contract": "board-24-swap",
        "board": BOARD,
        "mode": "pfp",
        "rules": "authors",
        "seat": "P-Red learning against the planner",
        "vector_steps_per_cpu_second": round(planner[best][0]),
        "vector_num_envs": best,
        **{f"vector_steps_per_cpu_second_{n}": round(v[0]) for n, v in planner.items()},
        **{f"vector_steps_per_cpu_second_{o}": round(v[0]) for o, v in others.items()},
        "vector_steps_per_cpu_second_random_game_by_game": round(one_by_one[0]),
        "aec_steps_per_cpu_second": round(aec[0]),
        "gym_steps_per_cpu_second": round(single[0]),
        "vector_to_aec": round(planner[best][0] / aec[0], 1),
        "vector_to_gym": round(planner[best][0] / single[0], 1),  # the same step: one decision of P-Red
        "vector_steps_per_wall_second": round(planner[best][1]),
        "aec_steps_per_wall_second": round(aec[1]),
        "load_average_1min_before": round(load, 2),
        "note": "one thread (NUMBA_NUM_THREADS=1), masks computed every step, on a machine other engineers shared",
    }
    path = write_result("rl_vector_ctbench", payload)
    print(
        f"rl vector ctbench: {planner[best][0]:,.0f} steps per CPU second at {best} games against the planner "
        f"({', '.join(f'{n}: {v[0]:,.0f}' for n, v in planner.items())}; "
        f"{', '.join(f'{o} {v[0]:,.0f}' for o, v in others.items())}); random opponent game by game "
        f"{one_by_one[0]:,.0f}; AEC loop {aec[0]:,.0f}, single gym env {single[0]:,.0f}; vector/AEC "
        f"{payload['vector_to_aec']}x, vector/gym "
        f"{payload['vector_to_gym']}x; wall {planner[best][1]:,.0f} and {aec[1]:,.0f} steps/s; load {load:.2f} -> {path}"
    )


if __name__ == "__main__":
    main()
