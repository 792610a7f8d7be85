"""PettingZoo Parallel environments: PettingZoo's own tests pass, every agent has the same padded spaces with a
role feature, and the game played is the one `cl.play` plays."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

import contractlang as cl
from contractlang.api.rl import ActionError, contractsim_parallel_env, ctbench_parallel_env

WORKED = "examples/worked-example-1.contract"
SWAP = "examples/ctbench-board-24-swap.contract"
MAKERS = [lambda: contractsim_parallel_env(WORKED, env=3), lambda: ctbench_parallel_env(SWAP, board=24)]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("make", MAKERS)
def test_pettingzoos_parallel_api_and_seed_tests_pass(make):
    parallel_api_test(make(), num_cycles=200)
    parallel_seed_test(make, num_cycles=50)


@pytest.mark.parametrize("make", MAKERS)
def test_the_agents_share_one_padded_space_with_a_role_feature(make):
    env = make()
    first, second = env.possible_agents
    assert env.observation_space(first) is env.observation_space(second)
    assert env.action_space(first) is env.action_space(second)
    names = env.feature_names(first)
    assert names[:2] == (f"role={first}", f"role={second}")
    assert len(names) == len(env.feature_names(second)) == env.observation_space(first)["observation"].shape[0]
    observations, _ = env.reset(seed=1)
    for i, agent in enumerate(env.possible_agents):
        assert observations[agent]["observation"][:2].tolist() == [i == 0, i == 1]
        assert observations[agent] in env.observation_space(agent)


def test_rc_against_re_is_the_game_cl_play_plays_and_rewards_sum_to_the_gain():
    env = contractsim_parallel_env(WORKED, env=1)
    observations, _ = env.reset(seed=9)
    totals = {"customer": 0.0, "supplier": 0.0}
    while env.agents:
        customer = observations["customer"]["observation"][2:]  # past the role one-hot
        pay = int(min(customer[3], customer[2]))  # RC: pay what is due (eq. 7)
        observations, rewards, _, _, infos = env.step({"customer": pay, "supplier": 0})  # RE: nothing
        for agent, reward in rewards.items():
            totals[agent] += reward
    same = cl.play(WORKED, env=1, agents={"customer": "rc", "supplier": "re"}, seed=9).record.detail
    assert infos["customer"]["utilities"] == {"customer": same.u_customer, "supplier": same.u_supplier}
    assert totals == {"customer": same.u_customer - 200, "supplier": same.u_supplier}


def test_the_waiting_agents_action_is_ignored_and_the_actors_is_required():
    env = contractsim_parallel_env(WORKED, env=1)
    observations, _ = env.reset(seed=2)
    assert observations["supplier"]["action_mask"].tolist() == [1] + [0] * (env.action_space("supplier").n - 1)
    with pytest.raises(ActionError, match=r"actions: none for customer, whose turn it is"):
        env.step({"supplier": 0})
    with pytest.raises(ActionError, match=r"actions: referee not among the agents"):
        env.step({"customer": 0, "referee": 0})
    with pytest.raises(ActionError, match=r"is not an integer index"):
        env.step({"customer": 0, "supplier": 0.5})
    ignored = contractsim_parallel_env(WORKED, env=1)
    ignored.reset(seed=2)
    a, b = env.step({"customer": 3, "supplier": 0}), ignored.step({"customer": 3, "supplier": 1500})
    np.testing.assert_array_equal(a[0]["supplier"]["observation"], b[0]["supplier"]["observation"])


def test_masked_actions_fall_back_or_are_refused_and_a_step_after_the_game_warns(caplog):
    strict = ctbench_parallel_env(SWAP, board=24, masked="refuse")
    observations, _ = strict.reset(seed=0)
    masked = int(np.flatnonzero(observations["red"]["action_mask"] == 0)[0])
    with pytest.raises(ActionError, match=rf"action: {masked} for red is masked out"):
        strict.step({"red": masked, "blue": 0})
    env = ctbench_parallel_env(SWAP, board=24)
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"red": masked, "blue": 0})
    assert infos["red"]["fallback"] == masked
    while env.agents:
        observations, *_ = env.step({a: 0 for a in env.agents})
    assert env.step({"red": 0, "blue": 0}) == ({}, {}, {}, {}, {})
    assert "step() called after all agents are terminated" in caplog.text
