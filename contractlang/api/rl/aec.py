"""PettingZoo AEC environments of both games: one role acts at a time; each observation is `{"observation":
features, "action_mask": legal actions}`; `infos[agent]["events"]` holds the game's new log entries (the
Monitor's payments, deliveries, week ends and breaches; CT-Bench moves and coverage) since the last step.
Rewards are the games' returns, paid when the game ends."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from contractlang.api.rl.checks import ActionError, EnvInputError, Seeds, index_of, render_mode_of, reset_needed
from contractlang.api.rl.cores import ContractSimCore, CTBenchCore, Feature


def observation_space(features: tuple[Feature, ...], actions: int) -> spaces.Dict:
    """The features' box, bounded by each feature's range, and the action mask."""
    low = np.array([f.low for f in features], np.float64)
    high = np.array([f.high for f in features], np.float64)
    return spaces.Dict(
        {"observation": spaces.Box(low, high, dtype=np.float64), "action_mask": spaces.Box(0, 1, (actions,), np.int8)}
    )


def typed_action(core, state, agent: str, action):
    """`action` (an index) as the game's typed action: in the space and not masked out, else an `ActionError`
    naming the rule it breaks."""
    index = index_of(action, core.sizes[agent], agent)
    if not core.mask(state, agent)[index]:
        typed = core.decode(state, agent, index)
        why = state.why_illegal(typed) or "it is masked out"
        raise ActionError(f"action: {index} for {agent} is masked out: {why}")
    return core.decode(state, agent, index)


class Storyteller:
    """`render` and `close` of the environments where both roles learn: the story so far, both told as learners."""

    def render(self):
        """The game's story so far (`render_mode="ansi"`), as `run` tells it."""
        if self.render_mode is None:
            return None
        if self.state_ is None:
            raise reset_needed("render")
        return self.core.story(self.state_, self.seed_, {r: "learner" for r in self.core.roles})

    def close(self) -> None:
        pass


class ContractAEC(Storyteller, AECEnv):
    """The AEC loop both games share."""

    metadata = {"render_modes": ["ansi"], "name": "contractlang", "is_parallelizable": False}

    def __init__(self, core, seed: int, render_mode: str | None = None):
        super().__init__()
        self.core = core
        self.seeds = Seeds(seed)
        self.possible_agents = list(core.roles)
        self.render_mode = render_mode_of(render_mode)
        self._action_spaces = {r: spaces.Discrete(core.sizes[r]) for r in core.roles}
        self._observation_spaces = {r: observation_space(core.features[r], core.sizes[r]) for r in core.roles}
        self.state_ = None
        self.seed_ = 0

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_spaces[agent]

    def features(self, agent) -> tuple[Feature, ...]:
        """Each entry of `agent`'s observation vector: name, unit and range."""
        return self.core.features[agent]

    def feature_names(self, agent) -> tuple[str, ...]:
        return tuple(f.name for f in self.core.features[agent])

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.seed_ = self.seeds.next(seed)
        self.state_ = self.core.initial(self.seed_)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"events": []} for a in self.agents}
        self._seen = 0
        self.agent_selection = self.state_.current_player()

    def observe(self, agent):
        if self.state_ is None:
            raise reset_needed("observe")
        if agent not in self.possible_agents:
            raise EnvInputError(f"agent: {agent!r} is not one of {', '.join(self.possible_agents)}")
        return {
            "observation": self.core.observation(self.state_, agent),
            "action_mask": self.core.mask(self.state_, agent),
        }

    def step(self, action) -> None:
        """One move of the agent selected; after the game ends each finished agent takes its dead step (action
        None), and a step once every agent is gone warns and does nothing, as PettingZoo's own games do."""
        if self.state_ is None:
            raise reset_needed("step")
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ActionError(f"action: {action!r} for {agent}, whose game is over; its only action is None")
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.state_ = self.state_.apply_action(typed_action(self.core, self.state_, agent, action))
        log = self.state_.log
        events = [e.model_dump(mode="json") for e in log[self._seen :]]
        self._seen = len(log)
        self.infos = {a: {"events": events} for a in self.agents}
        if self.state_.is_terminal():
            self.rewards = {a: self.core.utility(self.state_, a) for a in self.agents}
            self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {a: 0.0 for a in self.agents}
            self.agent_selection = self.state_.current_player()
        self._accumulate_rewards()


def contractsim_env(
    contract, env: int, seed: int = 42, render_mode: str | None = None, floors: str = "cs14"
) -> ContractAEC:
    """The ContractSim game of `contract` (a file or a checked contract) in environment `env` under the floor rule
    set `floors` ([CS-14a]); `reset(seed)` draws the shocks from the seed ([CS-11]); `reset()` from the next draw
    of a generator seeded by the last seed given (`seed` at first)."""
    return ContractAEC(ContractSimCore(contract, env, floors), seed, render_mode)


def ctbench_env(
    contract,
    board: int | str,
    mode: str = "pfp",
    rules: str = "authors",
    visible: bool = True,
    render_mode: str | None = None,
) -> ContractAEC:
    """The CT-Bench game of `contract` on `board` (ID or SET:ID), in `mode`, its entries enforced by `rules`."""
    return ContractAEC(CTBenchCore(contract, board, mode, rules, visible), 0, render_mode)
