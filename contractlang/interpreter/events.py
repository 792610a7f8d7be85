"""Typed events the monitors consume; one JSON object per line in a trajectory log.

Every event of both games is an `EventBase`: a JSON object whose `type` names it, and which says itself in words
(`describe`). A game's log entries are these classes too: an entry of a wire type the monitors consume subclasses
the monitor's event (adding what the game knows about it, such as a CT-Bench round), and what a monitor enforces
is an event as well (`contractlang.interpreter.ctbench`), so one set of classes serves the monitors, the logs,
the stories, the viewer and `trace`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from contractlang.vocab import BOARD_SIZE, Frozen

# bounds far above any real game, so that a number in a log is never too large for the arithmetic after it
NonNegative = Annotated[int, Field(ge=0, le=10**15)]
Week = Annotated[int, Field(ge=1, le=11)]
BoardIndex = Annotated[int, Field(ge=0, le=BOARD_SIZE - 1)]


class EventBase(Frozen):
    """The envelope of every event and log entry of both games: `type` names it (the JSON's first key)."""

    type: str

    def describe(self) -> str:
        """The event in words, as the story, the viewer and `trace` tell it."""
        return self.type.replace("_", " ")


class WeekEvent(EventBase):
    """A ContractSim event of week `week`, 1..11 (ContractSim paper, Sec. 3)."""

    week: Week


class Payment(WeekEvent):
    """The Customer pays `amount` (setting dollars) in payment week `week`."""

    type: Literal["payment"] = "payment"
    amount: NonNegative

    def describe(self) -> str:
        return f"week {self.week}: the Customer pays ${self.amount:,}"


class Delivery(WeekEvent):
    """The Supplier delivers `qty` units of `product` in production week `week`."""

    type: Literal["delivery"] = "delivery"
    product: str
    qty: NonNegative

    def describe(self) -> str:
        return f"week {self.week}: the Supplier delivers {self.product} {self.qty}"


class WeekEnd(WeekEvent):
    """Closes week `week`: the monitor evaluates it and opens the next."""

    type: Literal["week_end"] = "week_end"

    def describe(self) -> str:
        return f"week {self.week} ends"


class ChipCounts(Frozen):
    red: NonNegative = 0
    blue: NonNegative = 0
    green: NonNegative = 0

    def of(self, colour: str) -> int:
        return getattr(self, colour)


class Holdings(Frozen):
    red: ChipCounts
    blue: ChipCounts

    def of(self, player: str) -> ChipCounts:
        return getattr(self, player)


class MoveAttempt(EventBase):
    """`player` tries to move onto `tile` (of colour `tile_colour`), holding `holdings` before paying."""

    type: Literal["move_attempt"] = "move_attempt"
    player: Literal["red", "blue"]
    tile: tuple[BoardIndex, BoardIndex]
    tile_colour: Literal["red", "blue", "green"]
    holdings: Holdings

    def describe(self) -> str:
        return f"{self.player} tries {self.tile} ({self.tile_colour})"


class GoalReached(EventBase):
    type: Literal["goal_reached"] = "goal_reached"
    player: Literal["red", "blue"]

    def describe(self) -> str:
        return f"{self.player} reaches the goal"


class GameEnd(EventBase):
    type: Literal["game_end"] = "game_end"

    def describe(self) -> str:
        return "game over"


ContractSimEvent = Annotated[Payment | Delivery | WeekEnd, Field(discriminator="type")]
CTBenchEvent = Annotated[MoveAttempt | GoalReached | GameEnd, Field(discriminator="type")]
Event = Annotated[Payment | Delivery | WeekEnd | MoveAttempt | GoalReached | GameEnd, Field(discriminator="type")]

EVENT_ADAPTER: TypeAdapter = TypeAdapter(Event)
CONTRACTSIM_TYPES = ("payment", "delivery", "week_end")
CTBENCH_TYPES = ("move_attempt", "goal_reached", "game_end")
EVENT_MODELS: dict[str, type[EventBase]] = {
    m.model_fields["type"].default: m for m in (Payment, Delivery, WeekEnd, MoveAttempt, GoalReached, GameEnd)
}


def monitor_events(log: Iterable[EventBase]) -> list[EventBase]:
    """A game's own log in the monitors' event schema (what `trace` replays): the events a monitor consumes,
    each as the monitor's own class with its own fields; the game's annotations (dues, shocks, orders, rounds,
    who paid a move) are left out."""
    events = []
    for entry in log:
        model = EVENT_MODELS.get(entry.type)
        if model is not None:
            events.append(
                entry if type(entry) is model else model(**{k: getattr(entry, k) for k in model.model_fields})
            )
    return events


def extra_fields(entry: dict) -> list[str]:
    """The fields `entry` has beyond its event type's own: a game's own log carries such annotations."""
    model = EVENT_MODELS.get(entry.get("type"))
    return [] if model is None else [k for k in entry if k not in model.model_fields]


class EventError(ValueError):
    """An event the monitor cannot accept in its current state (wrong week kind, out of order, …)."""
