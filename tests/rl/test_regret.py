"""Regret against the exact optimum: a policy's mean utility over seeded games with its interval, beside the
DP's exact expected utility for the seat, which the batch engine's own games of the rational seat confirm."""

from __future__ import annotations

import numpy as np
import pytest

import contractlang as cl
from contractlang.api.rl import EnvInputError, evaluate_policy
from games.contractsim.batch import play_batch
from games.contractsim.environments import environment

WORKED = "examples/worked-example-1.contract"


def never_engage(observation):
    """RE (ContractSim paper, App. C.1): order and produce nothing."""
    return np.zeros(len(observation["observation"]), dtype=np.int64)


def test_a_supplier_that_never_engages_keeps_the_first_payment_and_its_regret_is_the_rest():
    value = evaluate_policy(WORKED, 3, never_engage, role="supplier", opponent="rcc", games=50)
    # the RCC Customer pays week 1's $18, sees the breach of week 2 and pays nothing more: every game alike
    assert (value.mean, value.low, value.high) == (18.0, 18.0, 18.0)
    exact = cl.solve(WORKED, env=3).u_supplier
    assert value.optimum == pytest.approx(exact) and value.regret == pytest.approx(exact - 18.0)
    assert value.ratio == pytest.approx(18.0 / exact)
    assert value.breaches == 1.0  # week 2's delivery is missed in every game


def test_the_optimum_is_what_the_rational_seat_earns_on_average():
    value = evaluate_policy(WORKED, 3, never_engage, games=2)
    ir = cl.load(WORKED)[0].ir
    played = [r.u_supplier for r in play_batch(ir, environment(3), "rcc", "rcc", range(1000))]
    mean, half = np.mean(played), 4 * np.std(played, ddof=1) / np.sqrt(len(played))
    assert abs(value.optimum - mean) < half


def test_seats_without_an_exact_value_and_too_few_games_are_refused():
    with pytest.raises(EnvInputError, match=r"no exact value for the customer against 're'"):
        evaluate_policy(WORKED, 3, never_engage, role="customer", opponent="re")
    with pytest.raises(EnvInputError, match=r"games: 1"):
        evaluate_policy(WORKED, 3, never_engage, games=1)
