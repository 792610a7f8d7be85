"""The learning curve the training examples share: each policy measured on the same held-out games against the
exact optimum (the DP's value of the rational Supplier, ContractSim paper, App. C.1), written as curve.json and
drawn as curve.png with the optimum as a line."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from contractlang.api.rl import evaluate_policy

CONTRACT = Path(__file__).resolve().parents[1] / "worked-example-1.contract"
HELD_OUT = 1000  # the games every policy of the curve is measured on
HELD_OUT_SEED = 10**6  # far from the seeds training draws games from


class Curve:
    """The points of one training run: CPU time of this process since the curve was made, environment steps, and
    the policy's mean utility on the held-out games with its 95 % interval and breach share."""

    def __init__(self, env: int, learner: str):
        self.env, self.learner = env, learner
        self.points: list[dict] = []
        self.optimum: float | None = None
        self.reached: dict | None = None
        self.start, self.wall = time.process_time(), time.perf_counter()

    def seconds(self) -> float:
        return time.process_time() - self.start

    def measure(self, policy: Callable[[dict], np.ndarray], steps: int) -> None:
        """`policy` (a batch of observations → one action per game) on the held-out games, as the next point."""
        value = evaluate_policy(CONTRACT, self.env, policy, games=HELD_OUT, seed=HELD_OUT_SEED)
        self.optimum = value.optimum
        seconds = round(self.seconds(), 2)
        point = {"cpu_seconds": seconds, "steps": steps, "mean": value.mean, "low": value.low, "high": value.high}
        self.points.append({**point, "breaches": value.breaches})
        if self.reached is None and value.mean >= 0.9 * value.optimum:
            self.reached = {"cpu_seconds": seconds, "steps": steps, "mean": value.mean}
        print(
            f"{seconds:7.1f} s  {steps:>11,} steps  mean {value.mean:7.2f} [{value.low:.2f}, {value.high:.2f}]  "
            f"breaches {value.breaches:.1%}  optimum {value.optimum:.2f}",
            flush=True,
        )

    def write(self, out: Path, **settings) -> dict:
        """curve.json (the curve, the optimum, when 90 % of it was first reached, `settings`) and curve.png in
        `out`; the JSON is written whole and renamed, so an interrupted run leaves no half-written curve."""
        last = self.points[-1]
        summary = {
            "contract": CONTRACT.name,
            "env": self.env,
            "seat": "supplier against the RCC Customer",
            "learner": self.learner,
            **settings,
            "optimum": self.optimum,
            "reached_90_percent_cpu_seconds": self.reached and self.reached["cpu_seconds"],
            "reached_90_percent_steps": self.reached and self.reached["steps"],
            "final_mean": last["mean"],
            "final_breaches": last["breaches"],
            "best_mean": max(p["mean"] for p in self.points),
            "cpu_seconds": last["cpu_seconds"],
            "wall_seconds": round(time.perf_counter() - self.wall, 1),
            "steps": last["steps"],
            "load_average_1min": round(os.getloadavg()[0], 2),
            "curve": self.points,
        }
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "curve.json.tmp"
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        tmp.replace(out / "curve.json")
        draw(summary, out / "curve.png")
        print(f"90 % of the optimum: {self.reached or 'not reached'}; wrote {out}/curve.json and curve.png")
        return summary


def draw(summary: dict, path: Path) -> None:
    """The learning curve on held-out games, its 95 % band, and the DP's exact value of the rational Supplier."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve, optimum = summary["curve"], summary["optimum"]
    fig, ax = plt.subplots(figsize=(7, 4))
    x = [p["steps"] for p in curve]
    ax.plot(x, [p["mean"] for p in curve], label=f"{summary['learner']} (held-out games)")
    ax.fill_between(x, [p["low"] for p in curve], [p["high"] for p in curve], alpha=0.3)
    ax.axhline(optimum, color="black", linestyle="--", label="exact value of the rational (compliant) Supplier")
    ax.axhline(0.9 * optimum, color="grey", linestyle=":", label="90 % of it")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("Supplier utility (base $)")
    ax.set_title(f"{summary['contract']}, Env {summary['env']}: Supplier against the RCC Customer")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
