"""Single-agent gymnasium environments: one role of a game learnt against a built-in opponent (any registered
agent or a Python agent), which moves between the learner's steps. The observation holds the action mask, and
`action_masks()` gives it as sb3-contrib's MaskablePPO asks for it."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import logger, spaces

from contractlang.api.rl.aec import observation_space, typed_action
from contractlang.api.rl.checks import (
    EnvInputError,
    index_of,
    masked_of,
    render_mode_of,
    reset_needed,
    reward_scale_of,
    seed_of,
)
from contractlang.api.rl.cores import ContractSimCore, CTBenchCore, Feature


def learner_role(core, role: str) -> str:
    if role not in core.roles:
        raise EnvInputError(f"role: {role!r} is not a role of {core.game_name}; one of {', '.join(core.roles)}")
    return role


class OneSeat:
    """The features of the learning seat, for the environments where one role learns."""

    @property
    def features(self) -> tuple[Feature, ...]:
        """Each entry of the observation vector: name, unit and range."""
        return self.core.features[self.role]

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)


class ContractGym(OneSeat, gymnasium.Env):
    """`role` of a game against `opponent`. Each step plays the learner's action, then the opponent's until the
    learner is asked again or the game ends; the reward is the change of the learner's utility since its previous
    step (since the start, for the first), times `reward_scale`, so an episode's rewards sum to the learner's final utility less its utility at the
    start (the budget B for a ContractSim Customer, 0 otherwise). A masked action is played as the game's zero
    action (`masked="fallback"`, the papers' zero fallback; `info["fallback"]` then holds the index refused), or
    refused with an `ActionError` (`masked="refuse"`)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        core,
        role: str,
        opponent,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        masked: str = "fallback",
    ):
        self.masked = masked_of(masked)
        self.core = core
        self.role = learner_role(core, role)
        self.opponent_role = next(r for r in core.roles if r != role)
        self.reward_scale = reward_scale_of(reward_scale)
        self.render_mode = render_mode_of(render_mode)
        self.observation_space = observation_space(core.features[role], core.sizes[role])
        self.action_space = spaces.Discrete(core.sizes[role])
        self.opponent_spec = opponent
        self.opponent = core.seat(opponent, self.opponent_role, 0)  # an unknown or broken opponent fails here
        self.state_ = None
        self.seed_ = 0

    def _observe(self) -> dict:
        return {
            "observation": self.core.observation(self.state_, self.role),
            "action_mask": self.core.mask(self.state_, self.role),
        }

    def _opponent_moves(self) -> None:
        from games.agents import checked_action

        s = self.state_
        while not s.is_terminal() and s.current_player() == self.opponent_role:
            s = s.apply_action(checked_action(self.opponent, s, self.opponent_role))
        self.state_ = s

    def _info(self) -> dict:
        log = self.state_.log
        events = [e.model_dump(mode="json") for e in log[self._seen :]]
        self._seen = len(log)
        info = {"events": events}
        if self.state_.is_terminal():
            info["utilities"] = {r: self.core.utility(self.state_, r) for r in self.core.roles}
        return info

    def reset(self, seed: int | None = None, options: dict | None = None):
        """A new game; its shocks and the opponent's randomness come from `seed` as in `cl.play` ([CS-11]), or from
        the environment's generator when none is given."""
        seed = seed_of(seed)
        super().reset(seed=seed)
        self.seed_ = seed if seed is not None else int(self.np_random.integers(2**31))
        self._close_opponent()
        self.opponent = self.core.seat(self.opponent_spec, self.opponent_role, self.seed_)
        self.state_ = self.core.initial(self.seed_)
        self._seen = 0
        self._utility = self.core.utility(
            self.state_, self.role
        )  # the opponent's first moves count in the first reward
        self._opponent_moves()
        return self._observe(), self._info()

    def step(self, action):
        if self.state_ is None:
            raise reset_needed("step")
        if self.state_.is_terminal():
            logger.warn("step() called after the game ended (terminated = True); call reset() for a new game")
            return self._observe(), 0.0, True, False, {"events": []}
        core, s = self.core, self.state_
        index = index_of(action, core.sizes[self.role], self.role)
        refused = self.masked == "fallback" and not core.mask(s, self.role)[index]
        played = core.fallback(s, self.role) if refused else index
        self.state_ = s.apply_action(typed_action(core, s, self.role, played))
        self._opponent_moves()
        before, self._utility = self._utility, core.utility(self.state_, self.role)
        reward = (self._utility - before) * self.reward_scale
        info = self._info()
        if refused:
            info["fallback"] = index
        return self._observe(), float(reward), self.state_.is_terminal(), False, info

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans (sb3-contrib's `MaskablePPO` convention)."""
        if self.state_ is None:
            raise reset_needed("action_masks")
        return self.core.mask(self.state_, self.role).astype(bool)

    def render(self):
        """The game's story so far (`render_mode="ansi"`), as `run` tells it."""
        if self.render_mode is None:
            return None
        if self.state_ is None:
            raise reset_needed("render")
        agents = {self.role: "learner", self.opponent_role: _name(self.opponent_spec)}
        return self.core.story(self.state_, self.seed_, agents)

    def _close_opponent(self) -> None:
        close = getattr(self.opponent, "close", None)
        if callable(close):
            close()

    def close(self) -> None:
        self._close_opponent()


def _name(opponent) -> str:
    from games.agents import spec_of

    return spec_of(opponent)


def contractsim_gym(
    contract,
    env: int,
    role: str = "supplier",
    opponent="rcc",
    floors: str = "cs14",
    reward_scale: float = 1.0,
    render_mode: str | None = None,
    masked: str = "fallback",
) -> ContractGym:
    """`role` of the ContractSim game of `contract` in environment `env` (floor rules `floors`, [CS-14a]) against
    `opponent` (`rcc`, `rc`, `re`, `random`, any registered agent or spec, or a Python agent)."""
    return ContractGym(ContractSimCore(contract, env, floors), role, opponent, reward_scale, render_mode, masked)


def ctbench_gym(
    contract,
    board: int | str,
    role: str = "red",
    opponent="planner",
    mode: str = "pfp",
    rules: str = "authors",
    visible: bool = True,
    reward_scale: float = 1.0,
    render_mode: str | None = None,
    masked: str = "fallback",
) -> ContractGym:
    """`role` of the CT-Bench game of `contract` on `board` against `opponent` (`planner`, any registered agent or
    spec, or a Python agent)."""
    core = CTBenchCore(contract, board, mode, rules, visible)
    return ContractGym(core, role, opponent, reward_scale, render_mode, masked)
