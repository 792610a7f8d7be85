"""A third game, registered only here: a two-round exchange under a one-clause contract. Alice sends Bob some of
her tokens; Bob sends some back; the clause ("Bob returns at least what Alice sent") moves any shortfall from Bob
to Alice when the game ends. Written against `games.game` and `games.agents` alone, it plays through `cl.play`,
`check_game_api`, the runner and the viewer's game list without touching either paper's game."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field

from contractlang.interpreter.events import EventBase
from contractlang.vocab import Frozen
from games.agents import play_out, register_agent, seated, spec_of
from games.game import GameType, PlayRecord, register_game

NAME = "exchange"
ROLES = ("alice", "bob")
MOST = 3  # tokens a player may send in its round
Role = Literal["alice", "bob"]


class Clause(Frozen):
    """The contract's one clause: Bob returns at least `share` times what Alice sent, or the difference is
    taken from him when the game ends."""

    share: float = Field(default=1.0, ge=0)


class ExchangeSetup(Frozen):
    start: int = Field(default=5, ge=0, le=20)  # each player's tokens at the start
    contract: Clause | None = Clause()


class Send(Frozen):
    kind: Literal["send"] = "send"
    amount: int = Field(description="tokens sent to the other player this round, 0 up to the sender's holding")


class ExchangeObservation(Frozen):
    role: Role
    round: int = Field(description="the round, 1 or 2")
    holdings: dict[str, int] = Field(description="each player's tokens now, by role")
    received: int = Field(description="the tokens the other player sent this game so far")


class Sent(EventBase):
    type: Literal["sent"] = "sent"
    round: int
    player: Role
    amount: int

    def describe(self) -> str:
        return f"round {self.round}: {self.player} sends {self.amount}"


class Enforced(EventBase):
    type: Literal["enforced"] = "enforced"
    amount: int

    def describe(self) -> str:
        return f"contract: {self.amount} taken from bob for alice"


class State(Frozen):
    setup: ExchangeSetup
    round: int = 1
    holdings: dict[str, int]
    sent: dict[str, int] = {}
    log: tuple[Sent | Enforced, ...] = ()

    def current_player(self) -> str | None:
        return None if self.is_terminal() else ROLES[self.round - 1]

    def is_terminal(self) -> bool:
        return self.round > len(ROLES)

    def legal_actions(self) -> list[Send]:
        return [Send(amount=k) for k in range(min(MOST, self.holdings[self.current_player()]) + 1)]

    def why_illegal(self, action) -> str | None:
        if not isinstance(action, Send):
            return f"{action!r} is not a send"
        if not 0 <= action.amount <= MOST:
            return f"sends {action.amount}; a player sends 0..{MOST}"
        if action.amount > self.holdings[self.current_player()]:
            return f"sends {action.amount} of the {self.holdings[self.current_player()]} tokens it holds"
        return None

    def apply_action(self, action) -> State:
        why = self.why_illegal(action)
        if why is not None:
            raise ValueError(why)
        me = self.current_player()
        other = ROLES[1 - ROLES.index(me)]
        holdings = {**self.holdings, me: self.holdings[me] - action.amount}
        holdings[other] += action.amount
        log = self.log + (Sent(round=self.round, player=me, amount=action.amount),)
        after = self.model_copy(
            update={"round": self.round + 1, "holdings": holdings, "sent": {**self.sent, me: action.amount}, "log": log}
        )
        return after._enforce() if after.is_terminal() else after

    def _enforce(self) -> State:
        clause = self.setup.contract
        if clause is None:
            return self
        owed = min(int(clause.share * self.sent.get("alice", 0)) - self.sent.get("bob", 0), self.holdings["bob"])
        if owed <= 0:
            return self
        holdings = {"alice": self.holdings["alice"] + owed, "bob": self.holdings["bob"] - owed}
        return self.model_copy(update={"holdings": holdings, "log": self.log + (Enforced(amount=owed),)})

    def observe(self, role: str) -> ExchangeObservation:
        other = ROLES[1 - ROLES.index(role)]
        return ExchangeObservation(
            role=role, round=self.round, holdings=self.holdings, received=self.sent.get(other, 0)
        )

    def returns(self) -> dict[str, int]:
        return dict(self.holdings)


GAME_TYPE = GameType(
    name=NAME,
    roles=ROLES,
    observations=dict.fromkeys(ROLES, ExchangeObservation),
    actions=dict.fromkeys(ROLES, Send),
    setup=ExchangeSetup,
    default_agents=dict.fromkeys(ROLES, "generous"),
    agent_modules=(__name__,),
    summary="a two-round exchange of tokens under a one-clause contract",
    events=Sent | Enforced,
)


class Exchange:
    game_type = GAME_TYPE

    def __init__(self, setup: ExchangeSetup):
        self.setup = setup

    def new_initial_state(self, seed: int) -> State:
        return State(setup=self.setup, holdings=dict.fromkeys(ROLES, self.setup.start))

    def play(self, agents: Mapping[str, Any], seed: int | None = None, *, llm=None) -> PlayRecord:
        seed = seed or 0
        with seated(agents, game=NAME, rng=np.random.default_rng(seed), contract=self.setup.contract) as seats:
            end = play_out(self.new_initial_state(seed), seats)
        returns = end.returns()
        return PlayRecord(
            game=NAME,
            setup=self.setup.model_dump(mode="json"),
            seed=seed,
            agents={role: spec_of(agents[role]) for role in ROLES},
            outcome=returns,
            events=end.log,
            rows=tuple({"player": r, "agent": spec_of(agents[r]), "tokens": returns[r]} for r in ROLES),
        )

    def describe(self, event: EventBase) -> str:
        return event.describe()

    def conserved(self, state: State) -> int:
        return sum(state.holdings.values())


class Generous:
    """Sends all it may."""

    name = "generous"

    def act(self, observation: ExchangeObservation) -> Send:
        return Send(amount=min(MOST, observation.holdings[observation.role]))


class Keeper:
    """Sends nothing."""

    name = "keeper"

    def act(self, observation: ExchangeObservation) -> Send:
        return Send(amount=0)


class Random:
    """Sends a random amount it may."""

    name = "random"

    def __init__(self, seat):
        self.rng = seat.rng

    def act(self, observation: ExchangeObservation) -> Send:
        return Send(amount=int(self.rng.integers(min(MOST, observation.holdings[observation.role]) + 1)))


register_game(GAME_TYPE, Exchange)
for _agent in (Generous, Keeper, Random):
    register_agent(_agent.name, game=NAME, builtin=True)(_agent)


class ExchangeJob(Frozen):
    """One game of a run: the seed and who plays each role."""

    seed: int
    alice: str
    bob: str


class ExchangeRun(PlayRecord):
    """A stored game of a run: its job beside the game's record."""

    job: ExchangeJob


def play_job(job: ExchangeJob) -> ExchangeRun:
    """The runner's work: one job played (in a worker process, which imports this module and so the game)."""
    from games.game import load_game

    record = load_game(NAME).play({"alice": job.alice, "bob": job.bob}, job.seed)
    return ExchangeRun(**dict(record), job=job)
