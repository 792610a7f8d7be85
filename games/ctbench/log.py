"""A CT-Bench game's log: typed events, one per thing that happened, told apart by `type`.

Their JSON is the log's line format (`run --log`, a sweep record's `log`); the fields and their order are the
format, so a log written before these types existed reads back unchanged.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, TypeAdapter

from contractlang.interpreter import ChipTransfer, ContractBlocked, Enforcement, Forfeit
from contractlang.interpreter.events import ChipCounts, Holdings
from contractlang.vocab import Frozen
from games.ctbench.board import Colour, Player, Tile


class Trade(Frozen):
    """Regular trading: proposer gives `give` for the partner's `receive` ([CT-16])."""

    give: ChipCounts
    receive: ChipCounts


class Arrangement(Frozen):
    """Pay-for-Partner: proposer pays for `i_cover` of the partner's tiles; partner for `you_cover` ([CT-17])."""

    i_cover: ChipCounts
    you_cover: ChipCounts


class Proposal(Frozen):
    type: Literal["proposal"] = "proposal"
    round: int
    player: Player
    offer: Trade | Arrangement


class Response(Frozen):
    """The partner's answer; `executed` is false for an accepted trade that the chips could not cover ([CT-16])."""

    type: Literal["response"] = "response"
    round: int
    player: Player
    accept: bool
    executed: bool


class Pass(Frozen):
    type: Literal["pass"] = "pass"
    round: int
    player: Player


class MoveTried(Frozen):
    """`player` tries to enter `tile`, both players holding `holdings` before anything is paid."""

    type: Literal["move_attempt"] = "move_attempt"
    round: int
    player: Player
    tile: Tile
    tile_colour: Colour
    holdings: Holdings


class ContractTransfer(Frozen):
    """A contract entry moved a chip from giver to receiver; `pays_move` when it was spent on the move ([CT-23])."""

    type: Literal["contract_transfer"] = "contract_transfer"
    kind: Literal["chip_transfer"] = "chip_transfer"
    giver: Player
    receiver: Player
    colour: Colour
    tile: Tile
    pays_move: bool


class ContractForfeit(Frozen):
    """The giver lacked the chip an entry asked for: its score is 0 ([CT-24], `paper` rules)."""

    type: Literal["forfeit"] = "forfeit"
    kind: Literal["forfeit"] = "forfeit"
    player: Player
    tile: Tile
    colour: Colour


class ContractPaymentBlocked(Frozen):
    """The giver lacked the chip: the entry did not pay and stays open ([CT-24a], `authors` rules)."""

    type: Literal["contract_blocked"] = "contract_blocked"
    kind: Literal["contract_blocked"] = "contract_blocked"
    giver: Player
    receiver: Player
    colour: Colour
    tile: Tile


class CoverageHonoured(Frozen):
    type: Literal["coverage_honoured"] = "coverage_honoured"
    round: int
    payer: Player


class CoverageUnfulfilled(Frozen):
    """A Pay-for-Partner coverage not given: `why` is `refused` or `no chip` ([CT-18])."""

    type: Literal["coverage_unfulfilled"] = "coverage_unfulfilled"
    round: int
    payer: Player
    why: Literal["refused", "no chip"]


class MoveFailed(Frozen):
    type: Literal["move_failed"] = "move_failed"
    round: int
    player: Player
    tile: Tile


class Moved(Frozen):
    """`player` entered `tile`, paid by its own chip, its partner's coverage or the contract ([CT-08])."""

    type: Literal["moved"] = "moved"
    round: int
    player: Player
    tile: Tile
    paid_by: Literal["own", "pfp", "contract"]


class GoalEntered(Frozen):
    type: Literal["goal_reached"] = "goal_reached"
    round: int
    player: Player


class GameOver(Frozen):
    type: Literal["game_end"] = "game_end"
    reason: str


LogEvent = Annotated[Union[Proposal, Response, Pass, MoveTried, ContractTransfer, ContractForfeit,
                           ContractPaymentBlocked, CoverageHonoured, CoverageUnfulfilled, MoveFailed, Moved,
                           GoalEntered, GameOver], Field(discriminator="type")]
LOG_EVENT: TypeAdapter = TypeAdapter(LogEvent)


def enforcement_event(action: Enforcement) -> ContractTransfer | ContractForfeit | ContractPaymentBlocked:
    """The log's record of what the monitor did about one contract entry (the same fields, and the log's type)."""
    kind = {ChipTransfer: ContractTransfer, Forfeit: ContractForfeit, ContractBlocked: ContractPaymentBlocked}
    return kind[type(action)](**action.model_dump())
