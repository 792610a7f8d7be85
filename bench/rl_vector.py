"""Benchmark: environment steps per second of the vectorised ContractSim environment on one core (target
≥ 1,000,000), against the PettingZoo AEC loop measured in the same run (target ≥ 150×). A step is one decision
of the learning seat (a Supplier: an order or a production; the RCC Customer's payments happen inside it);
the AEC loop counts every agent's step. The vectorised loop feeds precomputed actions, the others draw a legal
one per step. Rates are per CPU second of this process (`time.process_time`, one thread), so that the other
processes of a shared machine do not count against it; the wall-clock rates are written beside them."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core, as the target says
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import ROOT, write_result  # noqa: E402

from contractlang.api.rl import contractsim_env, contractsim_gym, contractsim_vector_env  # noqa: E402

CONTRACT = str(ROOT / "examples" / "worked-example-1.contract")
ENV = 5


class Rate:
    """Steps counted against the CPU time and the wall time since it was made."""

    def __init__(self):
        self.steps, self.cpu, self.wall = 0, time.process_time(), time.perf_counter()

    def running(self, seconds: float) -> bool:
        return time.process_time() - self.cpu < seconds

    def per_second(self) -> tuple[float, float]:
        return self.steps / (time.process_time() - self.cpu), self.steps / (time.perf_counter() - self.wall)


def vector_rate(num_envs: int, seconds: float = 3.0) -> tuple[float, float]:
    env = contractsim_vector_env(CONTRACT, env=ENV, num_envs=num_envs, role="supplier", opponent="rcc", seed=0)
    env.reset(seed=0)
    pool = np.random.default_rng(0).integers(0, 13**3, size=(64, num_envs))  # random indices; masked ones fall back
    env.step(pool[0])  # compiled already: this loads the kernels
    rate = Rate()
    while rate.running(seconds):
        for actions in pool:
            env.step(actions)
        rate.steps += len(pool) * num_envs
    return rate.per_second()


def aec_rate(env, seconds: float = 3.0) -> tuple[float, float]:
    """Every agent's steps of the AEC environment `env`, each a legal action drawn at random."""
    rng, seed, rate = np.random.default_rng(0), 0, Rate()
    while rate.running(seconds):
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else rng.choice(np.flatnonzero(observation["action_mask"])))
            rate.steps += 1
    return rate.per_second()


def gym_rate(env, seconds: float = 3.0) -> tuple[float, float]:
    """The learner's steps of the gym environment `env`, each a legal action drawn at random."""
    rng, seed, rate = np.random.default_rng(0), 0, Rate()
    while rate.running(seconds):
        observation, _ = env.reset(seed=seed)
        seed += 1
        done = False
        while not done:
            observation, _, done, _, _ = env.step(rng.choice(np.flatnonzero(observation["action_mask"])))
            rate.steps += 1
    return rate.per_second()


def main() -> None:
    load = os.getloadavg()[0]
    vector = {n: vector_rate(n) for n in (256, 1024, 4096)}
    best = max(vector, key=lambda n: vector[n][0])
    aec = aec_rate(contractsim_env(CONTRACT, env=ENV))
    single = gym_rate(contractsim_gym(CONTRACT, env=ENV, role="supplier", opponent="rcc"))
    payload = {
        "contract": "worked-example-1",
        "env": ENV,
        "seat": "supplier against the RCC Customer",
        "vector_steps_per_cpu_second": round(vector[best][0]),
        "vector_num_envs": best,
        **{f"vector_steps_per_cpu_second_{n}": round(v[0]) for n, v in vector.items()},
        "aec_steps_per_cpu_second": round(aec[0]),
        "gym_steps_per_cpu_second": round(single[0]),
        "vector_to_aec": round(vector[best][0] / aec[0], 1),
        # a game is 10 Supplier steps in the vectorised loop, 18 AEC steps (6 payments, 10 Supplier moves, 2 dead
        # steps): the same comparison in whole games played per CPU second
        "vector_to_aec_games": round((vector[best][0] / 10) / (aec[0] / 18), 1),
        "vector_to_gym": round(vector[best][0] / single[0], 1),  # the same step: one Supplier decision
        "vector_steps_per_wall_second": round(vector[best][1]),
        "aec_steps_per_wall_second": round(aec[1]),
        "target_steps_per_second": 1_000_000,
        "target_vector_to_aec": 150,
        "load_average_1min_before": round(load, 2),
        "note": "one thread (NUMBA_NUM_THREADS=1), masks computed every step, on a machine other engineers shared",
    }
    path = write_result("rl_vector", payload)
    print(
        f"rl vector: {vector[best][0]:,.0f} steps per CPU second at {best} games "
        f"({', '.join(f'{n}: {v[0]:,.0f}' for n, v in vector.items())}); AEC loop {aec[0]:,.0f}, single gym env "
        f"{single[0]:,.0f}; vector/AEC {payload['vector_to_aec']}x in steps, {payload['vector_to_aec_games']}x in games (targets 1,000,000 steps/s, 150x); wall "
        f"{vector[best][1]:,.0f} and {aec[1]:,.0f} steps/s; load {load:.2f} -> {path}"
    )


if __name__ == "__main__":
    main()
