"""The vectorised environments' `VectorEnv` face, and the ContractSim one: `num_envs` games stepped at once in
compiled code (games/contractsim/vector.py), one seat learning against a rational opponent."""

from __future__ import annotations

import numbers
from abc import ABCMeta, abstractmethod

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from contractlang.api.rl.aec import observation_space
from contractlang.api.rl.checks import ActionError, EnvInputError, reset_needed, reward_scale_of, seed_of
from contractlang.api.rl.cores import ContractSimCore
from contractlang.api.rl.single import OneSeat, learner_role

MAX_ENVS = 2**20
"""The most games one vector steps: more would ask for arrays larger than memory before the first step."""


def num_envs_of(num_envs) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or not 1 <= num_envs <= MAX_ENVS:
        raise EnvInputError(f"num_envs: {num_envs!r}; a whole number of games, 1 to {MAX_ENVS:,}")
    return int(num_envs)


def seeds_of(seed, num_envs: int) -> list[int] | None:
    """One seed per game when `seed` is a list of them, None when it is one seed or None."""
    if not isinstance(seed, (list, tuple, np.ndarray)):
        return None
    seeds = [seed_of(s) for s in seed]
    if len(seeds) != num_envs or None in seeds:
        raise EnvInputError(f"seed: {len(seeds)} seeds for {num_envs} games; one integer ≥ 0 per game")
    return seeds


class GamesVectorEnv(OneSeat, VectorEnv, metaclass=ABCMeta):
    """`num_envs` games of one seat stepped by an engine whose arrays (`obs`, `mask`, `reward`, `done`,
    `fallback`) hold one row per game. A game that ends restarts in the same step (gymnasium's SAME_STEP
    autoreset): `infos["final_obs"]` (batched like the observations; the mask of an ended game is all zeros) and
    the game's outcomes (the engine's `outcomes()`) hold the ended games' last observation and results in the
    rows that `_final_obs` and `_<outcome>` mark. The arrays returned are the engine's own, rewritten by the next
    step: copy what must be kept. A game's own part is `_begin`: how its rows start new games."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def _seat(self, core, role: str, num_envs, reward_scale, seed) -> None:
        self.core = core
        self.role = learner_role(core, role)
        self.num_envs = num_envs_of(num_envs)
        self.reward_scale = reward_scale_of(reward_scale)
        self.single_observation_space = observation_space(core.features[role], core.sizes[role])
        self.single_action_space = spaces.Discrete(core.sizes[role])
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rng = np.random.default_rng(seed_of(seed))
        self._all = np.ones(self.num_envs, dtype=np.bool_)
        self._no_actions = np.zeros((self.num_envs, self.single_action_space.n), dtype=np.int8)
        self._no_actions.setflags(write=False)
        self._started = False

    def _observation(self) -> dict:
        return {"observation": self.engine.obs, "action_mask": self.engine.mask}

    def _actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ActionError(
                f"actions: an array of {a.dtype} shaped {a.shape}; one integer index per game, shape "
                f"({self.num_envs},), each 0..{self.single_action_space.n - 1}"
            )
        if a.size and (a.min() < 0 or a.max() >= self.single_action_space.n):
            raise ActionError(f"actions: indices outside Discrete({self.single_action_space.n})")
        return a.astype(np.int64, copy=False)

    @abstractmethod
    def _begin(self, games: np.ndarray, seeds: list[int] | None) -> None:
        """New games in the rows `games`: each played as the game of its seed in `seeds`, else drawn from the
        environment's generator."""

    def reset(self, seed=None, options: dict | None = None):
        """New games in every row: `seed` an integer seeds the environment's generator; a list of one seed per
        game plays, in each row, the game that seed gives the single-game environment."""
        seeds = seeds_of(seed, self.num_envs)
        if seeds is None and (seed := seed_of(seed)) is not None:
            self._rng = np.random.default_rng(seed)
        self._begin(np.arange(self.num_envs), seeds)
        self._started = True
        return self._observation(), {}

    def step(self, actions):
        if not self._started:
            raise reset_needed("step")
        engine = self.engine
        engine.step(self._actions(actions), self._all)
        done = engine.done.copy()
        rewards = engine.reward * self.reward_scale if self.reward_scale != 1.0 else engine.reward.copy()
        infos: dict = {"fallback": engine.fallback.copy(), "_fallback": self._all}
        if done.any():
            # an ended game has no legal action: its final mask is all zeros, shared rather than copied
            infos.update(final_obs={"observation": engine.obs.copy(), "action_mask": self._no_actions}, _final_obs=done)
            for name, value in engine.outcomes().items():
                infos.update({name: value, f"_{name}": done})
            self._begin(np.flatnonzero(done), None)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._observation(), rewards, done, truncated, infos


class ContractSimVectorEnv(GamesVectorEnv):
    """`num_envs` games of one contract, the learner in `role` against `opponent` (`rc`, `rcc` or `re`, played in
    compiled code). Observations, masks and rewards are those of `contractsim_gym` for the same seat, as arrays
    with one row per game; a masked action falls back to the zero action (`infos["fallback"]`). An ended game's
    `infos["utilities"]` and `infos["first_violations"]` hold its (U_Cust, U_Supp) and first violation weeks (0:
    never)."""

    def __init__(
        self,
        contract,
        env: int,
        num_envs: int,
        role: str = "supplier",
        opponent: str = "rcc",
        floors: str = "cs14",
        reward_scale: float = 1.0,
        seed: int | None = None,
    ):
        from games.contractsim.batch import POLICIES
        from games.contractsim.vector import VectorGames

        num_envs = num_envs_of(num_envs)
        if not isinstance(opponent, str) or opponent not in POLICIES:
            raise EnvInputError(f"opponent: {opponent!r}; the vectorised engine plays {', '.join(POLICIES)}")
        self._seat(ContractSimCore(contract, env, floors), role, num_envs, reward_scale, seed)
        self.engine = VectorGames(self.core.ir, self.core.env, self.num_envs, role, opponent)

    def _begin(self, games: np.ndarray, seeds: list[int] | None) -> None:
        """A game's chance is its uniform draws; a seed's are those `contractlang run --seed` plays ([CS-11])."""
        if seeds is not None:
            uniform = np.stack([np.random.default_rng(s).random(size=(5, 3, 3)) for s in seeds])
        else:
            uniform = self._rng.random(size=(len(games), 5, 3, 3))
        self.engine.begin(games, uniform)


def contractsim_vector_env(
    contract,
    env: int,
    num_envs: int,
    role: str = "supplier",
    opponent: str = "rcc",
    floors: str = "cs14",
    reward_scale: float = 1.0,
    seed: int | None = None,
) -> ContractSimVectorEnv:
    """`num_envs` ContractSim games of `contract` in environment `env` stepped at once in compiled code, `role`
    learning against the rational `opponent` (`rc`, `rcc`, `re`; ContractSim paper, App. C.1)."""
    return ContractSimVectorEnv(contract, env, num_envs, role, opponent, floors, reward_scale, seed)
