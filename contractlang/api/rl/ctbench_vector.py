"""The vectorised CT-Bench environment: `num_envs` games of one board and contract stepped at once in compiled
code (games/ctbench/vector.py) behind gymnasium's `VectorEnv`, one player learning against a planner; an
opponent the engine cannot compile plays each game in Python behind the same arrays."""

from __future__ import annotations

import numpy as np

from contractlang.api.rl.cores import OFFERS, CTBenchCore
from contractlang.api.rl.single import ContractGym
from contractlang.api.rl.vector import GamesVectorEnv, num_envs_of


def offer_counts() -> np.ndarray:
    """The learners' offers (`OFFERS`, in `CTBENCH_ACTIONS` order) as six chip counts each: what the proposer gives
    then receives for a trade ([CT-16]), the tiles it covers then those it asks covered for an arrangement
    ([CT-17])."""
    from games.ctbench.log import Trade

    rows = []
    for _, offer in OFFERS:
        first, second = (offer.give, offer.receive) if isinstance(offer, Trade) else (offer.i_cover, offer.you_cover)
        rows.append([first.red, first.blue, first.green, second.red, second.blue, second.green])
    return np.array(rows, np.int64)


class GamesOneByOne:
    """The engine's arrays over `ContractGym`s, one per game: how an opponent the engine cannot compile (an LLM, an
    external program, a seeded random player, a Python agent) is played behind the vector API."""

    def __init__(self, core: CTBenchCore, n: int, role: str, opponent):
        self.games = [ContractGym(core, role, opponent) for _ in range(n)]
        self.obs = np.zeros((n, len(core.features[role])))
        self.mask = np.zeros((n, core.sizes[role]), np.int8)
        self.reward = np.zeros(n)
        self.done = np.zeros(n, np.bool_)
        self.fallback = np.zeros(n, np.bool_)

    def _keep(self, g: int, observation: dict) -> None:
        self.obs[g], self.mask[g] = observation["observation"], observation["action_mask"]

    def begin(self, games: np.ndarray, seeds: list[int]) -> None:
        for g, seed in zip(games, seeds):
            self._keep(g, self.games[g].reset(seed=seed)[0])

    def step(self, actions: np.ndarray, active: np.ndarray) -> None:
        for g in np.flatnonzero(active):
            observation, self.reward[g], self.done[g], _, info = self.games[g].step(int(actions[g]))
            self.fallback[g] = "fallback" in info
            self._keep(g, observation)

    def outcomes(self) -> dict[str, np.ndarray]:
        """`VectorGames.outcomes`, read from each game's `State`."""
        from contractlang.interpreter import ChipTransfer, ContractBlocked
        from games.ctbench.vector import END_REASONS

        states = [env.state_ for env in self.games]
        roles = self.games[0].core.roles

        def each(read, dtype=np.int64) -> np.ndarray:
            return np.array([read(s) for s in states], dtype)

        return {
            "utilities": each(lambda s: [s.final_score(p) if s.is_terminal() else 0 for p in roles]),
            "finished": each(lambda s: [p in s.finished for p in roles], bool),
            "forfeited": each(lambda s: [p in s.forfeited for p in roles], bool),
            "transfers": each(lambda s: sum(isinstance(e, ChipTransfer) for e in s.log)),
            "blocked": each(lambda s: sum(isinstance(e, ContractBlocked) for e in s.log)),
            "honoured": each(lambda s: s.stats.honoured),
            "points": each(lambda s: sum(t.amount for t in s.points)),
            "end": each(lambda s: END_REASONS.index(s.end_reason)),
        }


class CTBenchVectorEnv(GamesVectorEnv):
    """`num_envs` CT-Bench games of one contract on one board, the learner in `role` against `opponent`.
    Observations, masks, actions and rewards are those of `ctbench_gym` for the same seat (its features, the
    actions of `CTBENCH_ACTIONS`), as arrays with one row per game; a masked action falls back to doing nothing
    (`infos["fallback"]`). The planners `planner`, `conditional` and `exploiter` are played in compiled code; any
    other opponent `ctbench_gym` takes is played game by game in Python (`compiled` says which). An ended game's
    infos hold its outcomes (`VectorGames.outcomes`, games/ctbench/vector.py): `utilities`, its (P-Red, P-Blue)
    final scores ([CT-27]); `finished` and `forfeited` ([CT-24]), by player; the cover entries' chip `transfers`,
    the payments `blocked` ([CT-24a]), the coverages `honoured`, the `points` moved at the end ([CT-26]) and the `end` reason (an index
    into `END_REASONS`)."""

    def __init__(
        self,
        contract,
        board: int | str,
        num_envs: int,
        role: str = "red",
        opponent="planner",
        mode: str = "pfp",
        rules: str = "authors",
        visible: bool = True,
        reward_scale: float = 1.0,
        seed: int | None = None,
    ):
        from games.ctbench.vector import OPPONENTS, VectorGames

        num_envs = num_envs_of(num_envs)
        self._seat(CTBenchCore(contract, board, mode, rules, visible), role, num_envs, reward_scale, seed)
        core = self.core
        self.compiled = isinstance(opponent, str) and opponent in OPPONENTS
        if self.compiled:
            game = core.game
            self.engine = VectorGames(
                core.ir, game.board, game.mode, game.rules, game.visible, self.num_envs, role, opponent,
                offer_counts(), core.offer_mask, len(core.features[role]),
            )  # fmt: skip
        else:
            self.engine = GamesOneByOne(core, self.num_envs, role, opponent)

    def _begin(self, games: np.ndarray, seeds: list[int] | None) -> None:
        if self.compiled:  # the planners draw nothing at random: a game is its actions
            self.engine.begin(games)
        else:
            self.engine.begin(games, seeds if seeds is not None else self._rng.integers(2**31, size=len(games)))

    def close_extras(self, **kwargs) -> None:
        """Closes the opponents played game by game (an external program's process, for one)."""
        if not self.compiled:
            for game in self.engine.games:
                game.close()


def ctbench_vector_env(
    contract,
    board: int | str,
    num_envs: int,
    role: str = "red",
    opponent="planner",
    mode: str = "pfp",
    rules: str = "authors",
    visible: bool = True,
    reward_scale: float = 1.0,
    seed: int | None = None,
) -> CTBenchVectorEnv:
    """`num_envs` CT-Bench games of `contract` on `board` stepped at once, `role` learning against `opponent`
    (`planner`, `conditional`, `exploiter` in compiled code; any other agent `ctbench_gym` takes, game by game)."""
    return CTBenchVectorEnv(contract, board, num_envs, role, opponent, mode, rules, visible, reward_scale, seed)
