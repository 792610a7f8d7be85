"""Benchmark: simulated ContractSim games per second in Env 5 (issue #4 target: >= 2,000/s on one core for
RCC vs RCC, excluding the DP solve). The batch engine is measured against the reference engine
(`run.play`, immutable states and the interpreter's monitor) on the same games in the same run."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core, as the target says
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

from contractlang import load  # noqa: E402
from games.contractsim.batch import play_batch  # noqa: E402
from games.contractsim.environments import environment  # noqa: E402
from games.contractsim.play import play  # noqa: E402


def main() -> None:
    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    env = environment(5)
    play_batch(ir, env, "rcc", "rcc", range(10))  # solve the table and load the compiled kernel first
    n_batch, n_ref = 20_000, 1_000
    start = time.perf_counter()
    play_batch(ir, env, "rcc", "rcc", range(n_batch))
    batch = n_batch / (time.perf_counter() - start)
    start = time.perf_counter()
    for seed in range(n_ref):
        play(ir, env, "rcc", "rcc", seed=seed, keep_log=False)
    reference = n_ref / (time.perf_counter() - start)
    payload = {
        "contract": ir.name,
        "env": 5,
        "pairing": "rcc vs rcc",
        "batch_games_per_second": round(batch),
        "reference_games_per_second": round(reference),
        "batch_to_reference": round(batch / reference, 1),
        "target_games_per_second": 2000,
    }
    path = write_result("contractsim_games", payload)
    print(
        f"contractsim games: RCC vs RCC in Env 5, batch engine {batch:,.0f} games/s, reference engine "
        f"{reference:,.0f} games/s ({payload['batch_to_reference']}x); target 2,000/s -> {path}"
    )


if __name__ == "__main__":
    main()
