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
    """For each production week in order and each input I1, I2, I3: the spoilage shock, the price (from
    one uniform against the law's cumulative probabilities) and the receipt uniform ([CS-11])."""
    cumulative = [np.cumsum([prob for _, prob in law]) for law in env.price_laws]
    weeks = []
    for _ in range(5):
        spoil, prices, uniforms = [], [], []
        for x, law in enumerate(env.price_laws):
            spoil.append(int(rng.integers(0, env.spoilage_max + 1)))
            k = int(np.searchsorted(cumulative[x], rng.random(), side="right"))
            prices.append(int(law[min(k, len(law) - 1)][0]))
            uniforms.append(float(rng.random()))
        weeks.append(WeekShocks(spoilage=tuple(spoil), prices=tuple(prices), receipt_uniform=tuple(uniforms)))
    return Shocks(weeks=tuple(weeks))
