"""PettingZoo Parallel environments of both games: every agent has the same padded observation and action
spaces, the observation starting with a one-hot role feature, so shared-policy recipes (SuperSuit, SB3, CleanRL,
RLlib) take them unchanged. The games are turn-based: each step the agent whose turn it is acts; the waiting
agent's mask allows only index 0, and whatever it sends is ignored."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.env_logger import EnvLogger

from contractlang.api.rl.aec import Storyteller, typed_action
from contractlang.api.rl.checks import (
    ActionError,
    Seeds,
    index_of,
    masked_of,
    render_mode_of,
    reset_needed,
    reward_scale_of,
)
from contractlang.api.rl.cores import ContractSimCore, CTBenchCore, Feature


def padded_features(core) -> dict[str, tuple[Feature, ...]]:
    """Per role: the role one-hot, then the role's own features, then padding to the widest role's count. A
    slot's range is the union of what it holds across roles, so every role has the same box."""
    roles = core.roles
    width = max(len(core.features[r]) for r in roles)
    onehot = [Feature(name=f"role={r}", unit="0/1", low=0, high=1) for r in roles]
    out = {}
    for r in roles:
        own = list(core.features[r])
        pad = [Feature(name=f"padding[{i}]", unit="always 0", low=0, high=0) for i in range(len(own), width)]
        out[r] = (*onehot, *own, *pad)
    return out


class ContractParallel(Storyteller, ParallelEnv):
    """Both roles of a game stepped together; rewards are each role's utility change since the previous step,
    times `reward_scale` (their sum over a game is the role's final utility less its utility at the start). A
    masked action of the acting agent is played as the game's zero action (`masked="fallback"`, its index then in
    `infos[agent]["fallback"]`) or refused with an `ActionError` (`masked="refuse"`)."""

    metadata = {"render_modes": ["ansi"], "name": "contractlang_parallel"}

    def __init__(
        self,
        core,
        seed: int,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        masked: str = "fallback",
    ):
        self.masked = masked_of(masked)
        self.core = core
        self.seeds = Seeds(seed)
        self.reward_scale = reward_scale_of(reward_scale)
        self.render_mode = render_mode_of(render_mode)
        self.possible_agents = list(core.roles)
        self.agents = []
        self._features = padded_features(core)
        slots = list(zip(*self._features.values()))
        low = np.array([min(f.low for f in slot) for slot in slots], np.float64)
        high = np.array([max(f.high for f in slot) for slot in slots], np.float64)
        self.width = len(slots)
        self.n = max(core.sizes.values())
        box = spaces.Box(low, high, dtype=np.float64)
        self._observation_space = spaces.Dict({"observation": box, "action_mask": spaces.Box(0, 1, (self.n,), np.int8)})
        self._action_space = spaces.Discrete(self.n)
        self.state_ = None
        self.seed_ = 0

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def features(self, agent) -> tuple[Feature, ...]:
        """Each entry of `agent`'s padded observation vector: name, unit and range."""
        return self._features[agent]

    def feature_names(self, agent) -> tuple[str, ...]:
        return tuple(f.name for f in self._features[agent])

    def _observe(self, agent) -> dict:
        core, s = self.core, self.state_
        vector = np.zeros(self.width, np.float64)
        roles = core.roles
        vector[roles.index(agent)] = 1.0
        own = core.observation(s, agent)
        vector[len(roles) : len(roles) + len(own)] = own
        mask = np.zeros(self.n, np.int8)
        if s.current_player() == agent:
            mask[: core.sizes[agent]] = core.mask(s, agent)
        elif not s.is_terminal():
            mask[0] = 1  # waiting: index 0, ignored
        return {"observation": vector, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.seed_ = self.seeds.next(seed)
        self.state_ = self.core.initial(self.seed_)
        self.agents = list(self.possible_agents)
        self._utilities = {a: self.core.utility(self.state_, a) for a in self.agents}
        return {a: self._observe(a) for a in self.agents}, {a: {"events": []} for a in self.agents}

    def step(self, actions: dict):
        """The acting agent's action from `actions` is played; a waiting agent may send only 0. A step once the
        game is over warns and returns empty dictionaries, as PettingZoo's own games do."""
        if self.state_ is None:
            raise reset_needed("step")
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return {}, {}, {}, {}, {}
        if not isinstance(actions, dict):
            raise ActionError(f"actions: {type(actions).__name__}; a dict from agent to action")
        unknown = sorted(set(map(str, actions)) - set(self.agents))
        if unknown:
            raise ActionError(f"actions: {', '.join(unknown)} not among the agents {', '.join(self.agents)}")
        s = self.state_
        actor = s.current_player()
        if actor not in actions:
            raise ActionError(f"actions: none for {actor}, whose turn it is")
        for agent, action in actions.items():
            index_of(action, self.n, agent)  # a waiting agent's action is ignored, but it must be one
        index = index_of(actions[actor], self.n, actor)
        legal = index < self.core.sizes[actor] and self.core.mask(s, actor)[index]
        refused = self.masked == "fallback" and not legal
        if index >= self.core.sizes[actor] and not refused:
            raise ActionError(
                f"action: {index} for {actor} is padding; its actions are 0..{self.core.sizes[actor] - 1}"
            )
        log_before = len(s.log)
        played = self.core.fallback(s, actor) if refused else index
        self.state_ = s.apply_action(typed_action(self.core, s, actor, played))
        events = [e.model_dump(mode="json") for e in self.state_.log[log_before:]]
        rewards = {}
        for a in self.agents:
            now = self.core.utility(self.state_, a)
            rewards[a] = (now - self._utilities[a]) * self.reward_scale
            self._utilities[a] = now
        over = self.state_.is_terminal()
        observations = {a: self._observe(a) for a in self.agents}
        terminations = {a: over for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {"events": events} for a in self.agents}
        if refused:
            infos[actor]["fallback"] = index
        if over:
            for a in self.agents:
                infos[a]["utilities"] = dict(self._utilities)
            self.agents = []
        return observations, rewards, terminations, truncations, infos


def contractsim_parallel_env(
    contract,
    env: int,
    seed: int = 42,
    reward_scale: float = 1.0,
    render_mode: str | None = None,
    floors: str = "cs14",
    masked: str = "fallback",
) -> ContractParallel:
    """Both roles of the ContractSim game of `contract` in environment `env` as a Parallel environment, their
    spaces padded to the same shape (floor rules `floors`, [CS-14a])."""
    return ContractParallel(ContractSimCore(contract, env, floors), seed, reward_scale, render_mode, masked)


def ctbench_parallel_env(
    contract,
    board: int | str,
    mode: str = "pfp",
    rules: str = "authors",
    visible: bool = True,
    seed: int = 0,
    reward_scale: float = 1.0,
    render_mode: str | None = None,
    masked: str = "fallback",
) -> ContractParallel:
    """Both roles of the CT-Bench game of `contract` on `board` as a Parallel environment."""
    core = CTBenchCore(contract, board, mode, rules, visible)
    return ContractParallel(core, seed, reward_scale, render_mode, masked)
