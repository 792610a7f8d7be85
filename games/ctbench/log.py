"""A CT-Bench game's log: typed events, one per thing that happened, told apart by `type`.

Their JSON is the log's line format (`run --log`, a sweep record's `log`); the fields and their order are the
format, so a log written before these types existed reads back unchanged. Every event is an `EventBase`; those
of a wire type the CT-Bench monitor consumes (`move_attempt`, `goal_reached`, `game_end`) are the monitor's own
event with what the game adds (the round, why the game ended); what the contract enforces (`contract_transfer`,
`forfeit`, `contract_blocked`) is the monitor's own enforcement event. Each says itself in words (`describe`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from contractlang.interpreter import ChipTransfer, ContractBlocked, Forfeit
from contractlang.interpreter.events import ChipCounts, EventBase, GameEnd, GoalReached, MoveAttempt
from contractlang.vocab import Frozen
from games.ctbench.board import Player, Tile


class RoundEvent(EventBase):
    """A CT-Bench event of round `round` ([CT-07]); a bare monitor log's events have none."""

    round: int | None = None


class Trade(Frozen):
    """Regular trading: proposer gives `give` for the partner's `receive` ([CT-16])."""

    give: ChipCounts = Field(description="the chips the proposer gives")
    receive: ChipCounts = Field(description="the chips the proposer asks for in return")

    def describe(self) -> str:
        return f"a trade: gives {_counts(self.give)} for {_counts(self.receive)}"


class Arrangement(Frozen):
    """Pay-for-Partner: proposer pays for `i_cover` of the partner's tiles; partner for `you_cover` ([CT-17])."""

    i_cover: ChipCounts = Field(description="tiles of each colour of the partner's that the proposer pays for")
    you_cover: ChipCounts = Field(description="tiles of each colour of the proposer's that the partner pays for")

    def describe(self) -> str:
        return f"Pay-for-Partner: covers {_counts(self.i_cover)} of the partner's tiles, asks {_counts(self.you_cover)}"


def _counts(c: ChipCounts) -> str:
    return ", ".join(f"{n} {k}" for k, n in c.model_dump().items() if n) or "nothing"


class Proposal(RoundEvent):
    type: Literal["proposal"] = "proposal"
    player: Player
    offer: Trade | Arrangement

    def describe(self) -> str:
        return f"{self.player} proposes {self.offer.describe()}"


class Response(RoundEvent):
    """The partner's answer; `executed` is false for an accepted trade that the chips could not cover ([CT-16])."""

    type: Literal["response"] = "response"
    player: Player
    accept: bool
    executed: bool

    def describe(self) -> str:
        failed = " (it could not be executed)" if self.accept and not self.executed else ""
        return f"{self.player} {'accepts' if self.accept else 'rejects'}{failed}"


class Pass(RoundEvent):
    type: Literal["pass"] = "pass"
    player: Player

    def describe(self) -> str:
        return f"{self.player} passes"


class RoundMoveAttempt(MoveAttempt, RoundEvent):
    """`player` tries to enter `tile`, both players holding `holdings` before anything is paid; the monitor's
    `move_attempt` in round `round` (its fields after `type` and `round`, as logs have always written them)."""


class CoverageHonoured(RoundEvent):
    type: Literal["coverage_honoured"] = "coverage_honoured"
    payer: Player

    def describe(self) -> str:
        return f"{self.payer} honours its Pay-for-Partner promise"


class CoverageUnfulfilled(RoundEvent):
    """A Pay-for-Partner coverage not given: `why` is `refused` or `no chip` ([CT-18])."""

    type: Literal["coverage_unfulfilled"] = "coverage_unfulfilled"
    payer: Player
    why: Literal["refused", "no chip"]

    def describe(self) -> str:
        return f"{self.payer} does not honour its promise ({self.why})"


class MoveFailed(RoundEvent):
    type: Literal["move_failed"] = "move_failed"
    player: Player
    tile: Tile

    def describe(self) -> str:
        return f"{self.player} cannot pay for {self.tile} and stays"


PAID = {
    "own": "with its own chip",
    "pfp": "covered by its partner (Pay-for-Partner)",
    "contract": "paid by the contract",
}


class Moved(RoundEvent):
    """`player` entered `tile`, paid by its own chip, its partner's coverage or the contract ([CT-08])."""

    type: Literal["moved"] = "moved"
    player: Player
    tile: Tile
    paid_by: Literal["own", "pfp", "contract"]

    def describe(self) -> str:
        return f"{self.player} moves to {self.tile} {PAID[self.paid_by]}"


class RoundGoalReached(GoalReached, RoundEvent):
    """The monitor's `goal_reached` in round `round`."""


class ExplainedGameEnd(GameEnd):
    """The monitor's `game_end`, and why the game ended ([CT-13]-[CT-15])."""

    reason: str = ""

    def describe(self) -> str:
        return f"game over: {self.reason}" if self.reason else "game over"


LogEvent = Annotated[
    Proposal
    | Response
    | Pass
    | RoundMoveAttempt
    | ChipTransfer
    | Forfeit
    | ContractBlocked
    | CoverageHonoured
    | CoverageUnfulfilled
    | MoveFailed
    | Moved
    | RoundGoalReached
    | ExplainedGameEnd,
    Field(discriminator="type"),
]
LOG_EVENT: TypeAdapter = TypeAdapter(LogEvent)
