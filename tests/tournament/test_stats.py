"""The tournament's statistics on hand-computed cases and by simulation."""

from __future__ import annotations

import math

import numpy as np

from games.tournament.seats import SeatOutcome
from games.tournament.stats import Gates, Sequential, bradley_terry, ratings, t_interval, units_needed


def test_t_interval_by_hand():
    # mean 2, sd 1, n 3: half width t_{0.975, 2} · 1 / √3 = 4.302653 / 1.732051 = 2.484138
    i = t_interval([1.0, 2.0, 3.0, None])
    assert i.n == 3 and i.mean == 2.0
    assert math.isclose(i.high - 2.0, 2.484138, rel_tol=1e-6) and math.isclose(2.0 - i.low, 2.484138, rel_tol=1e-6)


def test_bradley_terry_recovers_the_odds_of_two_agents():
    # a beats b 30 times and loses 10: θ_a − θ_b = log 3 (up to the small ridge)
    theta = bradley_terry(np.array([[0.0, 30.0], [10.0, 0.0]]))
    assert abs((theta[0] - theta[1]) - math.log(3)) < 0.01 and abs(theta.sum()) < 1e-9


def test_a_paired_difference_is_separated_only_when_it_is_there():
    rng = np.random.default_rng(3)
    seats = []
    for u in range(30):
        world = rng.normal(0, 50)  # the unit's shock, common to both agents: pairing removes it
        for agent, edge in (("a", 2.0), ("b", 0.0), ("c", 2.0)):
            seats.append(
                SeatOutcome(
                    role="customer", agent=agent, opponent="x", unit=f"u{u}", utility=world + edge + rng.normal(0, 1)
                )
            )
    rated, pairs = ratings(seats, "customer", resamples=300)
    by = {(p.a, p.b): p for p in pairs}
    assert by[("a", "b")].separated and by[("a", "b")].difference.low > 0
    assert not by[("a", "c")].separated
    # the units' shocks swamp the means, so the unpaired utility intervals overlap: a tie
    assert {r.agent: r.rank for r in rated} == {"a": 1, "b": 1, "c": 1}
    assert by[("a", "b")].p_beats.mean > 0.8


def test_the_sequential_rule_keeps_its_error_rate_under_no_difference():
    """With no difference, repeated t-tests at α/K over K looks declare one in at most α of the runs; testing
    each look at α instead would exceed it."""
    rule, naive = Sequential(alpha=0.05, looks=5), Sequential(alpha=0.05, looks=1)
    runs, per_look = 20000, 6
    xs = np.random.default_rng(0).normal(0, 1, size=(runs, per_look * rule.looks))
    looks = [xs[:, : per_look * (k + 1)] for k in range(rule.looks)]
    declared = np.any([rule.separated(x) for x in looks], axis=0).mean()
    assert declared <= 0.05
    assert np.any([naive.separated(x) for x in looks], axis=0).mean() > 0.05
    # and with a real difference of one standard deviation it separates nearly always
    assert np.any([rule.separated(x + 1.0) for x in looks], axis=0).mean() > 0.95


def test_units_needed_matches_the_one_sample_t_test_table():
    # effect size 0.5 at α 0.05 two-sided and 80 % power: 34 (Cohen's tables; G*Power)
    assert units_needed(sd=2.0, detect=1.0) == 34


def test_gates_mark_a_cell_with_too_many_fallbacks_or_errors():
    seat = SeatOutcome(
        role="customer", agent="m", opponent="rcc", unit="u", utility=1.0, decisions=6, fallbacks=2, llm=True
    )
    gates = Gates(max_fallback=0.2, max_errors=0.1).check([seat] * 4, {("supplier", "m", "rcc"): 1})
    reasons = {(g.role, g.agent, g.opponent): g.reason for g in gates}
    assert "33% of its answers fell back" in reasons[("customer", "m", "rcc")]
    assert "100% of its games errored" in reasons[("supplier", "m", "rcc")]
    assert Gates(max_fallback=0.5).check([seat], {}) == []


def test_a_rating_averages_each_regret_over_opponents_then_units():
    # unit u0: compliant regrets 2 (against x) and 4 (against y), mean 3; unit u1: 1 (against x). Over the units:
    # (3 + 1) / 2 = 2, and every resample's mean lies between the units' 1 and 3. The plain regrets, −1 and −5,
    # stay apart: (−3 − 1) / 2 = −2.
    seats = [
        SeatOutcome(role="customer", agent="a", opponent=o, unit=u, utility=0.0, regret=r, compliant_regret=c)
        for o, u, r, c in (("x", "u0", -1.0, 2.0), ("y", "u0", -5.0, 4.0), ("x", "u1", -1.0, 1.0))
    ]
    [rating], _ = ratings(seats, "customer", resamples=200)
    assert rating.compliant_regret.mean == 2.0 and rating.compliant_regret.n == 2
    assert 1.0 <= rating.compliant_regret.low <= 2.0 <= rating.compliant_regret.high <= 3.0
    assert rating.regret.mean == -2.0
