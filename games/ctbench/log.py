"""A CT-Bench game's log: typed events, one per thing that happened, told apart by `type`.

Their JSON is the log's line format (`run --log`, a sweep record's `log`); the fields and their order are the
format, so a log written before these types existed reads back unchanged. Every event is an `EventBase`; those
of a wire type the CT-Bench monitor consumes (`move_attempt`, `goal_reached`, `game_end`) are the monitor's own
event with what the game adds (the round, why the game ended).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from contractlang.interpreter import ChipTransfer, ContractBlocked, Enforcement, Forfeit
from contractlang.interpreter.events import ChipCounts, EventBase, GameEnd, GoalReached, MoveAttempt
from contractlang.vocab import Frozen
from games.ctbench.board import Colour, Player, Tile


class RoundEvent(EventBase):
    """A CT-Bench event of round `round` ([CT-07])."""

    round: int


class Trade(Frozen):
    """Regular trading: proposer gives `give` for the partner's `receive` ([CT-16])."""

    give: ChipCounts = Field(description="the chips the proposer gives")
    receive: ChipCounts = Field(description="the chips the proposer asks for in return")


class Arrangement(Frozen):
    """Pay-for-Partner: proposer pays for `i_cover` of the partner's tiles; partner for `you_cover` ([CT-17])."""

    i_cover: ChipCounts = Field(description="tiles of each colour of the partner's that the proposer pays for")
    you_cover: ChipCounts = Field(description="tiles of each colour of the proposer's that the partner pays for")


class Proposal(RoundEvent):
    type: Literal["proposal"] = "proposal"
    player: Player
    offer: Trade | Arrangement


class Response(RoundEvent):
    """The partner's answer; `executed` is false for an accepted trade that the chips could not cover ([CT-16])."""

    type: Literal["response"] = "response"
    player: Player
    accept: bool
    executed: bool


class Pass(RoundEvent):
    type: Literal["pass"] = "pass"
    player: Player


class RoundMoveAttempt(MoveAttempt, RoundEvent):
    """`player` tries to enter `tile`, both players holding `holdings` before anything is paid; the monitor's
    `move_attempt` in round `round` (its fields after `type` and `round`, as logs have always written them)."""


class ContractTransfer(EventBase):
    """A contract entry moved a chip from giver to receiver; `pays_move` when it was spent on the move ([CT-23])."""

    type: Literal["contract_transfer"] = "contract_transfer"
    kind: Literal["chip_transfer"] = "chip_transfer"
    giver: Player
    receiver: Player
    colour: Colour
    tile: Tile
    pays_move: bool


class ContractForfeit(EventBase):
    """The giver lacked the chip an entry asked for: its score is 0 ([CT-24], `paper` rules)."""

    type: Literal["forfeit"] = "forfeit"
    kind: Literal["forfeit"] = "forfeit"
    player: Player
    tile: Tile
    colour: Colour


class ContractPaymentBlocked(EventBase):
    """The giver lacked the chip: the entry did not pay and stays open ([CT-24a], `authors` rules)."""

    type: Literal["contract_blocked"] = "contract_blocked"
    kind: Literal["contract_blocked"] = "contract_blocked"
    giver: Player
    receiver: Player
    colour: Colour
    tile: Tile


class CoverageHonoured(RoundEvent):
    type: Literal["coverage_honoured"] = "coverage_honoured"
    payer: Player


class CoverageUnfulfilled(RoundEvent):
    """A Pay-for-Partner coverage not given: `why` is `refused` or `no chip` ([CT-18])."""

    type: Literal["coverage_unfulfilled"] = "coverage_unfulfilled"
    payer: Player
    why: Literal["refused", "no chip"]


class MoveFailed(RoundEvent):
    type: Literal["move_failed"] = "move_failed"
    player: Player
    tile: Tile


class Moved(RoundEvent):
    """`player` entered `tile`, paid by its own chip, its partner's coverage or the contract ([CT-08])."""

    type: Literal["moved"] = "moved"
    player: Player
    tile: Tile
    paid_by: Literal["own", "pfp", "contract"]


class RoundGoalReached(GoalReached, RoundEvent):
    """The monitor's `goal_reached` in round `round`."""


class ExplainedGameEnd(GameEnd):
    """The monitor's `game_end`, and why the game ended ([CT-13]-[CT-15])."""

    reason: str


LogEvent = Annotated[
    Proposal
    | Response
    | Pass
    | RoundMoveAttempt
    | ContractTransfer
    | ContractForfeit
    | ContractPaymentBlocked
    | CoverageHonoured
    | CoverageUnfulfilled
    | MoveFailed
    | Moved
    | RoundGoalReached
    | ExplainedGameEnd,
    Field(discriminator="type"),
]
LOG_EVENT: TypeAdapter = TypeAdapter(LogEvent)


def enforcement_event(action: Enforcement) -> ContractTransfer | ContractForfeit | ContractPaymentBlocked:
    """The log's record of what the monitor did about one contract entry (the same fields, and the log's type)."""
    kind = {ChipTransfer: ContractTransfer, Forfeit: ContractForfeit, ContractBlocked: ContractPaymentBlocked}
    return kind[type(action)](**action.model_dump())
