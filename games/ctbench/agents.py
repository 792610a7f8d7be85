"""Offline CT-Bench agents: rational yardsticks that make the benchmark runnable without API keys.

An agent (games/agents.py) receives its typed observation (`State.observe(player)`) and returns a typed
action, like an external or LLM agent; planning therefore uses only what the player may see. Each is
registered under its name for both players.
"""

from __future__ import annotations

from typing import Union

import numpy as np

from contractlang.interpreter.events import ChipCounts
from games.agents import AgentError, Seat, register_agent, register_llm_agent
from games.ctbench.board import COLOUR_ORDER, GOAL, Board, Player, Tile, simple_paths
from games.ctbench.game import (
    Action,
    Arrangement,
    CTBenchObservation,
    Honour,
    Move,
    Propose,
    Respond,
    Trade,
    other,
)
from games.ctbench.judge import agreed_terms
from games.ctbench.llm_agents import LlmPlayer
from games.ctbench.negotiation import SPEAKER, Confirm, NegotiationObservation, PathInfo, Say
from games.external import ExternalAgent

GAME = "ctbench"
AnyAction = Union[Action, Say, Confirm]  # what an external CT-Bench agent may answer


def _counts(d: dict[str, int]) -> ChipCounts:
    return ChipCounts(**{c: max(0, d.get(c, 0)) for c in COLOUR_ORDER})


class Plan:
    """A player's cheapest route to the goal given its chips, PfP coverage and open contract entries."""

    def __init__(self, obs: CTBenchObservation, player: Player, chips: ChipCounts | None = None):
        board: Board = obs.board
        self.player = player
        held = chips if chips is not None else obs.chips_of(player)
        cover = {c: 0 for c in COLOUR_ORDER}
        for p in obs.promises:
            if p.beneficiary == player:
                cover[p.colour] += p.remaining
        contract_tiles: set[Tile] = set()
        if obs.condition == "nl_trading":
            agreed = agreed_terms(obs.transcript)
            open_entries = [
                e for e in (agreed.coverage if agreed else ()) if (e.tile, e.receiver) not in obs.nl_executed
            ]
        else:
            open_entries = list(obs.open_coverage)
        for entry in open_entries:
            if entry.receiver == player and (entry.colour or board.colour(entry.tile)) == board.colour(entry.tile):
                contract_tiles.add(entry.tile)
        source = obs.position_of(player)
        best = None
        for path in simple_paths(source, GOAL) if source != GOAL else ((GOAL,),):
            need = {c: 0 for c in COLOUR_ORDER}
            for tile in path[1:]:
                if tile not in contract_tiles:
                    need[board.colour(tile)] += 1
            own_need = {c: max(0, need[c] - cover[c]) for c in COLOUR_ORDER}
            short = {c: max(0, own_need[c] - held.of(c)) for c in COLOUR_ORDER}
            key = (sum(short.values()), len(path), path)
            if best is None or key < best[0]:
                best = (key, path, own_need, short)
        _, self.path, self.own_need, self.short = best
        self.shortfall = sum(self.short.values())
        self.spare = {c: max(0, held.of(c) - self.own_need[c]) for c in COLOUR_ORDER}

    @property
    def next_tile(self) -> Tile | None:
        return self.path[1] if len(self.path) > 1 else None


class CooperativePlanner:
    """Plans the cheapest path, asks for what it lacks, offers what it can spare, honours what it can afford."""

    name = "planner"

    def act(self, obs: CTBenchObservation | NegotiationObservation) -> Action | Say | Confirm:
        if isinstance(obs, NegotiationObservation):
            return scripted_negotiation(obs)
        if obs.phase == "propose":
            return self.propose(obs)
        if obs.phase == "respond":
            return Respond(accept=self.accepts(obs))
        if obs.phase == "honour":
            return Honour(honour=self.honours(obs))
        return self.move(obs)

    # proposals
    def propose(self, obs: CTBenchObservation) -> Propose:
        player = obs.player
        if player in obs.last_rejected:
            return Propose(offer=None)  # give the partner a round before asking again
        mine = Plan(obs, player)
        theirs = Plan(obs, other(player)) if obs.visible else None
        want = {c: n for c, n in mine.short.items() if n}
        give = {c: min(n, mine.spare[c]) for c, n in theirs.short.items() if n} if theirs else {}
        give = {c: n for c, n in give.items() if n}
        if not want and not give:
            return Propose(offer=None)
        if obs.mode == "pfp":
            return Propose(offer=Arrangement(i_cover=_counts(give), you_cover=_counts(want)))
        if want:
            # pay for what it needs with chips it can spare, one for one
            pay: dict[str, int] = {}
            left = sum(want.values())
            for c in COLOUR_ORDER:
                k = min(left, mine.spare[c] - give.get(c, 0))
                if k > 0 and c not in want:
                    pay[c] = k
                    left -= k
            if left or not pay:
                return Propose(offer=None)
            return Propose(offer=Trade(give=_counts({**pay, **give}), receive=_counts(want)))
        # nothing needed: swap what the partner lacks one for one against chips it can spare
        partner_spare = theirs.spare if theirs else {}
        swap = next((c for c in COLOUR_ORDER if c not in give and partner_spare.get(c, 0) >= sum(give.values())), None)
        if swap is None:
            return Propose(offer=None)
        return Propose(offer=Trade(give=_counts(give), receive=_counts({swap: sum(give.values())})))

    def accepts(self, obs: CTBenchObservation) -> bool:
        offer = obs.pending_offer
        before = Plan(obs, obs.player)
        if isinstance(offer, Trade):
            chips = obs.chips
            after_chips = {c: chips.of(c) + offer.give.of(c) - offer.receive.of(c) for c in COLOUR_ORDER}
            if min(after_chips.values()) < 0:
                return False
            after = Plan(obs, obs.player, chips=_counts(after_chips))
            gained = sum(offer.give.of(c) for c in COLOUR_ORDER) - sum(offer.receive.of(c) for c in COLOUR_ORDER)
            return after.shortfall < before.shortfall or (after.shortfall == before.shortfall and gained >= 0)
        # an arrangement: what this player promises must come out of its spare chips
        return all(offer.you_cover.of(c) <= before.spare[c] for c in COLOUR_ORDER)

    def honours(self, obs: CTBenchObservation) -> bool:
        if obs.player in obs.finished:
            return True
        return Plan(obs, obs.player).spare[obs.pending_colour] >= 1

    def move(self, obs: CTBenchObservation) -> Move:
        player = obs.player
        tile = Plan(obs, player).next_tile
        if tile is None:
            return Move(tile=None)
        colour = obs.board.colour(tile)
        covered = obs.coverage_for(player, colour) is not None or any(
            e.receiver == player and e.tile == tile for e in obs.open_coverage
        )
        judged = obs.condition == "nl_trading" and (tile, player) not in obs.nl_executed
        if obs.chips.of(colour) >= 1 or covered or judged:
            return Move(tile=tile)
        return Move(tile=None)


class ConditionalCooperator(CooperativePlanner):
    """A cooperative planner until the partner leaves one coverage unfulfilled; then it stops giving."""

    name = "conditional"

    def accepts(self, obs: CTBenchObservation) -> bool:
        return obs.partner_defections == 0 and super().accepts(obs)

    def honours(self, obs: CTBenchObservation) -> bool:
        return obs.partner_defections == 0 and super().honours(obs)


class Exploiter(CooperativePlanner):
    """Accepts coverage and asks for it, but refuses every honour request once its own path is secured."""

    name = "exploiter"

    def honours(self, obs: CTBenchObservation) -> bool:
        secured = obs.player in obs.finished or Plan(obs, obs.player).shortfall == 0
        return not secured and super().honours(obs)


class RandomAgent:
    """Seeded random legal play, for fuzzing the engine."""

    name = "random"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def act(self, obs: CTBenchObservation | NegotiationObservation) -> Action | Say | Confirm:
        if isinstance(obs, NegotiationObservation):
            return scripted_negotiation(obs)
        if obs.phase == "propose" and self.rng.random() < 0.3:
            a = {c: int(self.rng.integers(0, 3)) for c in COLOUR_ORDER}
            b = {c: int(self.rng.integers(0, 3)) for c in COLOUR_ORDER}
            offer = (
                Trade(give=_counts(a), receive=_counts(b))
                if obs.mode == "trade"
                else Arrangement(i_cover=_counts(a), you_cover=_counts(b))
            )
            action = Propose(offer=offer)
            if obs.is_legal(action):
                return action
        legal = obs.legal_actions()
        return legal[int(self.rng.integers(0, len(legal)))]


# --- scripted negotiation (so every contract condition runs offline) ------------------


def _wanted_terms(obs: NegotiationObservation, player: Player, info: PathInfo) -> list[str]:
    """The terms `player` needs: the partner covers each of its best path's tiles in the partner's colour
    (Prog-/NL-Trading), or it promises 5 points per such tile on finishing (Prog-Points)."""
    partner = other(player)
    tiles = [t for t in info.path[1:] if obs.board.colour(t) == partner]
    if not tiles:
        return []
    if obs.condition == "prog_points":
        return [
            f"{SPEAKER[player]} transfers {min(20, 5 * len(tiles))} points to {SPEAKER[partner]} when "
            f"{SPEAKER[player]} reaches the goal."
        ]
    return [
        f"{SPEAKER[partner]} pays for {SPEAKER[player]}'s move onto ({r},{c}) with a {partner} chip." for r, c in tiles
    ]


def scripted_negotiation(obs: NegotiationObservation):
    """P-Red proposes the terms both need (its own; the partner's too when visible) and says agree; P-Blue
    adds the terms it still lacks, or agrees; a player whose partner added terms agrees to them. Judge
    contracts are always confirmed."""
    if obs.phase == "confirm":
        return Confirm(accept=True)
    said = " ".join(m.split(": ", 1)[1] for m in obs.messages)
    terms = _wanted_terms(obs, obs.player, obs.best_path)
    if obs.partner_best_path is not None:
        terms += _wanted_terms(obs, other(obs.player), obs.partner_best_path)
    missing = [t for t in terms if t not in said]
    if not obs.messages:
        return Say(message=" ".join(terms) + " agree" if terms else "No contract is needed.")
    if missing and len(obs.messages) < obs.max_messages - 1:
        return Say(message=" ".join(missing))
    on_table = agreed_terms("\n".join(obs.messages))
    if on_table is None or not (on_table.coverage or on_table.points):
        return Say(message="No contract is needed.")
    return Say(message="agree")


AGENTS = {"planner": CooperativePlanner, "conditional": ConditionalCooperator, "exploiter": Exploiter}


def _llm(seat: Seat) -> LlmPlayer:
    if seat.llm is None:
        raise AgentError(f"{seat.spec!r} is an LLM player, and this run has no LLM client")
    return LlmPlayer(seat.llm.with_model(seat.model))


for _name, _cls in AGENTS.items():
    register_agent(_name, game=GAME, builtin=True)(_cls)
register_agent("random", game=GAME, builtin=True)(lambda seat: RandomAgent(seat.rng))
register_agent("cmd:", game=GAME, builtin=True)(lambda seat: ExternalAgent(seat.spec, GAME, AnyAction))
register_llm_agent(GAME, _llm)
