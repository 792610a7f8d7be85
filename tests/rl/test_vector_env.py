"""The vectorised ContractSim environment plays the monitor's game: game by game, the same utilities and
breaches as the single-game environment (the interpreter's `State` and Monitor) for the same seeds and
actions, and the same observations and masks at every step."""

from __future__ import annotations

import os

import numpy as np
import pytest

from contractlang.api.rl import ActionError, EnvInputError, contractsim_gym, contractsim_vector_env
from games.contractsim.environments import environment
from games.contractsim.shocks import draw_shocks
from games.contractsim.vector import shock_arrays

WORKED = "examples/worked-example-1.contract"
ROLLOVER = "examples/catering-sub-rollover.contract"
GAMES = 10_000 if os.environ.get("CONTRACTLANG_SLOW_SCALE") == "full" else 200


def supplier_policy(f: np.ndarray) -> np.ndarray:
    """A deterministic Supplier over the features (rows): order what this week's delivery needs and two more of
    each input when it can pay for them; deliver what is due as far as the inventory goes, one less in some
    weeks. A few of its orders are beyond its cash (masked), so the zero-action fallback is played too."""
    f = np.atleast_2d(f).astype(np.int64)
    week, producing, cash, inventory, prices, due = f[:, 0], f[:, 1], f[:, 3], f[:, 4:7], f[:, 7:10], f[:, 17:20]
    uses = np.stack([due[:, 0] + due[:, 1], due[:, 0] + due[:, 1], due[:, 0] + due[:, 2]], axis=1)
    generous = np.clip(uses + 2 - inventory, 0, 12)
    order = np.where(((generous * prices).sum(1) <= cash + 3 * (cash % 5 == 0))[:, None], generous, uses - inventory)
    order = np.clip(order, 0, 12)
    both, third = np.minimum(inventory[:, 0], inventory[:, 1]), inventory[:, 2]
    y0 = np.minimum.reduce([due[:, 0], both, third])
    make = np.stack([y0, np.minimum(due[:, 1], both - y0), np.minimum(due[:, 2], third - y0)], axis=1)
    make = np.clip(make - ((week * 7 + cash) % 17 == 0)[:, None], 0, 12)
    triple = np.where(producing[:, None] == 1, make, order)
    return (triple[:, 0] * 13 + triple[:, 1]) * 13 + triple[:, 2]


def customer_policy(f: np.ndarray) -> np.ndarray:
    """A deterministic Customer: pays what is due, a dollar less once it saw a Supplier breach, and in week 11 more
    than it has left (masked: the fallback pays $0)."""
    f = np.atleast_2d(f).astype(np.int64)
    week, left, due, breach = f[:, 0], f[:, 2], f[:, 3], f[:, 4]
    return np.clip(np.where(week == 11, left + 1, due - breach), 0, 200)


def off_schedule_customer(f: np.ndarray) -> np.ndarray:
    """A deterministic Customer that pays off schedule, mostly more than is due, so the RC Supplier leaves the
    schedule's table for the budget's."""
    f = np.atleast_2d(f).astype(np.int64)
    week, paid, left, due = f[:, 0], f[:, 1], f[:, 2], f[:, 3]
    return np.minimum(left, due + (paid * 7 + week * 13) % 11 - 2 * ((paid + week) % 9 == 4))


def test_the_shock_arrays_are_draw_shocks():
    env = environment(5)
    for seed in range(20):
        shocks = draw_shocks(env, np.random.default_rng(seed))
        spoil, prices, uniform, _ = shock_arrays(env, np.random.default_rng(seed).random(size=(5, 3, 3)))
        assert spoil.tolist() == [list(w.spoilage) for w in shocks.weeks]
        assert prices.tolist() == [list(w.prices) for w in shocks.weeks]
        assert uniform.tolist() == [list(w.receipt_uniform) for w in shocks.weeks]


@pytest.mark.parametrize(
    ("contract", "env", "role", "opponent", "policy", "games", "mixed"),
    [
        (WORKED, 5, "supplier", "rcc", supplier_policy, GAMES, True),
        (ROLLOVER, 3, "supplier", "rc", supplier_policy, GAMES // 4, True),
        (WORKED, 5, "customer", "rcc", customer_policy, GAMES // 4, True),
        (WORKED, 3, "customer", "rc", off_schedule_customer, GAMES // 4, False),  # every game on the budget's table
    ],
)
def test_the_vectorised_games_are_the_monitors_game_by_game(contract, env, role, opponent, policy, games, mixed):
    seeds = list(range(games))
    vector = contractsim_vector_env(contract, env=env, num_envs=games, role=role, opponent=opponent)
    single = contractsim_gym(contract, env=env, role=role, opponent=opponent)
    observation, _ = vector.reset(seed=seeds)
    expected_obs, expected_mask, expected_reward, outcome = [], [], [], []
    for seed in seeds:  # the monitor's games, one at a time
        o, _ = single.reset(seed=seed)
        rows, masks, rewards, done = [o["observation"]], [o["action_mask"]], [], False
        while not done:
            o, r, done, _, info = single.step(int(policy(o["observation"])[0]))
            rows.append(o["observation"])
            masks.append(o["action_mask"])
            rewards.append(r)
        u = info["utilities"]
        first = single.state_.monitor
        outcome.append(
            (
                u["customer"],
                u["supplier"],
                first.first_violation("customer") or 0,
                first.first_violation("supplier") or 0,
            )
        )
        expected_obs.append(rows)
        expected_mask.append(masks)
        expected_reward.append(rewards)
    steps = len(expected_reward[0])
    assert all(len(r) == steps for r in expected_reward)  # every game asks the seat equally often
    for k in range(steps):
        np.testing.assert_array_equal(observation["observation"], [rows[k] for rows in expected_obs])
        np.testing.assert_array_equal(observation["action_mask"], [m[k] for m in expected_mask])
        observation, reward, done, truncated, infos = vector.step(policy(observation["observation"]))
        np.testing.assert_array_equal(reward, [r[k] for r in expected_reward])
        assert not truncated.any()
    assert done.all() and infos["_utilities"].all()
    got = np.concatenate([infos["utilities"], infos["first_violations"]], axis=1)
    np.testing.assert_array_equal(got, outcome)
    breached = (got[:, 2:] > 0).any(axis=1)
    assert not mixed or (breached.any() and not breached.all())  # the seeds cover games with and without a breach
    np.testing.assert_array_equal(infos["final_obs"]["observation"], [rows[-1] for rows in expected_obs])
    np.testing.assert_array_equal(infos["final_obs"]["action_mask"], [m[-1] for m in expected_mask])


def test_ended_games_restart_in_the_same_step_and_masked_actions_fall_back():
    vector = contractsim_vector_env(WORKED, env=5, num_envs=4, seed=3)
    observation, _ = vector.reset()
    dearest = np.full(4, vector.single_action_space.n - 1)
    assert not observation["action_mask"][:, -1].any()
    _, _, _, _, infos = vector.step(dearest)
    assert infos["fallback"].all()
    for _ in range(9):
        observation, _, done, _, infos = vector.step(np.zeros(4, dtype=np.int64))
    assert done.all()
    assert (observation["observation"][:, 0] == 2).all()  # the next games' first production week
    assert (infos["final_obs"]["observation"][0, 0], infos["utilities"].shape) == (12, (4, 2))


def test_wrong_actions_seeds_and_opponents_are_named():
    vector = contractsim_vector_env(WORKED, env=5, num_envs=3)
    with pytest.raises(Exception, match=r"call reset\(\) before step\(\)"):
        vector.step(np.zeros(3, dtype=np.int64))
    vector.reset(seed=0)
    with pytest.raises(ActionError, match=r"one integer index per game, shape \(3,\)"):
        vector.step(np.zeros(3))
    with pytest.raises(ActionError, match=r"outside Discrete\(2197\)"):
        vector.step(np.array([0, 0, 2197]))
    with pytest.raises(EnvInputError, match=r"seed: 2 seeds for 3 games"):
        vector.reset(seed=[1, 2])
    with pytest.raises(EnvInputError, match=r"opponent: 'planner'; the vectorised engine plays rc, rcc, re"):
        contractsim_vector_env(WORKED, env=5, num_envs=3, opponent="planner")
    with pytest.raises(EnvInputError, match=r"num_envs: 0"):
        contractsim_vector_env(WORKED, env=5, num_envs=0)
