"""The vectorised ContractSim environment: `num_envs` games stepped at once in compiled code
(games/contractsim/vector.py) behind gymnasium's `VectorEnv`, one seat learning against a rational opponent."""

from __future__ import annotations

import numbers

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


class ContractSimVectorEnv(OneSeat, VectorEnv):
    """`num_envs` games of one contract, the learner in `role` against `opponent` (`rc`, `rcc` or `re`, played in
    compiled code). Observations, masks and rewards are those of `contractsim_gym` for the same seat, as arrays
    with one row per game; a masked action falls back to the zero action (`infos["fallback"]`). A game that ends
    restarts in the same step (gymnasium's SAME_STEP autoreset): `infos["final_obs"]` (batched like the
    observations; the mask of an ended game is all zeros), `infos["utilities"]` and `infos["first_violations"]` hold
    the ended games' last observation, (U_Cust, U_Supp) and first violation weeks (0: never), in the rows that
    `_final_obs`, `_utilities` and `_first_violations` mark. The arrays returned are the
    engine's own, rewritten by the next step: copy what must be kept."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

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

        if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or not 1 <= num_envs <= MAX_ENVS:
            raise EnvInputError(f"num_envs: {num_envs!r}; a whole number of games, 1 to {MAX_ENVS:,}")
        if not isinstance(opponent, str) or opponent not in POLICIES:
            raise EnvInputError(f"opponent: {opponent!r}; the vectorised engine plays {', '.join(POLICIES)}")
        self.core = core = ContractSimCore(contract, env, floors)
        self.role = learner_role(core, role)
        self.num_envs = int(num_envs)
        self.reward_scale = reward_scale_of(reward_scale)
        self.engine = VectorGames(core.ir, core.env, self.num_envs, role, opponent)
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

    def reset(self, seed=None, options: dict | None = None):
        """New games in every row: `seed` an integer seeds the environment's generator; a list of one seed per
        game plays, in each row, the game `contractlang run --seed` plays for that seed ([CS-11])."""
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = [seed_of(s) for s in seed]
            if len(seeds) != self.num_envs or None in seeds:
                raise EnvInputError(f"seed: {len(seeds)} seeds for {self.num_envs} games; one integer ≥ 0 per game")
            uniform = np.stack([np.random.default_rng(s).random(size=(5, 3, 3)) for s in seeds])
        else:
            seed = seed_of(seed)
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            uniform = self._rng.random(size=(self.num_envs, 5, 3, 3))
        self.engine.begin(np.arange(self.num_envs), uniform)
        self._started = True
        return self._observation(), {}

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

    def step(self, actions):
        if not self._started:
            raise reset_needed("step")
        engine = self.engine
        engine.step(self._actions(actions), self._all)
        done = engine.done.copy()
        rewards = engine.reward * self.reward_scale if self.reward_scale != 1.0 else engine.reward.copy()
        infos: dict = {"fallback": engine.fallback.copy(), "_fallback": self._all}
        if done.any():
            ended = np.flatnonzero(done)
            # an ended game has no legal action: its final mask is all zeros, shared rather than copied
            final = {"observation": engine.obs.copy(), "action_mask": self._no_actions}
            infos.update(
                final_obs=final,
                _final_obs=done,
                utilities=engine.utilities(),
                _utilities=done,
                first_violations=engine.first_violations(),
                _first_violations=done,
            )
            engine.begin(ended, self._rng.random(size=(len(ended), 5, 3, 3)))
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._observation(), rewards, done, truncated, infos


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
