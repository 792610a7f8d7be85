"""PettingZoo AEC environments of both games (issue #43 item 5): PettingZoo's own `api_test` and `seed_test`
pass, actions are masked to the legal ones, and the Monitor's events arrive in `infos`."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import contractlang as cl
from contractlang.api.rl import contractsim_env, ctbench_env

WORKED = "examples/worked-example-1.contract"
SWAP = "examples/ctbench-board-24-swap.contract"


@pytest.mark.parametrize("make", [lambda: contractsim_env(WORKED, env=3), lambda: ctbench_env(SWAP, board=24)])
def test_pettingzoos_api_and_seed_tests_pass(make):
    api_test(make(), num_cycles=200)
    seed_test(make, num_cycles=50)


def test_a_masked_rational_customer_plays_and_the_monitors_events_arrive():
    env = contractsim_env(WORKED, env=1)
    env.reset(seed=42)
    kinds, final = set(), {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        kinds |= {e.get("type", e.get("kind")) for e in info["events"]}
        if terminated:
            final[agent] = reward
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        if agent == "customer":
            due, left = observation["observation"][3], observation["observation"][2]
            action = int(min(due, left))  # RC: pay what is due (eq. 7)
        else:
            action = int(legal[0])  # order and produce nothing
        assert action in legal
        env.step(action)
    assert {"payment", "delivery", "week_end"} <= kinds, kinds
    # the same game as RC against the non-engaging Supplier (RE: orders and produces nothing), played by `run`
    same = cl.play(WORKED, env=1, agents={"customer": "rc", "supplier": "re"}, seed=42).record
    assert final == same.outcome
