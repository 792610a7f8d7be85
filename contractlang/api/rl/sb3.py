"""Stable-Baselines3's `VecEnv` over a vectorised environment of this package, so sb3-contrib's MaskablePPO (or
any SB3 algorithm) steps all its games in one call of the compiled engine and reads the masks through
`env_method("action_masks")`, as sb3-contrib asks. Stable-Baselines3 is imported only by `sb3_vec_env` (extra
`[rl-train]`); the adapter itself needs numpy alone."""

from __future__ import annotations

import numbers

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from contractlang.api.rl.checks import EnvInputError, seed_of

FINAL = "final_obs"  # gymnasium's key for the ended games' last observations


class MaskedVecEnv:
    """The games of a gymnasium `VectorEnv` with SAME_STEP autoreset and `{"observation", "action_mask"}`
    observations, as SB3's `VecEnv` sees them. The learner is fed the feature rows (scaled to [0, 1] by each
    feature's stated range when `scaled`), not the mask; `action_masks()` gives the masks of the games as they
    stand. A game that ends restarts in the same step: its row of the observation is the new game's first, and
    its info holds the ended game's last one as `terminal_observation` (SB3's convention) with every per-game
    info of the vector (`utilities`, `first_violations`, `fallback`) for that row. What is returned is a copy:
    the vector rewrites its arrays in place at each step, while SB3 keeps the previous observation.

    `factors` (e.g. (13, 13, 13) for a Supplier's three quantities) offers the Discrete action as the MultiDiscrete
    of its mixed-radix digits, one head per quantity; each digit's mask is the values some legal action has (the
    concatenation sb3-contrib takes), and a combination the game refuses falls back as a masked action does."""

    def __init__(self, vector: VectorEnv, scaled: bool = False, factors: tuple[int, ...] | None = None):
        if not isinstance(vector, VectorEnv):
            raise EnvInputError(f"vector: {type(vector).__name__}; a gymnasium VectorEnv, e.g. contractsim_vector_env")
        if vector.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise EnvInputError("vector: its games must restart in the step they end (gymnasium's SAME_STEP autoreset)")
        single = vector.single_observation_space
        if not isinstance(single, spaces.Dict) or set(single.spaces) != {"observation", "action_mask"}:
            raise EnvInputError("vector: its observations must be {'observation': features, 'action_mask': mask}")
        if not isinstance(scaled, bool):
            raise EnvInputError(f"scaled: {scaled!r}; True (features scaled to [0, 1] by their ranges) or False")
        box = single["observation"]
        self.vector = vector
        self.num_envs = vector.num_envs
        self.action_space = vector.single_action_space
        self.factors = None if factors is None else tuple(int(f) for f in factors)
        if self.factors is not None:
            if not self.factors or min(self.factors) < 1 or int(np.prod(self.factors)) != self.action_space.n:
                raise EnvInputError(
                    f"factors: {factors!r}; whole numbers ≥ 1 whose product is the {self.action_space.n} actions"
                )
            self.action_space = spaces.MultiDiscrete(self.factors)
        self.scaled = scaled
        width = box.high - box.low
        # a feature with one value (a memory the contract never uses) is 0 once scaled, not 0/0
        self._low, self._width = box.low, np.where(width > 0, width, 1.0)
        low, high = (np.zeros_like(box.low), np.where(width > 0, 1.0, 0.0)) if scaled else (box.low, box.high)
        self.observation_space = spaces.Box(low, high, dtype=box.dtype)
        self.render_mode = None
        self.metadata = {"render_modes": []}
        self._seeds: list[int | None] = [None] * self.num_envs
        self._options: list[dict] = [{} for _ in range(self.num_envs)]
        width = vector.single_action_space.n if self.factors is None else sum(self.factors)
        self._masks = np.zeros((self.num_envs, width), dtype=bool)
        self._actions: np.ndarray | None = None

    def features_of(self, observations: dict) -> np.ndarray:
        """The feature rows of a batch of the vector's observations as the learner is fed them: a copy, scaled when
        `scaled` (what a trained model's `predict` takes)."""
        rows = np.array(observations["observation"], dtype=self.observation_space.dtype)
        return (rows - self._low) / self._width if self.scaled else rows

    def masks_of(self, observations: dict) -> np.ndarray:
        """The masks of a batch of the vector's observations as the learner takes them: booleans, one row per game,
        each factor's digit masks side by side when `factors`."""
        masks = np.asarray(observations["action_mask"]) != 0
        if self.factors is None:
            return masks
        joint = masks.reshape(len(masks), *self.factors)
        k = len(self.factors)
        return np.concatenate([joint.any(axis=tuple(a for a in range(1, k + 1) if a != d)) for d in range(1, k + 1)], 1)

    def actions_of(self, actions) -> np.ndarray:
        """The learner's actions (one row of digits per game when `factors`) as the vector's action indices."""
        a = np.asarray(actions)
        if self.factors is None:
            return a.reshape(-1)
        return np.ravel_multi_index(tuple(a.reshape(-1, len(self.factors)).T), self.factors)

    def _take(self, observations: dict) -> np.ndarray:
        self._masks = self.masks_of(observations)
        return self.features_of(observations)

    def reset(self) -> np.ndarray:
        """New games in every row; a seed set by `seed(s)` seeds the vector's generator, so the same seed replays
        the same games (SB3 sets it from the algorithm's `seed`)."""
        observations, _ = self.vector.reset(seed=self._seeds[0])
        self._seeds = [None] * self.num_envs
        return self._take(observations)

    def seed(self, seed: int | None = None) -> list[int | None]:
        """The seed of the next `reset`: one generator for all games, so every row is given the same seed."""
        self._seeds = [seed_of(seed)] * self.num_envs
        return self._seeds

    def step_async(self, actions) -> None:
        self._actions = self.actions_of(actions)

    def step_wait(self):
        if self._actions is None:
            raise EnvInputError("step_wait: no actions; call step_async(actions) first")
        observations, rewards, terminated, truncated, vector_infos = self.vector.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        for key, value in vector_infos.items():
            rows = vector_infos.get(f"_{key}")
            if key.startswith("_") or rows is None:
                continue
            if key == FINAL:
                value, key = self.features_of(value), "terminal_observation"
            for g in np.flatnonzero(rows):
                infos[g][key] = value[g]
        for g in np.flatnonzero(truncated & ~terminated):
            infos[g]["TimeLimit.truncated"] = True  # SB3 then bootstraps the value of the cut game
        return self._take(observations), np.array(rewards, dtype=np.float32), dones.copy(), infos

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game now, one boolean row per game (sb3-contrib's convention)."""
        return self._masks.copy()

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, numbers.Integral):
            return [int(indices)]
        return list(indices)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        """`action_masks` per game (what MaskablePPO calls); the games have no other method of their own."""
        if method_name != "action_masks":
            raise AttributeError(f"env_method: the vector's games have no method {method_name!r}; only action_masks")
        return list(self._masks[self._indices(indices)])

    def get_attr(self, attr_name: str, indices=None) -> list:
        """An attribute of the vector environment (every game shares it), once per game asked about."""
        value = self.action_masks if attr_name == "action_masks" else getattr(self.vector, attr_name)
        return [value] * len(self._indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.vector, attr_name)

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self.vector, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def close(self) -> None:
        self.vector.close()


def sb3_vec_env(vector: VectorEnv, scaled: bool = True, factors: tuple[int, ...] | None = None):
    """`vector` (e.g. `contractsim_vector_env`) as a Stable-Baselines3 `VecEnv` for MaskablePPO and the other SB3
    algorithms: the `MaskedVecEnv` adapter, features scaled to [0, 1] by their ranges unless `scaled=False`, the
    actions as MultiDiscrete digits when `factors` is given."""
    MaskedVecEnv(vector, scaled, factors)  # bad arguments are told apart from a missing library
    try:
        from stable_baselines3.common.vec_env import VecEnv
    except ImportError as exc:
        raise ImportError(
            "sb3_vec_env needs Stable-Baselines3: install PyTorch's CPU build, then pip install "
            "'contractlang[rl-train]' (docs/how-to/rl.md, Libraries)"
        ) from exc

    class SB3MaskedVecEnv(MaskedVecEnv, VecEnv):
        """The adapter as an SB3 `VecEnv`: SB3's own methods (render, wrappers' attribute lookup) over it."""

    return SB3MaskedVecEnv(vector, scaled, factors)
