"""The CT-Bench game engine in OpenSpiel's shape: an immutable game, states with `legal_actions`,
`apply_action`, per-player observations and `returns` (CT-Bench paper, Sec. 2–2.4).

Contracts are enforced only through the interpreter's CT-Bench monitor: Prog-Trading and Prog-Points entries
directly, NL-Trading moves once the judge has found them covered ([CT-25]); the engine never reads a coverage
term itself.
"""

from __future__ import annotations

from typing import Literal, Protocol, Union

from pydantic import Field

from contractlang.interpreter import ChipTransfer, CTBenchMonitor, Forfeit, PointsTransfer, Rules, compile
from contractlang.interpreter.ctbench import JudgedMoveAttempt
from contractlang.interpreter.events import ChipCounts, GameEnd, GoalReached, Holdings, MoveAttempt
from contractlang.ir import CoverageTerm, CTBenchIR, PointsTerm
from contractlang.vocab import Frozen
from games.ctbench.board import (
    CHIP_VALUE,
    COLOUR_ORDER,
    GOAL,
    GOAL_BONUS,
    INITIAL_CHIPS,
    PLAYERS,
    START,
    Board,
    Colour,
    Player,
    Tile,
    neighbours,
)
from games.ctbench.log import (
    Arrangement,
    CoverageHonoured,
    CoverageUnfulfilled,
    ExplainedGameEnd,
    LogEvent,
    Moved,
    MoveFailed,
    Pass,
    Proposal,
    Response,
    RoundGoalReached,
    RoundMoveAttempt,
    Trade,
)

Mode = Literal["pfp", "trade"]
Condition = Literal["none", "prog_trading", "prog_points", "nl_trading", "file"]
MAX_ROUNDS = 100  # [CT-15]
REPEAT_LIMIT = 3  # [CT-13]
REPEAT_COUNTED_AFTER = 2  # the authors' loop records the state after each turn but its first (our round 1)


def other(player: Player) -> Player:
    return "blue" if player == "red" else "red"


def chips_add(c: ChipCounts, colour: str, delta: int) -> ChipCounts:
    return c.model_copy(update={colour: c.of(colour) + delta})


def total(c: ChipCounts) -> int:
    return c.red + c.blue + c.green


# --- actions -------------------------------------------------------------------------


class Propose(Frozen):
    kind: Literal["propose"] = "propose"
    offer: Trade | Arrangement | None = Field(
        default=None, description="a chip trade (regular trading) or a coverage arrangement (Pay-for-Partner); none"
    )


class Respond(Frozen):
    kind: Literal["respond"] = "respond"
    accept: bool = Field(description="accept the partner's pending offer")


class Move(Frozen):
    kind: Literal["move"] = "move"
    tile: Tile | None = Field(
        default=None, description="the (row, column) to step onto, one of `legal_moves`; none passes"
    )


class Honour(Frozen):
    kind: Literal["honour"] = "honour"
    honour: bool = Field(description="pay the chip for the partner's covered move (false defects)")


Action = Union[Propose, Respond, Move, Honour]


class Promise(Frozen):
    """Remaining PfP coverage: `payer` pays for `remaining` of `beneficiary`'s tiles of `colour`."""

    payer: Player = Field(description="who pays the chips")
    beneficiary: Player = Field(description="whose moves they pay for")
    colour: Colour = Field(description="the colour of the tiles covered")
    remaining: int = Field(description="tiles of that colour still to be paid for")


class JudgeDecision(Frozen):
    covered: bool
    giver: Player | None = None
    colour: Colour | None = None


class Judge(Protocol):
    """NL-Trading judge ([CT-25]): is this move covered by the negotiated agreement?"""

    def __call__(
        self,
        transcript: str,
        mover: Player,
        origin: Tile,
        target: Tile,
        colour: Colour,
        executed: tuple[tuple[Tile, Player], ...],
    ) -> JudgeDecision: ...


class CTBenchObservation(Frozen):
    """What `player` may know when asked to act ([CT-28]): the board, its own state, the partner's state only
    when visible, the promises and contract terms still open, and what it is being asked about."""

    player: Player = Field(description="the player asked: red (P-Red) or blue (P-Blue)")
    board: Board = Field(description="the 5×5 board: each tile's colour, both players' starts and the goal")
    board_rows: tuple[str, ...] = Field(description="the board as text, row 0 at the top (R red, B blue, G green)")
    mode: Mode = Field(description="pfp (Pay-for-Partner) or trade (regular chip trading)")
    condition: Condition = Field(description="the contract condition: none, prog_trading, prog_points, nl_trading")
    visible: bool = Field(description="whether the partner's position and chips are shown")
    round: int = Field(description="this round, from 1")
    phase: Literal["propose", "respond", "move", "honour"] = Field(
        description="what is asked now: an offer, an answer to the partner's, a move, or honouring a coverage"
    )
    position: Tile = Field(description="the player's tile, (row, column)")
    chips: ChipCounts = Field(description="the player's chips of each colour")
    partner_position: Tile | None = Field(description="the partner's tile; None when its state is hidden")
    partner_chips: ChipCounts | None = Field(description="the partner's chips; None when its state is hidden")
    finished: tuple[Player, ...] = Field(description="the players who have reached the goal")
    promises: tuple[Promise, ...] = Field(description="Pay-for-Partner coverage still owed, both ways")
    open_coverage: tuple[CoverageTerm, ...] = Field(description="Prog-Trading contract entries not used yet")
    points: tuple[PointsTerm, ...] = Field(description="Prog-Points terms: points owed on finishing")
    transcript: str = Field(description="NL-Trading: the agreement the judge reads")
    nl_executed: tuple[tuple[Tile, Player], ...] = Field(
        description="NL-Trading: the (tile, mover) moves the judge has executed under the agreement"
    )
    pending_offer: Trade | Arrangement | None = Field(description="respond phase: the partner's offer")
    pending_colour: Colour | None = Field(description="honour phase: the colour of the coverage asked for")
    last_rejected: tuple[Player, ...] = Field(description="players whose last offer was not executed")
    partner_defections: int = Field(description="coverages the partner left unfulfilled so far")
    legal_moves: tuple[Tile, ...] = Field(description="move phase: the tiles next to `position`")

    def position_of(self, player: Player) -> Tile | None:
        return self.position if player == self.player else self.partner_position

    def chips_of(self, player: Player) -> ChipCounts | None:
        return self.chips if player == self.player else self.partner_chips

    def coverage_for(self, beneficiary: Player, colour: str) -> Promise | None:
        return next(
            (p for p in self.promises if p.beneficiary == beneficiary and p.colour == colour and p.remaining > 0), None
        )

    def text(self) -> str:
        """The observation as text for a person or a language model (the partner's state only when visible)."""
        me = self.chips
        lines = [f"Round {self.round}. You are {self.player}. Board (row 0 at top; R red, B blue, G green):"]
        lines += ["  " + row for row in self.board_rows]
        lines.append(f"You are at {self.position} holding red {me.red}, blue {me.blue}, green {me.green}.")
        if self.partner_chips is not None:
            o = self.partner_chips
            lines.append(
                f"{other(self.player)} is at {self.partner_position} holding red {o.red}, blue {o.blue}, "
                f"green {o.green}."
            )
        for p in self.promises:
            if p.remaining:
                lines.append(f"Promise: {p.payer} pays for {p.remaining} {p.colour} tile(s) of {p.beneficiary}.")
        for c in self.open_coverage:
            lines.append(f"Contract: {c.giver} pays for {c.receiver}'s move onto {c.tile}.")
        for t in self.points:
            lines.append(f"Contract: {t.giver} transfers {t.amount} points to {t.receiver} on finishing.")
        lines.append(f"Phase: {self.phase}.")
        return "\n".join(lines)

    def legal_actions(self) -> list[Action]:
        """All legal actions; in the proposal phase only `no proposal` is listed (offers are open-ended,
        validated by `is_legal`)."""
        return legal_actions(self.phase, self.legal_moves)

    def is_legal(self, action: Action) -> bool:
        return is_legal(self.phase, self.mode, self.legal_moves, action)

    def why_illegal(self, action) -> str | None:
        return why_illegal(self.phase, self.mode, self.legal_moves, action)


def legal_actions(phase: str, moves: tuple[Tile, ...]) -> list[Action]:
    """The legal actions in `phase`, with `moves` the tiles next to the mover (move phase)."""
    if phase == "propose":
        return [Propose(offer=None)]
    if phase == "respond":
        return [Respond(accept=True), Respond(accept=False)]
    if phase == "honour":
        return [Honour(honour=True), Honour(honour=False)]
    return [Move(tile=None)] + [Move(tile=t) for t in moves]


def is_legal(phase: str, mode: Mode, moves: tuple[Tile, ...], action: Action) -> bool:
    return why_illegal(phase, mode, moves, action) is None


PHASE_ACTIONS = {"propose": Propose, "respond": Respond, "move": Move, "honour": Honour}


def why_illegal(phase: str, mode: Mode, moves: tuple[Tile, ...], action) -> str | None:
    """Why `action` is illegal in `phase`, in words (None when legal): offers must suit the mode and put
    something on the table ([CT-16], [CT-17]); a move goes to a tile next to the mover ([CT-02])."""
    wanted = PHASE_ACTIONS.get(phase)
    if wanted is None:
        return "the game is over"
    if not isinstance(action, wanted):
        kind = getattr(action, "kind", type(action).__name__)
        return f"a {kind} action in the {phase} phase, which takes a {phase} action"
    if phase == "propose":
        offer = action.offer
        if offer is None:
            return None
        if isinstance(offer, Trade):
            if mode != "trade":
                return "offers a trade in a Pay-for-Partner game; offer an arrangement"
            if total(offer.give) == 0 or total(offer.receive) == 0:
                return "offers a trade that gives or receives no chip"
            return None
        if mode != "pfp":
            return "offers a Pay-for-Partner arrangement in a trading game; offer a trade"
        if total(offer.i_cover) + total(offer.you_cover) == 0:
            return "offers an arrangement that covers no chip"
        return None
    if phase == "move" and action.tile is not None and action.tile not in moves:
        return (
            f"moves onto {action.tile}, which is not next to the mover; it may move onto "
            f"{', '.join(map(str, moves)) or 'no tile'} or pass"
        )
    return None


class CTBenchGame(Frozen):
    """Immutable description of one game: board, trading mode, contract condition, visibility, and the rules its
    contract is enforced by ([CT-24a]; the paper's text unless told otherwise)."""

    board: Board
    mode: Mode = "pfp"
    condition: Condition = "none"
    contract: CTBenchIR | None = None
    transcript: str = ""
    visible: bool = True
    max_rounds: int = MAX_ROUNDS
    rules: Rules = Rules.named("paper")

    def new_initial_state(self, judge: Judge | None = None) -> State:
        if self.condition == "nl_trading" and judge is None:
            raise ValueError("an NL-Trading game needs a judge")
        contract = self.contract
        if self.condition == "nl_trading":  # no terms of its own: the judge supplies each covered move's entry
            contract = CTBenchIR(name="nl-agreement", parties=("P-Red", "P-Blue"))
        monitor = compile(contract, self.rules) if contract is not None else None
        chips = {p: ChipCounts(**INITIAL_CHIPS[p]) for p in PLAYERS}
        state = State(game=self, judge=judge, monitor=monitor, red_chips=chips["red"], blue_chips=chips["blue"])
        return state._start_round()


class Stats(Frozen):
    trades: int = 0
    chips_traded: int = 0  # chips that changed hands in executed trades, both directions (trade volume)
    proposals: int = 0
    arrangements_proposed: int = 0
    arrangements_accepted: int = 0
    honoured: int = 0
    unfulfilled: int = 0
    contract_moves: int = 0
    moves: int = 0
    failed_moves: int = 0
    chips_spent: int = 0


class PendingMove(Frozen):
    player: Player
    origin: Tile
    target: Tile
    colour: Colour
    payer: Player


class State(Frozen):
    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    game: CTBenchGame
    judge: object | None = None
    monitor: CTBenchMonitor | None = None
    round: int = 0
    phase: Literal["propose", "respond", "move", "honour", "over"] = "propose"
    actor_index: int = 0  # index into the players acting in this phase, in order red, blue
    red_pos: Tile = START
    blue_pos: Tile = START
    red_chips: ChipCounts
    blue_chips: ChipCounts
    promises: tuple[Promise, ...] = ()
    pending_offer: Propose | None = None
    pending_move: PendingMove | None = None
    finished: tuple[Player, ...] = ()
    forfeited: tuple[Player, ...] = ()
    nl_executed: tuple[tuple[Tile, Player], ...] = ()
    seen: tuple[tuple, ...] = ()
    stats: Stats = Stats()
    last_rejected: tuple[Player, ...] = ()
    partner_defections: tuple[int, int] = (0, 0)  # unfulfilled coverages by red, by blue
    log: tuple[LogEvent, ...] = ()
    end_reason: str = ""
    points: tuple[PointsTransfer, ...] = ()

    # --- accessors -------------------------------------------------------------------

    def position(self, player: Player) -> Tile:
        return self.red_pos if player == "red" else self.blue_pos

    def chips(self, player: Player) -> ChipCounts:
        return self.red_chips if player == "red" else self.blue_chips

    def holdings(self) -> Holdings:
        return Holdings(red=self.red_chips, blue=self.blue_chips)

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def _acting_players(self) -> list[Player]:
        return [p for p in PLAYERS if p not in self.finished]

    def current_player(self) -> Player | None:
        if self.phase == "over":
            return None
        if self.phase == "respond":
            return other(self._acting_players()[self.actor_index])
        if self.phase == "honour":
            return self.pending_move.payer
        return self._acting_players()[self.actor_index]

    def coverage_for(self, beneficiary: Player, colour: str) -> Promise | None:
        for p in self.promises:
            if p.beneficiary == beneficiary and p.colour == colour and p.remaining > 0:
                return p
        return None

    def defections_by(self, player: Player) -> int:
        return self.partner_defections[PLAYERS.index(player)]

    # --- OpenSpiel-style API -------------------------------------------------------------

    def _moves(self) -> tuple[Tile, ...]:
        return tuple(neighbours(self.position(self.current_player()))) if self.phase == "move" else ()

    def legal_actions(self) -> list[Action]:
        """The acting player's legal actions, as its observation lists them."""
        return [] if self.phase == "over" else legal_actions(self.phase, self._moves())

    def is_legal(self, action: Action) -> bool:
        return self.why_illegal(action) is None

    def why_illegal(self, action) -> str | None:
        """Why `action` is illegal now, in words; None when it is legal."""
        return why_illegal(self.phase, self.game.mode, self._moves(), action)

    def apply_action(self, action: Action) -> State:
        if not self.is_legal(action):
            raise ValueError(f"illegal action {action!r} in phase {self.phase}")
        if self.phase == "propose":
            return self._propose(action)
        if self.phase == "respond":
            return self._respond(action)
        if self.phase == "honour":
            return self._honour(action)
        return self._move(action)

    def returns(self) -> dict[Player, int]:
        """Final scores r_i after contract effects ([CT-27]); only meaningful once terminal."""
        return {p: self.final_score(p) for p in PLAYERS}

    def raw_score(self, player: Player) -> int:
        """20 + 5·chips on the goal, else 0 (CT-Bench paper, Sec. 2), before contract transfers."""
        if self.position(player) != GOAL:
            return 0
        return GOAL_BONUS + CHIP_VALUE * total(self.chips(player))

    def final_score(self, player: Player) -> int:
        if player in self.forfeited:
            return 0
        score = self.raw_score(player)
        for t in self.points:
            score += t.amount if t.receiver == player else -t.amount if t.giver == player else 0
        return score

    def observe(self, player: Player) -> CTBenchObservation:
        """`player`'s typed observation now (the acting player's, when an agent is asked to act)."""
        partner = other(player)
        visible = self.game.visible
        coverage: tuple[CoverageTerm, ...] = ()
        points: tuple[PointsTerm, ...] = ()
        if self.monitor is not None:
            coverage = tuple(c for i, c in enumerate(self.monitor.ir.coverage) if not self.monitor.used[i])
            points = self.monitor.ir.points
        offer = self.pending_offer.offer if self.phase == "respond" and self.pending_offer is not None else None
        return CTBenchObservation(
            player=player,
            board=self.game.board,
            board_rows=tuple(self.game.board.rows()),
            mode=self.game.mode,
            condition=self.game.condition,
            visible=visible,
            round=self.round,
            phase=self.phase,
            position=self.position(player),
            chips=self.chips(player),
            partner_position=self.position(partner) if visible else None,
            partner_chips=self.chips(partner) if visible else None,
            finished=self.finished,
            promises=self.promises,
            open_coverage=coverage,
            points=points,
            transcript=self.game.transcript,
            nl_executed=self.nl_executed,
            pending_offer=offer,
            pending_colour=self.pending_move.colour if self.phase == "honour" else None,
            last_rejected=self.last_rejected,
            partner_defections=self.defections_by(partner),
            legal_moves=self._moves() if player == self.current_player() else (),
        )

    # --- transitions ---------------------------------------------------------------------

    def _signature(self) -> tuple:
        used = self.monitor.used if self.monitor is not None else ()
        return (self.red_pos, self.blue_pos, self.red_chips, self.blue_chips, self.promises, used, self.nl_executed)

    def _no_move_possible(self) -> bool:
        """[CT-14]: no unfinished player can pay for any adjacent tile even with the partner's chips."""
        pool = {c: self.red_chips.of(c) + self.blue_chips.of(c) for c in COLOUR_ORDER}
        for p in self._acting_players():
            if any(pool[self.game.board.colour(t)] > 0 for t in neighbours(self.position(p))):
                return False
        return True

    def _start_round(self) -> State:
        s = self
        reason = ""
        sig = s._signature()
        seen = s.seen + (sig,) if s.round >= REPEAT_COUNTED_AFTER else s.seen
        if len(s.finished) == 2:
            reason = "both players reached the goal"
        elif s._no_move_possible():
            reason = "no further move is possible"
        elif seen.count(sig) >= REPEAT_LIMIT:
            reason = f"the same state began {REPEAT_LIMIT} rounds"
        elif s.round >= s.game.max_rounds:
            reason = f"the {s.game.max_rounds}-round cap"
        if reason:
            return s._end(reason)
        return s.model_copy(update={"round": s.round + 1, "phase": "propose", "actor_index": 0, "seen": seen})

    def _end(self, reason: str) -> State:
        points: tuple[PointsTransfer, ...] = ()
        monitor = self.monitor
        if monitor is not None:
            monitor = monitor.apply(GameEnd())
            points = tuple(a for a in monitor.last_actions if isinstance(a, PointsTransfer))
        entry = ExplainedGameEnd(reason=reason)
        return self.model_copy(
            update={
                "phase": "over",
                "end_reason": reason,
                "monitor": monitor,
                "points": points,
                "log": self.log + (entry,),
            }
        )

    def _advance(self, phase_done: str) -> State:
        """Next actor in the phase, or the next phase / round."""
        nxt = self.actor_index + 1
        if nxt < len(self._acting_players()):
            return self.model_copy(update={"phase": phase_done, "actor_index": nxt})
        if phase_done == "propose":
            if not self._acting_players():
                return self._start_round()
            return self.model_copy(update={"phase": "move", "actor_index": 0})
        return self._start_round()

    def _set_chips(self, player: Player, chips: ChipCounts) -> dict:
        return {f"{player}_chips": chips}

    def _propose(self, action: Propose) -> State:
        player = self.current_player()
        if action.offer is None:
            return self._advance("propose")
        stats = self.stats.model_copy(
            update={
                "proposals": self.stats.proposals + 1,
                "arrangements_proposed": self.stats.arrangements_proposed + isinstance(action.offer, Arrangement),
            }
        )
        entry = Proposal(round=self.round, player=player, offer=action.offer)
        return self.model_copy(
            update={"phase": "respond", "pending_offer": action, "stats": stats, "log": self.log + (entry,)}
        )

    def _respond(self, action: Respond) -> State:
        proposer = self._acting_players()[self.actor_index]
        responder = other(proposer)
        offer = self.pending_offer.offer
        update: dict = {"pending_offer": None}
        executed = False
        if action.accept and isinstance(offer, Trade):
            give, receive = offer.give, offer.receive
            mine, theirs = self.chips(proposer), self.chips(responder)
            if all(mine.of(c) >= give.of(c) and theirs.of(c) >= receive.of(c) for c in COLOUR_ORDER):
                for c in COLOUR_ORDER:
                    mine = chips_add(mine, c, receive.of(c) - give.of(c))
                    theirs = chips_add(theirs, c, give.of(c) - receive.of(c))
                update.update({**self._set_chips(proposer, mine), **self._set_chips(responder, theirs)})
                update["stats"] = self.stats.model_copy(
                    update={
                        "trades": self.stats.trades + 1,
                        "chips_traded": self.stats.chips_traded + total(give) + total(receive),
                    }
                )
                executed = True
        elif action.accept and isinstance(offer, Arrangement):
            promises = list(self.promises)
            for payer, beneficiary, counts in (
                (proposer, responder, offer.i_cover),
                (responder, proposer, offer.you_cover),
            ):
                for c in COLOUR_ORDER:
                    if counts.of(c):
                        promises = _add_promise(promises, payer, beneficiary, c, counts.of(c))
            update["promises"] = tuple(promises)
            update["stats"] = self.stats.model_copy(
                update={"arrangements_accepted": self.stats.arrangements_accepted + 1}
            )
            executed = True
        rejected = tuple(p for p in self.last_rejected if p != proposer) + (() if executed else (proposer,))
        update["last_rejected"] = rejected
        entry = Response(round=self.round, player=responder, accept=action.accept, executed=executed)
        state = self.model_copy(update={**update, "log": self.log + (entry,)})
        return state._advance("propose")

    def _move(self, action: Move) -> State:
        player = self.current_player()
        if action.tile is None:
            entry = Pass(round=self.round, player=player)
            return self.model_copy(update={"log": self.log + (entry,)})._advance("move")
        target = action.tile
        colour = self.game.board.colour(target)
        state = self
        entry = RoundMoveAttempt(
            round=self.round, player=player, tile=target, tile_colour=colour, holdings=self.holdings()
        )
        state = state.model_copy(update={"log": state.log + (entry,)})
        paid, state = state._contract_payment(player, target, colour)
        if paid:
            return state._arrive(player, target, "contract")
        promise = state.coverage_for(player, colour) if state.game.mode == "pfp" else None
        if promise is not None:
            if state.chips(promise.payer).of(colour) >= 1:
                pending = PendingMove(
                    player=player, origin=state.position(player), target=target, colour=colour, payer=promise.payer
                )
                return state.model_copy(update={"phase": "honour", "pending_move": pending})
            state = state._defect(promise.payer, "no chip")
        return state._pay_own(player, target, colour)

    def _contract_payment(self, player: Player, target: Tile, colour: Colour) -> tuple[bool, State]:
        """Contract entry first ([CT-08]): the monitor (Prog-Trading) or the judge (NL-Trading)."""
        if self.monitor is None:
            return False, self
        update: dict = {}
        event = MoveAttempt(player=player, tile=target, tile_colour=colour, holdings=self.holdings())
        if self.game.condition == "nl_trading":
            d = self.judge(self.game.transcript, player, self.position(player), target, colour, self.nl_executed)
            if not d.covered:
                return False, self
            update["nl_executed"] = self.nl_executed + ((target, player),)
            entry = CoverageTerm(tile=target, giver=d.giver, receiver=player, colour=d.colour or colour)
            event = JudgedMoveAttempt(**event.model_dump(), entry=entry)
        monitor = self.monitor.apply(event)
        update["monitor"] = monitor
        actions = monitor.last_actions
        state = self.model_copy(update=update)
        paid = False
        for a in actions:
            if isinstance(a, ChipTransfer):
                giver_chips = chips_add(state.chips(a.giver), a.colour, -1)
                update = state._set_chips(a.giver, giver_chips)
                if a.pays_move:
                    paid = True
                    update["stats"] = state.stats.model_copy(
                        update={
                            "contract_moves": state.stats.contract_moves + 1,
                            "chips_spent": state.stats.chips_spent + 1,
                        }
                    )
                else:
                    update.update(state._set_chips(a.receiver, chips_add(state.chips(a.receiver), a.colour, 1)))
            elif isinstance(a, Forfeit):
                update = {"forfeited": state.forfeited + ((a.player,) if a.player not in state.forfeited else ())}
            else:  # a blocked payment ([CT-24a]) changes nothing but the log
                update = {}
            state = state.model_copy(update={**update, "log": state.log + (a,)})
        return paid, state

    def _defect(self, payer: Player, why: str) -> State:
        counts = list(self.partner_defections)
        counts[PLAYERS.index(payer)] += 1
        entry = CoverageUnfulfilled(round=self.round, payer=payer, why=why)
        return self.model_copy(
            update={
                "stats": self.stats.model_copy(update={"unfulfilled": self.stats.unfulfilled + 1}),
                "partner_defections": tuple(counts),
                "log": self.log + (entry,),
            }
        )

    def _honour(self, action: Honour) -> State:
        pm = self.pending_move
        state = self.model_copy(update={"pending_move": None, "phase": "move"})
        if action.honour:
            promises = tuple(
                p.model_copy(update={"remaining": p.remaining - 1})
                if (p.payer, p.beneficiary, p.colour) == (pm.payer, pm.player, pm.colour) and p.remaining
                else p
                for p in state.promises
            )
            update = state._set_chips(pm.payer, chips_add(state.chips(pm.payer), pm.colour, -1))
            update["promises"] = promises
            update["stats"] = state.stats.model_copy(
                update={"honoured": state.stats.honoured + 1, "chips_spent": state.stats.chips_spent + 1}
            )
            entry = CoverageHonoured(round=self.round, payer=pm.payer)
            state = state.model_copy(update={**update, "log": state.log + (entry,)})
            return state._arrive(pm.player, pm.target, "pfp")
        state = state._defect(pm.payer, "refused")
        return state._pay_own(pm.player, pm.target, pm.colour)

    def _pay_own(self, player: Player, target: Tile, colour: Colour) -> State:
        mine = self.chips(player)
        if mine.of(colour) < 1:
            entry = MoveFailed(round=self.round, player=player, tile=target)
            stats = self.stats.model_copy(update={"failed_moves": self.stats.failed_moves + 1})
            return self.model_copy(update={"log": self.log + (entry,), "stats": stats})._advance("move")
        update = self._set_chips(player, chips_add(mine, colour, -1))
        update["stats"] = self.stats.model_copy(update={"chips_spent": self.stats.chips_spent + 1})
        return self.model_copy(update=update)._arrive(player, target, "own")

    def _arrive(self, player: Player, target: Tile, paid_by: str) -> State:
        update: dict = {f"{player}_pos": target, "stats": self.stats.model_copy(update={"moves": self.stats.moves + 1})}
        entry = Moved(round=self.round, player=player, tile=target, paid_by=paid_by)
        log = self.log + (entry,)
        if target == GOAL:
            update["finished"] = self.finished + (player,)
            if self.monitor is not None:
                update["monitor"] = self.monitor.apply(GoalReached(player=player))
            log += (RoundGoalReached(round=self.round, player=player),)
        state = self.model_copy(update={**update, "log": log})
        if target == GOAL:
            # the finisher leaves the acting order; the next unfinished player keeps its turn index
            acting_before = [p for p in PLAYERS if p not in self.finished]
            idx = acting_before.index(player)
            state = state.model_copy(update={"actor_index": idx - 1})
        return state._advance("move")


def _add_promise(promises: list[Promise], payer: Player, beneficiary: Player, colour: str, count: int):
    for i, p in enumerate(promises):
        if (p.payer, p.beneficiary, p.colour) == (payer, beneficiary, colour):
            promises[i] = p.model_copy(update={"remaining": p.remaining + count})
            return promises
    return promises + [Promise(payer=payer, beneficiary=beneficiary, colour=colour, remaining=count)]
