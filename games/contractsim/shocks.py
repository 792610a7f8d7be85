"""Exogenous shocks with common random numbers ([CS-11]): one seeded stream, pre-drawn in a fixed
layout, so a counterfactual run with another policy faces the same prices, losses and spoilage."""

from __future__ import annotations

import numpy as np

from contractlang.vocab import Frozen
from solver.environment import SupplyEnvironment


class WeekShocks(Frozen):
    spoilage: tuple[int, int, int]
    prices: tuple[int, int, int]
    receipt_uniform: tuple[float, float, float]


class Shocks(Frozen):
    weeks: tuple[WeekShocks, ...]  # production weeks 2, 4, 6, 8, 10

    def receipt(self, env: SupplyEnvironment, round_index: int, input_index: int, ordered: int) -> int:
        """r = lo + ⌊U·(x − lo + 1)⌋, uniform on lo..x ([CS-11])."""
        lo = env.receipt_low(ordered)
        u = self.weeks[round_index].receipt_uniform[input_index]
        return lo + int(u * (ordered - lo + 1))


def draw_shocks(env: SupplyEnvironment, rng: np.random.Generator) -> Shocks:
    """For each production week in order and each input I1, I2, I3: one uniform each for the spoilage
    shock (⌊U·(s_max+1)⌋, uniform on 0..s_max), the price (against the law's cumulative probabilities)
    and the receipt ([CS-11]); drawn as one (5, 3, 3) block in exactly that order."""
    u = rng.random(size=(5, 3, 3))
    spoilage = np.floor(u[..., 0] * (env.spoilage_max + 1)).astype(int)
    prices = np.empty((5, 3), dtype=int)
    for x, law in enumerate(env.price_laws):
        values = np.array([v for v, _ in law])
        k = np.searchsorted(np.cumsum([prob for _, prob in law]), u[:, x, 1], side="right")
        prices[:, x] = values[np.minimum(k, len(law) - 1)]
    return Shocks(
        weeks=tuple(
            WeekShocks(
                spoilage=tuple(int(v) for v in spoilage[t]),
                prices=tuple(int(v) for v in prices[t]),
                receipt_uniform=tuple(float(v) for v in u[t, :, 2]),
            )
            for t in range(5)
        )
    )
