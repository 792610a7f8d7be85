"""What the RL environments refuse: calls before `reset`, actions outside the space or masked out, steps after the
game, and seeds that are not seeds — each with one line naming the parameter, as gymnasium's and PettingZoo's own
environments do, never an internal error and never a silently played action."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import error

from contractlang.api.rl import ActionError, EnvInputError, contractsim_env, ctbench_env

WORKED = "examples/worked-example-1.contract"
SWAP = "examples/ctbench-board-24-swap.contract"
MAKERS = {"contractsim": lambda: contractsim_env(WORKED, env=1), "ctbench": lambda: ctbench_env(SWAP, board=24)}


@pytest.fixture(params=sorted(MAKERS), scope="module")
def env(request):
    return MAKERS[request.param]()


@pytest.mark.parametrize("call", ["step", "observe"])
def test_step_and_observe_before_reset_ask_for_reset(call):
    fresh = contractsim_env(WORKED, env=1)
    with pytest.raises(error.ResetNeeded, match=rf"call reset\(\) before {call}\(\)"):
        fresh.step(0) if call == "step" else fresh.observe("customer")


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ("n", r"action space Discrete\((\d+)\), indices 0\.\."),
        (10**30, r"is outside \w+.s action space Discrete"),
        (-1, r"is outside \w+.s action space Discrete"),
        (float("inf"), r"\(float\) is not an integer index"),
        (1.0, r"1\.0 \(float\) is not an integer index"),
        (True, r"True \(bool\) is not an integer index"),
        (np.bool_(False), r"is not an integer index"),
        ("3", r"'3' \(str\) is not an integer index"),
        (None, r"None is only the step of a finished agent"),
        (np.array([0]), r"is not an integer index"),
    ],
)
def test_actions_outside_the_space_are_refused_naming_the_space(env, action, says):
    env.reset(seed=3)
    agent = env.agent_selection
    before = env.observe(agent)["observation"].copy()
    value = env.action_space(agent).n if action == "n" else action
    with pytest.raises(ActionError, match=says) as refused:
        env.step(value)
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, error.InvalidAction)
    assert str(refused.value).startswith("action: ")
    # nothing was played: the same agent is asked again in the same state
    assert env.agent_selection == agent
    np.testing.assert_array_equal(env.observe(agent)["observation"], before)


def test_integer_actions_of_numpy_are_taken(env):
    env.reset(seed=3)
    agent = env.agent_selection
    legal = int(np.flatnonzero(env.observe(agent)["action_mask"])[0])
    env.step(np.int64(legal))
    env.step(np.array(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])))


def test_a_masked_contractsim_order_is_refused_with_the_rule_it_breaks():
    env = contractsim_env(WORKED, env=1)
    env.reset(seed=3)
    env.step(0)  # the Customer pays nothing in week 1
    assert env.agent_selection == "supplier"
    mask = env.observe("supplier")["action_mask"]
    dearest = env.action_space("supplier").n - 1  # 12 of every input, far beyond the Supplier's $20
    assert not mask[dearest]
    with pytest.raises(ActionError, match=r"action: 2196 for supplier is masked out: orders inputs costing \$"):
        env.step(dearest)


def test_a_masked_ctbench_move_is_refused():
    env = ctbench_env(SWAP, board=24)
    env.reset(seed=0)
    agent = env.agent_selection
    masked = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(ActionError, match=rf"action: {masked} for {agent} is masked out: "):
        env.step(masked)


def _play_to_the_end(env):
    env.reset(seed=5)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            with pytest.raises(ActionError, match=r"whose game is over; its only action is None"):
                env.step(0)
            env.step(None)
        else:
            env.step(int(np.flatnonzero(observation["action_mask"])[-1]))


def test_a_step_after_the_game_warns_and_changes_nothing(env, caplog):
    _play_to_the_end(env)
    assert env.agents == []
    env.step(0)
    assert "step() called after all agents are terminated" in caplog.text  # PettingZoo's own warning
    assert env.agents == []


@pytest.mark.parametrize(
    ("seed", "says"),
    [
        (True, r"seed: True \(bool\) is not a seed"),
        (1.5, r"seed: 1\.5 \(float\) is not a seed"),
        ("7", r"seed: '7' \(str\) is not a seed"),
        ([1, 2], r"seed: \[1, 2\] \(list\) is not a seed"),
        (-1, r"seed: -1 is negative"),
    ],
)
def test_reset_refuses_seeds_that_are_not_seeds(env, seed, says):
    with pytest.raises(EnvInputError, match=says):
        env.reset(seed=seed)


def test_reset_takes_numpy_integer_seeds_as_their_value():
    env = contractsim_env(WORKED, env=1)
    env.reset(seed=np.int64(11))
    first = env.observe("customer")["observation"]
    env.reset(seed=11)
    np.testing.assert_array_equal(env.observe("customer")["observation"], first)


def test_an_unknown_agent_or_render_mode_is_named():
    env = contractsim_env(WORKED, env=1)
    env.reset(seed=0)
    with pytest.raises(EnvInputError, match=r"agent: 'referee' is not one of customer, supplier"):
        env.observe("referee")
    with pytest.raises(EnvInputError, match=r"render_mode: 'human'"):
        contractsim_env(WORKED, env=1, render_mode="human")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: contractsim_env(WORKED, env=True), r"env: True \(bool\) is not a whole number"),
        (lambda: contractsim_env(WORKED, env=[1]), r"env: \[1\] \(list\) is not a whole number"),
        (lambda: contractsim_env(WORKED, env=1, floors=["cs14"]), r"floors: \['cs14'\]; choose from cs14"),
        (lambda: ctbench_env(SWAP, board=24, rules="x"), r"rules: 'x'; choose from authors, paper"),
        (lambda: ctbench_env(SWAP, board=24, rules=None), r"rules: None; choose from authors, paper"),
        (lambda: ctbench_env(SWAP, board=24, mode="x"), r"mode: 'x'; choose from pfp, trade"),
        (lambda: ctbench_env(SWAP, board=24, visible=1), r"visible: 1 \(int\); True or False"),
    ],
)
def test_a_setting_that_is_not_one_is_refused_not_read_as_a_default(make, says):
    """An unknown rule set would otherwise be played as `paper`, and `env=True` as environment 1."""
    with pytest.raises(EnvInputError, match=says):
        make()


def test_an_infinite_reward_scale_and_a_vector_larger_than_memory_are_refused():
    from contractlang.api.rl import contractsim_gym, contractsim_vector_env

    with pytest.raises(EnvInputError, match=r"reward_scale: inf; a finite number > 0"):
        contractsim_gym(WORKED, env=1, reward_scale=float("inf"))
    with pytest.raises(EnvInputError, match=r"num_envs: 10000000000; a whole number of games, 1 to 1,048,576"):
        contractsim_vector_env(WORKED, env=1, num_envs=10**10)
