"""Benchmark: simulated ContractSim games per second in Env 5 (issue #4 target: >= 2,000/s on one core
for RCC vs RCC, excluding the DP solve). Until the DP lands, the available pairings are measured; the
baseline in the same run is the same pairing recompiling the contract for every game."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

from contractlang import load  # noqa: E402
from games.contractsim import game as game_module  # noqa: E402
from games.contractsim.environments import environment  # noqa: E402
from games.contractsim.run import play  # noqa: E402


def rate(ir, customer, supplier, n) -> float:
    env = environment(5)
    play(ir, env, customer, supplier)
    start = time.perf_counter()
    for seed in range(n):
        play(ir, env, customer, supplier, seed=seed, keep_log=False)
    return n / (time.perf_counter() - start)


def main() -> None:
    ir = load(ROOT / "examples" / "catering-env5-a.contract")[0].ir
    rows = {f"{c} vs {s}": round(rate(ir, c, s, 1000)) for c, s in (("rcc", "random"), ("rc", "re"), ("re", "re"))}
    game_module._compiled.cache_clear()
    uncached = game_module._compiled.__wrapped__
    start = time.perf_counter()
    for seed in range(20):
        game_module._compiled.cache_clear()
        uncached(ir.base_units())
        play(ir, environment(5), "rcc", "random", seed=seed, keep_log=False)
    baseline = 20 / (time.perf_counter() - start)
    payload = {"games_per_second": rows, "recompiling_every_game": round(baseline),
               "ratio_rcc_vs_random_to_recompiling": round(rows["rcc vs random"] / baseline, 1),
               "target_games_per_second": 2000, "target_pairing": "rcc vs rcc (needs the DP order table, issue #5)"}
    path = write_result("contractsim_games", payload)
    print(f"contractsim games: {rows} games/s in Env 5 ({payload['ratio_rcc_vs_random_to_recompiling']}x "
          f"recompiling per game at {baseline:.0f}/s); target 2,000/s for rcc vs rcc -> {path}")


if __name__ == "__main__":
    main()
