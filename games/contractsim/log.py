"""The log of a ContractSim game: typed entries, discriminated by `type`, in the order they happened.

Payments and deliveries are the monitor's own events (`contractlang.interpreter.events`); a week end carries
what the monitor found for the week; shocks and orders are the simulator's annotations. Every entry is a
`WeekEvent`; `contractlang.interpreter.events.monitor_events` picks out the monitor's own. Money is in the
setting's dollars except the shocks' input prices, which are base units ([CS-01]). The JSON of an entry is
the object a `run --json` trajectory holds, so records written before the log was typed load unchanged.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Tag, TypeAdapter

from contractlang.interpreter.events import Delivery, Payment, WeekEnd, WeekEvent
from contractlang.ir import Triple


class PaymentWeekEnd(WeekEnd):
    """A payment week closed: the amount that was due (deductions applied, eq. 7) and whether it was paid."""

    due: int
    compliant: bool


class ProductionWeekEnd(WeekEnd):
    """A production week closed: the delivery that was required (carried deficits included) and whether it
    was met."""

    required: Triple
    compliant: bool


class WeekShocks(WeekEvent):
    """A production week opens: what spoiled from the leftover inventory ([CS-06]) and this round's input
    prices (base units)."""

    type: Literal["shocks"] = "shocks"
    spoiled: Triple
    prices: Triple


class OrderPlaced(WeekEvent):
    """The Supplier's order, what it cost, what arrived, and the inventory after the receipts (capped, [CS-07])."""

    type: Literal["order"] = "order"
    order: Triple
    cost: int
    received: Triple
    inventory: Triple


def _type(entry) -> str | None:
    return entry.get("type") if isinstance(entry, dict) else getattr(entry, "type", None)


# both week ends are `week_end`: the one that validates (a due, or a required delivery) is the one it is
LogEntry = Annotated[
    Annotated[Payment, Tag("payment")]
    | Annotated[Delivery, Tag("delivery")]
    | Annotated[PaymentWeekEnd | ProductionWeekEnd, Tag("week_end")]
    | Annotated[WeekShocks, Tag("shocks")]
    | Annotated[OrderPlaced, Tag("order")],
    Discriminator(_type),
]
LOG_ADAPTER: TypeAdapter = TypeAdapter(tuple[LogEntry, ...])


def delivered(log: tuple[LogEntry, ...], week: int) -> list[int]:
    """The quantities delivered in `week`, in product order."""
    return [e.qty for e in log if isinstance(e, Delivery) and e.week == week]
