"""Benchmark: production-week evaluations per second (issue #3 target: >= 1,000,000/s vectorised).

Both paths call the same `evaluate_round`; the baseline, measured in the same run, is one call per
(memory, delivery) pair, which is what a non-vectorised solver would do.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _common import best_of, write_result  # noqa: E402

from contractlang.interpreter.rounds import RoundRules, evaluate_round  # noqa: E402


def main() -> None:
    rules = RoundRules(
        mode="PDRO",
        substitution_min=(1, 1, 1),
        deduction_min=(1, 1, 1),
        max_deficit=2,
        prices=(10, 5, 3),
        schedule=((2, 2, 2),) * 5,
    )
    memory = rules.memory_states()
    axis = np.arange(11)
    y = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3)
    batch = memory.shape[0] * y.shape[0]
    vec_s = best_of(lambda: [evaluate_round(rules, t, memory[:, None, :], y[None]) for t in range(5)], repeat=5)
    vec_rate = 5 * batch / vec_s
    sample = y[:200]
    one_s = best_of(lambda: [evaluate_round(rules, 0, memory[0], row) for row in sample], repeat=3)
    one_rate = len(sample) / one_s
    payload = {
        "batch_per_call": batch,
        "vectorised_evals_per_second": round(vec_rate),
        "single_call_evals_per_second": round(one_rate),
        "ratio_vectorised_to_single_call": round(vec_rate / one_rate, 1),
        "target_evals_per_second": 1_000_000,
        "meets_target": vec_rate >= 1_000_000,
    }
    path = write_result("rounds", payload)
    print(
        f"rounds: {vec_rate:,.0f} evaluations/s vectorised ({payload['ratio_vectorised_to_single_call']}x the "
        f"one-call-per-week path at {one_rate:,.0f}/s); target >= 1,000,000/s -> {path}"
    )


if __name__ == "__main__":
    main()
