"""The CT-Bench monitor: what a Prog-Trading / Prog-Points contract enforces, and when.

Semantics: CT-Bench paper, Sec. 2.4 — [CT-08] contract entries pay before anything else, [CT-22]
single-use entries fired by the receiver's first attempt onto the tile, [CT-23] off-colour
transfers, [CT-24] forfeit when the giver lacks the chip, [CT-26] points on the giver's finish.
[CT-24a]: the `authors` rules replace [CT-23] and [CT-24] by what the authors' engine does; one
monitor serves both, switch by switch (`Rules`).
"""

from __future__ import annotations

from typing import ClassVar, Literal, Union

from contractlang.interpreter.events import (
    CTBENCH_TYPES,
    CTBenchEvent,
    EventBase,
    EventError,
    GameEnd,
    GoalReached,
    MoveAttempt,
)
from contractlang.ir import CoverageTerm, CTBenchIR
from contractlang.vocab import Frozen, RuleSet

Player = Literal["red", "blue"]


class Rules(Frozen):
    """How contract entries are enforced: each switch on is one of the authors' engine's readings ([CT-24a]),
    off the paper's text."""

    tile_colour: bool  # (1) the chip moved is the tile's colour and the mover's partner gives it ([CT-23] off)
    block_not_forfeit: bool  # (2) a giver without the chip blocks the payment; no forfeit, entry kept ([CT-24] off)
    exact_keys: bool  # (3) a judge entry pays only if its key is written exactly "(r,c)" (read where the JSON is)

    @classmethod
    def named(cls, name: RuleSet) -> Rules:
        on = name == "authors"
        return cls(tile_colour=on, block_not_forfeit=on, exact_keys=on)

    def payment(self, entry: CoverageTerm, tile_colour: str) -> tuple[Player, str]:
        """Who gives which chip when `entry` fires on a tile of `tile_colour`: as written, a missing colour
        meaning the tile's ([CT-23]), or the mover's partner and the tile's colour ([CT-24a] (1))."""
        if self.tile_colour:
            return ("blue" if entry.receiver == "red" else "red"), tile_colour
        return entry.giver, entry.colour or tile_colour

    @property
    def name(self) -> str:
        """`authors`, `paper`, or the switches that are on, for a mixture."""
        for preset in ("authors", "paper"):
            if self == Rules.named(preset):
                return preset
        return "+".join(k for k, v in self.model_dump().items() if v)


# What the monitor enforces is an event of the game's log too: `type` is its log type, `kind` the monitor's name
# for it (both are the format of logs and `trace` reports).


class ChipTransfer(EventBase):
    """A contract entry moves one `colour` chip from giver to receiver; `pays_move` when it matches the tile and
    is spent on it ([CT-22], [CT-23])."""

    type: Literal["contract_transfer"] = "contract_transfer"
    kind: Literal["chip_transfer"] = "chip_transfer"
    giver: Player
    receiver: Player
    colour: Literal["red", "blue", "green"]
    tile: tuple[int, int]
    pays_move: bool

    def describe(self) -> str:
        use = "" if self.pays_move else " (off-colour: the receiver still pays the tile)"
        return f"contract: {self.giver} gives {self.receiver} a {self.colour} chip for {self.tile}{use}"


class Forfeit(EventBase):
    """The giver could not honour a coverage entry: its final score is 0 ([CT-24], `paper` rules)."""

    type: Literal["forfeit"] = "forfeit"
    kind: Literal["forfeit"] = "forfeit"
    player: Player
    tile: tuple[int, int]
    colour: Literal["red", "blue", "green"]

    def describe(self) -> str:
        return f"contract: {self.player} lacks a {self.colour} chip for {self.tile}: forfeits (score 0)"


class ContractBlocked(EventBase):
    """[CT-24a] (2): the giver lacks the chip, so the entry does not pay this move; nobody forfeits and the
    entry stays usable (`authors` rules)."""

    type: Literal["contract_blocked"] = "contract_blocked"
    kind: Literal["contract_blocked"] = "contract_blocked"
    giver: Player
    receiver: Player
    colour: Literal["red", "blue", "green"]
    tile: tuple[int, int]

    def describe(self) -> str:
        return (
            f"contract: {self.giver} lacks a {self.colour} chip for {self.tile}: the contract does not pay this "
            "move; the entry stays open"
        )


class PointsTransfer(EventBase):
    """A Prog-Points entry at the game's end: the giver, on the goal, transfers `amount` points ([CT-26])."""

    type: Literal["points_transfer"] = "points_transfer"
    kind: Literal["points_transfer"] = "points_transfer"
    giver: Player
    receiver: Player
    amount: int

    def describe(self) -> str:
        return f"contract: {self.giver} transfers {self.amount} points to {self.receiver}"


Enforcement = Union[ChipTransfer, Forfeit, ContractBlocked, PointsTransfer]


class JudgedMoveAttempt(MoveAttempt):
    """An NL-Trading move the judge found covered by `entry` ([CT-25]): enforced exactly as a Prog-Trading
    entry would be, transfer or forfeit."""

    entry: CoverageTerm


class CTBenchMonitor(Frozen):
    KIND: ClassVar[str] = CTBenchIR.model_fields["kind"].default  # the contracts it monitors
    EVENTS: ClassVar[tuple[str, ...]] = CTBENCH_TYPES  # the event types it consumes

    ir: CTBenchIR
    rules: Rules = Rules.named("paper")
    used: tuple[bool, ...] = ()
    finished: tuple[Player, ...] = ()
    forfeited: tuple[Player, ...] = ()
    ended: bool = False
    actions: tuple[Enforcement, ...] = ()
    last_actions: tuple[Enforcement, ...] = ()

    def model_post_init(self, _context) -> None:
        if len(self.used) != len(self.ir.coverage):
            object.__setattr__(self, "used", (False,) * len(self.ir.coverage))

    def open_entries(self, player: Player) -> list[int]:
        """Indices of coverage entries that would still pay for `player`'s moves."""
        return [i for i, c in enumerate(self.ir.coverage) if c.receiver == player and not self.used[i]]

    def apply(self, event: CTBenchEvent) -> CTBenchMonitor:
        if self.ended:
            raise EventError("the game has ended; no further events are accepted")
        if isinstance(event, MoveAttempt):
            if event.player in self.finished:
                raise EventError(f"{event.player} is on the goal and cannot move")
            return self._move(event)
        if isinstance(event, GoalReached):
            if event.player in self.finished:
                raise EventError(f"{event.player} reached the goal twice")
            return self._with((), finished=self.finished + (event.player,))
        assert isinstance(event, GameEnd)
        actions = tuple(
            PointsTransfer(giver=p.giver, receiver=p.receiver, amount=p.amount)
            for p in self.ir.points
            if p.giver in self.finished and p.amount > 0
        )
        return self._with(actions, ended=True)

    def _move(self, event: MoveAttempt) -> CTBenchMonitor:
        if isinstance(event, JudgedMoveAttempt):
            return self._enforce(event.entry, event)
        for i, entry in enumerate(self.ir.coverage):
            if self.used[i] or entry.receiver != event.player or entry.tile != event.tile:
                continue
            return self._enforce(entry, event, used=self.used[:i] + (True,) + self.used[i + 1 :])
        return self._with(())

    def _enforce(self, entry: CoverageTerm, event: MoveAttempt, **update) -> CTBenchMonitor:
        """[CT-22]–[CT-24]: the giver's chip goes to the receiver (spent on the move if it matches the tile), or
        the giver forfeits when it has none; under [CT-24a] the partner gives a chip of the tile's colour, and a
        giver without one only blocks the payment, leaving the entry open."""
        giver, colour = self.rules.payment(entry, event.tile_colour)
        if event.holdings.of(giver).of(colour) >= 1:
            action: Enforcement = ChipTransfer(
                giver=giver,
                receiver=entry.receiver,
                colour=colour,
                tile=event.tile,
                pays_move=colour == event.tile_colour,
            )
            return self._with((action,), **update)
        if self.rules.block_not_forfeit:
            return self._with((ContractBlocked(giver=giver, receiver=entry.receiver, colour=colour, tile=event.tile),))
        forfeited = self.forfeited if giver in self.forfeited else self.forfeited + (giver,)
        return self._with((Forfeit(player=giver, tile=event.tile, colour=colour),), forfeited=forfeited, **update)

    def _with(self, actions: tuple[Enforcement, ...], **update) -> CTBenchMonitor:
        return self.model_copy(update={**update, "actions": self.actions + actions, "last_actions": actions})
