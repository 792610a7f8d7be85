"""Single-agent gymnasium environments: one role against a built-in opponent passes gymnasium's `check_env`,
plays the very game `cl.play` plays for the same seed and policies, and hands out its action mask both ways."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import contractlang as cl
from contractlang.api.rl import ActionError, EnvInputError, contractsim_gym, ctbench_gym
from contractlang.errors import UnknownName
from games.contractsim.game import Pay

WORKED = "examples/worked-example-1.contract"
SWAP = "examples/ctbench-board-24-swap.contract"


@pytest.mark.filterwarnings("ignore::UserWarning")  # check_env's notes on render fps and constant features
@pytest.mark.parametrize(
    "make",
    [
        lambda: contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc", render_mode="ansi"),
        lambda: ctbench_gym(SWAP, board=24, role="blue", opponent="planner", render_mode="ansi"),
    ],
)
def test_gymnasiums_check_env_passes(make):
    check_env(make(), skip_render_check=False)


def _play(env, policy, seed):
    observation, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        np.testing.assert_array_equal(env.action_masks(), observation["action_mask"].astype(bool))
        observation, reward, done, truncated, info = env.step(policy(observation))
        assert not truncated
        total += reward
    return total, info


@pytest.mark.parametrize("seed", [0, 7])
def test_a_supplier_learner_plays_the_game_cl_play_plays(seed):
    env = contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc")
    total, info = _play(env, lambda obs: 0, seed)  # order and produce nothing: RE (ContractSim paper, App. C.1)
    same = cl.play(WORKED, env=1, agents={"customer": "rcc", "supplier": "re"}, seed=seed).record.detail
    assert info["utilities"] == {"customer": same.u_customer, "supplier": same.u_supplier}
    assert total == same.u_supplier  # the Supplier starts at 0


class PayHalf:
    """A Python agent as the opponent: pays half of what is due."""

    name = "pay-half"

    def act(self, observation):
        return Pay(amount=min(observation.remaining_budget, observation.payment_due // 2))


def test_a_python_agent_is_an_opponent_and_the_customers_rewards_sum_to_its_gain():
    env = contractsim_gym(WORKED, env=1, role="supplier", opponent=PayHalf(), reward_scale=0.5)
    total, info = _play(env, lambda obs: 0, 3)
    assert info["utilities"]["supplier"] == 2 * total > 0  # paid something, spent nothing
    customer = contractsim_gym(WORKED, env=1, role="customer", opponent="re")
    total, info = _play(customer, lambda obs: 0, 3)
    assert total == info["utilities"]["customer"] - 200  # U − B: the Customer starts at its budget


def test_a_masked_action_falls_back_to_the_zero_action_or_is_refused():
    env = contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc")
    env.reset(seed=1)
    dearest = env.action_space.n - 1
    assert not env.action_masks()[dearest]
    _, _, _, _, info = env.step(dearest)
    assert info["fallback"] == dearest
    strict = contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc", masked="refuse")
    strict.reset(seed=1)
    with pytest.raises(ActionError, match=r"is masked out: orders inputs costing"):
        strict.step(dearest)


def test_a_step_after_the_game_is_a_dead_step(caplog):
    env = ctbench_gym(SWAP, board=24, role="red", opponent="planner")
    total, _ = _play(env, lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]), 0)
    observation, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["events"]) == (0.0, True, [])
    assert not observation["action_mask"].any()


def test_render_tells_the_games_story():
    env = contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc", render_mode="ansi")
    _play(env, lambda obs: 0, 2)
    story = env.render()
    assert story.splitlines()[0].endswith("(rcc) vs Caterer (learner), seed 2")
    assert "week 11:" in story and story.splitlines()[-1].startswith("utilities:")


@pytest.mark.parametrize("action", [1.5, True, "3", None, 2197, -1])
def test_actions_that_are_not_indices_are_refused_by_the_single_agent_environment(action):
    env = contractsim_gym(WORKED, env=1, role="supplier", opponent="rcc")
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"^action: "):
        env.step(action)
    with pytest.raises(EnvInputError, match=r"^seed: "):
        env.reset(seed=True)


def test_wrong_roles_opponents_and_options_are_named():
    with pytest.raises(EnvInputError, match=r"role: 'referee' is not a role of contractsim; one of customer, supplier"):
        contractsim_gym(WORKED, env=1, role="referee")
    with pytest.raises(UnknownName, match=r"unknown customer policy 'nobody'"):
        contractsim_gym(WORKED, env=1, opponent="nobody")
    with pytest.raises(EnvInputError, match=r"masked: 'skip'"):
        contractsim_gym(WORKED, env=1, masked="skip")
    with pytest.raises(EnvInputError, match=r"reward_scale: 0"):
        contractsim_gym(WORKED, env=1, reward_scale=0)
    with pytest.raises(EnvInputError, match=r"contract: .* is a CT-Bench contract"):
        contractsim_gym(SWAP, env=1)
