"""PettingZoo AEC environments of both games under a contract (extra `[rl]`), so reinforcement-learning libraries
can train agents that play under contracts. Actions are indices into a fixed discrete space; each observation is
`{"observation": features, "action_mask": legal actions}`; `infos[agent]["events"]` holds the game's new log
entries (the Monitor's payments, deliveries, week ends and breaches; CT-Bench moves and coverage) since that
agent last acted. Rewards are the games' returns, paid when the game ends."""

from __future__ import annotations

import itertools

import numpy as np

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError("contractlang.api.rl needs PettingZoo: pip install 'contractlang[rl]'") from exc

from contractlang.api.language import Board, ContractLike, Environment, as_checked
from contractlang.errors import Flag, Seed, Text, checked


class _ContractEnv(AECEnv):
    """The AEC loop both games share; a game supplies its state, features, action decoding and masks."""

    metadata = {"render_modes": ["ansi"], "name": "contractlang", "is_parallelizable": False}

    def __init__(
        self, roles: tuple[str, ...], sizes: dict[str, int], features: dict[str, int], render_mode: str | None = None
    ):
        super().__init__()
        self.possible_agents = list(roles)
        self.render_mode = render_mode
        self._action_spaces = {r: spaces.Discrete(sizes[r]) for r in roles}
        self._observation_spaces = {
            r: spaces.Dict(
                {
                    "observation": spaces.Box(-np.inf, np.inf, (features[r],), np.float64),
                    "action_mask": spaces.Box(0, 1, (sizes[r],), np.int8),
                }
            )
            for r in roles
        }
        self.state_ = None

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.state_ = self._initial(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"events": []} for a in self.agents}
        self._seen = 0
        self.agent_selection = self.state_.current_player()

    def observe(self, agent):
        return {"observation": self._features(agent), "action_mask": self._mask(agent)}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        if not self._mask(agent)[int(action)]:
            raise ValueError(f"action {action} is masked out for {agent}")
        self.state_ = self.state_.apply_action(self._decode(agent, int(action)))
        log = self.state_.log
        events = [e.model_dump(mode="json") for e in log[self._seen :]]
        self._seen = len(log)
        self.infos = {a: {"events": events} for a in self.agents}
        if self.state_.is_terminal():
            returns = self.state_.returns()
            self.rewards = {a: float(returns[a]) for a in self.agents}
            self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {a: 0.0 for a in self.agents}
            self.agent_selection = self.state_.current_player()
        self._accumulate_rewards()

    def render(self):
        return None if self.render_mode is None else str(self.state_.observe(self.agent_selection))

    def close(self) -> None:
        pass


class ContractSimEnv(_ContractEnv):
    """ContractSim (ContractSim paper, Sec. 3; [CS-05]-[CS-07]): the Customer pays an amount 0..budget; the Supplier orders or produces a
    triple, each quantity 0..order cap, as one index (q1·(cap+1)² + q2·(cap+1) + q3); played under the floor rule
    set `floors` ([CS-14a])."""

    @checked
    def __init__(
        self, contract: ContractLike, env: Environment, seed: Seed = 42, render_mode: Text | None = None,
        floors: Text = "cs14",
    ):  # fmt: skip
        from games.contractsim.environments import environment
        from games.contractsim.game import ContractSimGame

        ir = as_checked(contract).ir
        self.env = environment(env, floors)
        self.game = ContractSimGame.make(ir, self.env)
        self.default_seed = seed
        side = self.env.order_cap + 1
        self.triples = np.array(list(itertools.product(range(side), repeat=3)))
        super().__init__(
            ("customer", "supplier"),
            {"customer": self.env.budget + 1, "supplier": side**3},
            {"customer": 5, "supplier": 26},
            render_mode,
        )

    def _initial(self, seed):
        from games.contractsim.shocks import draw_shocks

        return self.game.new_initial_state(
            draw_shocks(self.env, np.random.default_rng(self.default_seed if seed is None else seed))
        )

    def _features(self, agent) -> np.ndarray:
        s = self.state_
        if agent == "customer":
            due = s.monitor.payment_due() if s.phase == "pay" else 0
            breach = s.observed_breach("customer") if not s.is_terminal() else 0
            return np.array([s.week, s.paid_total, s.budget_left, due, breach], np.float64)
        acting = s.phase in ("order", "produce")  # the due and the prices exist only in a production week
        prices, due = (s.prices, s.monitor.delivery_due()) if acting else ((0, 0, 0), (0, 0, 0))
        return np.array(
            [
                s.week,
                s.phase == "produce",
                s.round_index if acting else -1,
                s.cash,
                *s.inventory,
                *prices,
                *s.spoiled,
                *s.received,
                self.env.order_cap,
                *due,
                *s.monitor.memory,
                s.observed_breach("supplier") if not s.is_terminal() else 0,
                s.paid_total,
                s.spend_total,
            ],
            np.float64,
        )

    def _mask(self, agent) -> np.ndarray:
        s = self.state_
        size = self._action_spaces[agent].n
        mask = np.zeros(size, np.int8)
        if s.is_terminal() or s.current_player() != agent:
            return mask
        if s.phase == "pay":
            mask[: s.budget_left + 1] = 1
        elif s.phase == "order":
            mask[:] = self.triples @ np.array(s.prices) <= s.cash
        else:
            q, n = self.triples, s.inventory
            mask[:] = (q[:, 0] + q[:, 1] <= min(n[0], n[1])) & (q[:, 0] + q[:, 2] <= n[2])
        return mask

    def _decode(self, agent, index: int):
        from games.contractsim.game import Order, Pay, Produce

        if agent == "customer":
            return Pay(amount=index)
        triple = tuple(int(x) for x in self.triples[index])
        return Order(quantities=triple) if self.state_.phase == "order" else Produce(quantities=triple)


CTBENCH_ACTIONS = ("no proposal", "accept", "reject", "honour", "refuse", "pass", "up", "down", "left", "right")
STEPS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


class CTBenchEnv(_ContractEnv):
    """CT-Bench under a programmable contract: proposals are limited to none (offers are open-ended), answers,
    honours, and moves to a neighbour or pass, as indices into CTBENCH_ACTIONS."""

    @checked
    def __init__(
        self,
        contract: ContractLike,
        board: Board,
        mode: Text = "pfp",
        rules: Text = "authors",
        visible: Flag = True,
        render_mode: Text | None = None,
    ):
        from contractlang.interpreter import Rules
        from games.ctbench.board import board_ref
        from games.ctbench.game import CTBenchGame

        checked = as_checked(contract)
        bench = board_ref(str(board), header=checked.ir.board_set)
        self.game = CTBenchGame(
            board=bench.board,
            mode=mode,
            condition="file",
            contract=checked.ir,
            visible=visible,
            rules=Rules.named(rules),
        )
        size = len(bench.board.rows())
        self.colours = np.array(
            [[("red", "blue", "green").index(bench.board.colour((r, c))) for c in range(size)] for r in range(size)],
            np.float64,
        ).ravel()
        n = len(CTBENCH_ACTIONS)
        super().__init__(
            ("red", "blue"),
            {"red": n, "blue": n},
            {"red": 16 + len(self.colours), "blue": 16 + len(self.colours)},
            render_mode,
        )

    def _initial(self, seed):
        return self.game.new_initial_state()

    def _features(self, agent) -> np.ndarray:
        from games.ctbench.game import other

        s = self.state_
        partner = other(agent)
        phase = [s.phase == p for p in ("propose", "respond", "move", "honour")]
        mine, theirs = s.chips(agent), s.chips(partner)
        partner_seen = self.game.visible
        return np.array(
            [
                s.round,
                *phase,
                *s.position(agent),
                mine.red,
                mine.blue,
                mine.green,
                *(s.position(partner) if partner_seen else (-1, -1)),
                *((theirs.red, theirs.blue, theirs.green) if partner_seen else (-1, -1, -1)),
                agent in s.finished,
                *self.colours,
            ],
            np.float64,
        )

    def _actions(self) -> list:
        from games.ctbench.game import Honour, Move, Propose, Respond

        s = self.state_
        here = s.position(s.current_player()) if s.phase == "move" else (0, 0)
        return [
            Propose(offer=None),
            Respond(accept=True),
            Respond(accept=False),
            Honour(honour=True),
            Honour(honour=False),
            Move(tile=None),
            *(Move(tile=(here[0] + dr, here[1] + dc)) for dr, dc in STEPS.values()),
        ]

    def _mask(self, agent) -> np.ndarray:
        s = self.state_
        if s.is_terminal() or s.current_player() != agent:
            return np.zeros(len(CTBENCH_ACTIONS), np.int8)
        return np.array([s.why_illegal(a) is None for a in self._actions()], np.int8)

    def _decode(self, agent, index: int):
        return self._actions()[index]


def contractsim_env(
    contract, env: int, seed: int = 42, render_mode: str | None = None, floors: str = "cs14"
) -> ContractSimEnv:
    """The ContractSim game of `contract` (a file or a checked contract) in environment `env` under the floor rule
    set `floors` ([CS-14a]); `reset(seed)` draws the shocks from the seed ([CS-11]), `seed` when none is given."""
    return ContractSimEnv(contract, env, seed, render_mode, floors)


def ctbench_env(
    contract,
    board: int | str,
    mode: str = "pfp",
    rules: str = "authors",
    visible: bool = True,
    render_mode: str | None = None,
) -> CTBenchEnv:
    """The CT-Bench game of `contract` on `board` (ID or SET:ID), in `mode`, its entries enforced by `rules`."""
    return CTBenchEnv(contract, board, mode, rules, visible, render_mode)
