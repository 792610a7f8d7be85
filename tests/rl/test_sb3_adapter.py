"""The Stable-Baselines3 adapter over the vectorised environment keeps SB3's VecEnv contract, tested with a light
learner that steps it as MaskablePPO's rollout loop does (no PyTorch): shapes, masks read through
`env_method("action_masks")`, SB3's same-step autoreset with `terminal_observation`, copies SB3 can keep, and
seeding. `sb3_vec_env` is tested against a stand-in for SB3's abstract `VecEnv`."""

from __future__ import annotations

import abc
import runpy
import sys
import types

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, VectorEnv

from contractlang.api.rl import EnvInputError, contractsim_vector_env
from contractlang.api.rl.sb3 import MaskedVecEnv, sb3_vec_env
from tests.helpers import ROOT

WORKED = "examples/worked-example-1.contract"
GAMES = 32
ROUNDS = 10  # a Supplier decides twice in each of the five production weeks


def vector(seed=None, reward_scale=1.0):
    return contractsim_vector_env(
        WORKED, 3, GAMES, role="supplier", opponent="rcc", reward_scale=reward_scale, seed=seed
    )


def masks_of(env) -> np.ndarray:
    """What sb3-contrib's `get_action_masks` does with a VecEnv."""
    return np.stack(env.env_method("action_masks"))


def rollout(env, steps: int, rng: np.random.Generator):
    """MaskablePPO's collect_rollouts with a random legal action in place of the network: it keeps the previous
    observation while it steps, as the rollout buffer does."""
    last = env.reset()
    kept = []
    for _ in range(steps):
        masks = masks_of(env)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
        new, rewards, dones, infos = env.step(actions)
        kept.append((last, last.copy(), masks, actions, rewards, dones, infos))
        last = new
    return kept


def test_a_light_learner_steps_the_adapter_as_maskable_ppo_does():
    env = MaskedVecEnv(vector())
    names = env.vector.feature_names
    week, cash = names.index("week"), names.index("cash")
    rng = np.random.default_rng(0)
    steps = rollout(env, 2 * ROUNDS, rng)
    returns = np.zeros(GAMES)
    for k, (last, snapshot, masks, actions, rewards, dones, infos) in enumerate(steps):
        assert last.shape == (GAMES, len(names)) and env.observation_space.contains(last[0])
        np.testing.assert_array_equal(last, snapshot)  # the vector's next step did not rewrite what SB3 kept
        assert masks.shape == (GAMES, 2197) and masks.dtype == bool and masks[np.arange(GAMES), actions].all()
        assert rewards.shape == (GAMES,) and rewards.dtype == np.float32 and dones.shape == (GAMES,)
        assert len(infos) == GAMES and not any(info["fallback"] for info in infos)  # legal actions are played
        returns += rewards
        assert dones.all() == (k % ROUNDS == ROUNDS - 1) and dones.all() == dones.any()
        if dones.any():
            for g, info in enumerate(infos):
                final = info["terminal_observation"]
                assert final.shape == (len(names),) and final[week] == 12
                # the rewards of a game sum to its final utility: a Supplier starts at 0
                assert info["utilities"][1] == pytest.approx(returns[g], abs=1e-3)
            assert "TimeLimit.truncated" not in infos[0]
            returns[:] = 0
        else:
            assert all("terminal_observation" not in info for info in infos)
    # the row of a game that ended is the next game's first decision: week 2's order, the start capital
    first = steps[ROUNDS][0]
    start = env.features_of(env.vector.reset(seed=0)[0])
    np.testing.assert_allclose(first[:, week], start[:, week])
    np.testing.assert_allclose(first[:, cash], start[:, cash])


def test_unscaled_features_are_the_vectors_own_and_scaled_ones_lie_in_0_1():
    raw, scaled = MaskedVecEnv(vector(seed=3)), MaskedVecEnv(vector(seed=3), scaled=True)
    a, b = raw.reset(), scaled.reset()
    assert raw.observation_space == raw.vector.single_observation_space["observation"]
    box = raw.observation_space
    width = np.where(box.high > box.low, box.high - box.low, 1.0)
    np.testing.assert_allclose(b, (a - box.low) / width)
    assert (b >= 0).all() and (b <= 1).all() and scaled.observation_space.contains(b[0].astype(np.float64))


def test_the_seed_sb3_sets_replays_the_same_games():
    def trajectory(seed):
        env = MaskedVecEnv(vector())
        assert env.seed(seed) == [seed] * GAMES
        return rollout(env, ROUNDS, np.random.default_rng(1))

    one, two, other = trajectory(5), trajectory(5), trajectory(6)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[4], b[4])
    assert any(not np.array_equal(a[0], c[0]) for a, c in zip(one, other, strict=True))


def test_factored_actions_are_the_digits_of_the_index_with_the_masks_of_each_digit():
    env = MaskedVecEnv(vector(seed=4), factors=(13, 13, 13))
    env.reset()
    joint = env.vector.engine.mask.astype(bool).reshape(GAMES, 13, 13, 13)
    masks = masks_of(env)
    assert env.action_space.nvec.tolist() == [13, 13, 13] and masks.shape == (GAMES, 39)
    for g in range(GAMES):  # a digit is offered when some legal action has it
        for d, digits in enumerate(np.split(masks[g], 3)):
            legal = {int(i[d]) for i in np.argwhere(joint[g])}
            assert set(np.flatnonzero(digits).tolist()) == legal
    rng = np.random.default_rng(2)
    chosen = np.array([rng.choice(np.argwhere(joint[g])) for g in range(GAMES)])  # legal combinations
    assert (env.actions_of(chosen) == (chosen[:, 0] * 13 + chosen[:, 1]) * 13 + chosen[:, 2]).all()
    _, _, _, infos = env.step(chosen)
    assert not any(info["fallback"] for info in infos)
    _, _, _, infos = env.step(np.full((GAMES, 3), 12))  # twelve of each: more than the cash or inventory allows
    assert all(info["fallback"] for info in infos)
    with pytest.raises(EnvInputError, match="product"):
        MaskedVecEnv(vector(), factors=(13, 13))


def test_the_adapter_answers_the_attribute_calls_of_sb3_and_refuses_the_rest():
    env = MaskedVecEnv(vector())
    env.reset()
    assert env.has_attr("action_masks") and not env.has_attr("no_such_thing")
    assert env.get_attr("feature_names", indices=[0, 3]) == [env.vector.feature_names] * 2
    assert env.env_is_wrapped(object) == [False] * GAMES
    assert len(env.env_method("action_masks", indices=2)) == 1
    with pytest.raises(AttributeError, match="only action_masks"):
        env.env_method("render")
    with pytest.raises(EnvInputError, match="step_async"):
        env.step_wait()


def test_a_vector_without_same_step_autoreset_or_masks_is_refused():
    class NextStep(VectorEnv):
        metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    with pytest.raises(EnvInputError, match="SAME_STEP"):
        MaskedVecEnv(NextStep())
    with pytest.raises(EnvInputError, match="scaled"):
        MaskedVecEnv(vector(), scaled="yes")
    with pytest.raises(EnvInputError, match="VectorEnv"):
        sb3_vec_env(vector)  # the function, not the environment it makes


class StandInVecEnv(abc.ABC):
    """SB3's `VecEnv` as far as instantiating a subclass goes: its abstract methods."""

    @abc.abstractmethod
    def reset(self): ...

    @abc.abstractmethod
    def step_async(self, actions): ...

    @abc.abstractmethod
    def step_wait(self): ...

    @abc.abstractmethod
    def close(self): ...

    @abc.abstractmethod
    def get_attr(self, attr_name, indices=None): ...

    @abc.abstractmethod
    def set_attr(self, attr_name, value, indices=None): ...

    @abc.abstractmethod
    def env_method(self, method_name, *method_args, indices=None, **method_kwargs): ...

    @abc.abstractmethod
    def env_is_wrapped(self, wrapper_class, indices=None): ...


def test_sb3_vec_env_is_an_sb3_vec_env_and_says_what_to_install_without_it(monkeypatch):
    module = types.ModuleType("stable_baselines3.common.vec_env")
    module.VecEnv = StandInVecEnv
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.vec_env", module)
    env = sb3_vec_env(vector())
    assert isinstance(env, StandInVecEnv) and isinstance(env, MaskedVecEnv) and env.scaled
    assert masks_of(env).shape == (GAMES, 2197)
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.vec_env", None)
    with pytest.raises(ImportError, match=r"contractlang\[rl-train\]"):
        sb3_vec_env(vector())


def test_the_ppo_example_says_what_to_install_without_sb3_contrib(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    monkeypatch.setattr(sys, "argv", ["train_supplier_ppo.py", "--minutes", "0"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(ROOT / "examples" / "rl" / "train_supplier_ppo.py"), run_name="__main__")
    assert exit_.value.code == 1 and "sb3-contrib" in capsys.readouterr().err
