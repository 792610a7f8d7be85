"""The CT-Bench contract negotiation (CT-Bench paper, Sec. 2.4): free dialogue, P-Red first, at most 8 messages, verbal agreement
by the "agree" rule [CT-19]; then, for Prog-Trading and Prog-Points, the judge's JSON summary that both
players must accept [CT-20]; for NL-Trading the transcript itself is the contract [CT-21].

Negotiation is part of the one agent protocol: an agent is asked with a `NegotiationObservation` and
answers `Say` (a message) or `Confirm` (the judge's contract), like any other typed action.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol

from pydantic import Field

from contractlang.interpreter.events import ChipCounts
from contractlang.ir import CTBenchIR
from contractlang.vocab import Frozen
from games.agents import AgentError
from games.ctbench.board import INITIAL_CHIPS, PLAYERS, Board, Player, Tile

MAX_MESSAGES = 8
SPEAKER = {"red": "P-Red", "blue": "P-Blue"}
ContractCondition = Literal["prog_trading", "prog_points", "nl_trading"]


class Say(Frozen):
    kind: Literal["say"] = "say"
    message: str = Field(description="the next message of the negotiation, to the partner")


class Confirm(Frozen):
    kind: Literal["confirm"] = "confirm"
    accept: bool = Field(description="agree to the contract the judge summarised (`judge_contract`)")


class PathInfo(Frozen):
    """A player's best path (CT-Bench paper, App. D) and the chips it lacks for it, as every prompt states them (CT-Bench paper, App. G)."""

    path: tuple[Tile, ...] = Field(description="the tiles of the path, (row, column), start to goal")
    needed: dict[str, int] = Field(description="chips of each colour the path uses beyond the player's own")

    @classmethod
    def of(cls, board: Board, player: Player) -> PathInfo:
        path, _ = board.best_path(player)
        need = board.path_needs(path)
        return cls(path=path, needed={c: max(0, n - INITIAL_CHIPS[player][c]) for c, n in need.items()})


class NegotiationObservation(Frozen):
    """What `player` sees when asked for a message ("negotiate") or for its verdict on the judge's contract
    ("confirm"); the partner's state only when visible [CT-28]."""

    player: Player = Field(description="the player asked: red (P-Red) or blue (P-Blue)")
    phase: Literal["negotiate", "confirm"] = Field(
        description="negotiate: send a message; confirm: accept or reject the judge's summary of the agreement"
    )
    condition: ContractCondition = Field(description="the contract condition: prog_trading, prog_points, nl_trading")
    mode: str = Field(description="pfp (Pay-for-Partner) or trade (regular chip trading)")
    board: Board = Field(description="the 5×5 board: each tile's colour, both players' starts and the goal")
    board_rows: tuple[str, ...] = Field(description="the board as text, row 0 at the top (R red, B blue, G green)")
    visible: bool = Field(description="whether the partner's chips and path are shown")
    chips: ChipCounts = Field(description="the player's chips of each colour")
    partner_chips: ChipCounts | None = Field(description="the partner's chips; None when hidden")
    best_path: PathInfo = Field(description="the player's best path and the chips it lacks for it")
    partner_best_path: PathInfo | None = Field(description="the partner's; None when hidden")
    messages: tuple[str, ...] = Field(description='the negotiation so far, "P-Red: …" / "P-Blue: …", oldest first')
    max_messages: int = Field(default=MAX_MESSAGES, description="the most messages a negotiation may have")
    judge_contract: dict | None = Field(
        default=None, description="confirm phase: the judge's summary of the agreement, in the paper's JSON form"
    )

    def legal_actions(self) -> list:
        return [Confirm(accept=True), Confirm(accept=False)] if self.phase == "confirm" else [Say(message="agree")]

    def is_legal(self, action) -> bool:
        return self.why_illegal(action) is None

    def why_illegal(self, action) -> str | None:
        """Why `action` does not answer this request (a message, or a verdict on the judge's contract)."""
        wanted = Confirm if self.phase == "confirm" else Say
        if isinstance(action, wanted):
            return None
        return f"answered the {self.phase} request with {type(action).__name__}, not a {wanted.__name__.lower()} action"


class ContractJudge(Protocol):
    """Summarises an agreed negotiation into the paper's contract JSON (Prog-Trading / Prog-Points) and reads
    it back as a contract; None when it cannot produce valid terms [CT-20]."""

    def summarise(self, condition: ContractCondition, transcript: str) -> tuple[dict, CTBenchIR] | None: ...


class NegotiationOutcome(Frozen):
    messages: tuple[str, ...]
    agreed: bool  # verbal agreement [CT-19]
    judge_contract: dict | None = None
    confirmations: tuple[bool, bool] | None = None  # red, blue
    contract: CTBenchIR | None = None  # the active programmable contract
    transcript: str = ""  # the active NL-Trading contract


def says_agree(message: str) -> bool:
    """[CT-19]: `agree` (any case, punctuation ignored) is the message's first or last word."""
    words = re.sub(r"[^\w\s]", " ", message.lower()).split()
    return bool(words) and (words[0] == "agree" or words[-1] == "agree")


def observation(
    player: Player,
    phase: str,
    condition: ContractCondition,
    mode: str,
    board: Board,
    visible: bool,
    messages: tuple[str, ...],
    judge_contract: dict | None = None,
) -> NegotiationObservation:
    partner = PLAYERS[1 - PLAYERS.index(player)]
    return NegotiationObservation(
        player=player,
        phase=phase,
        condition=condition,
        mode=mode,
        board=board,
        board_rows=tuple(board.rows()),
        visible=visible,
        chips=ChipCounts(**INITIAL_CHIPS[player]),
        partner_chips=ChipCounts(**INITIAL_CHIPS[partner]) if visible else None,
        best_path=PathInfo.of(board, player),
        partner_best_path=PathInfo.of(board, partner) if visible else None,
        messages=messages,
        judge_contract=judge_contract,
    )


def _ask(agent, obs: NegotiationObservation):
    action = agent.act(obs)
    why = obs.why_illegal(action)
    if why is not None:
        raise AgentError(f"agent {agent.name!r} ({obs.player}) {why}")
    return action


def negotiate_contract(
    board: Board,
    condition: ContractCondition,
    mode: str,
    agents: dict[Player, object],
    judge: ContractJudge,
    visible: bool = True,
) -> NegotiationOutcome:
    """Run CT-Bench paper, Sec. 2.4 with `agents` (red speaks first) and, after verbal agreement, the judge and the confirmations."""
    messages: list[str] = []
    agreeing: list[bool] = []
    for k in range(MAX_MESSAGES):
        player = PLAYERS[k % 2]
        said = _ask(
            agents[player], observation(player, "negotiate", condition, mode, board, visible, tuple(messages))
        ).message
        messages.append(f"{SPEAKER[player]}: {' '.join(said.split())}")
        agreeing.append(says_agree(said))
        if agreeing[-2:] == [True, True]:
            break
    agreed = agreeing[-2:] == [True, True]
    transcript = "\n".join(messages)
    if not agreed:
        return NegotiationOutcome(messages=tuple(messages), agreed=False)
    if condition == "nl_trading":
        return NegotiationOutcome(messages=tuple(messages), agreed=True, transcript=transcript)
    summary = judge.summarise(condition, transcript)
    if summary is None:
        return NegotiationOutcome(messages=tuple(messages), agreed=True)
    terms, ir = summary
    votes = tuple(
        _ask(agents[p], observation(p, "confirm", condition, mode, board, visible, tuple(messages), terms)).accept
        for p in PLAYERS
    )
    return NegotiationOutcome(
        messages=tuple(messages),
        agreed=True,
        judge_contract=terms,
        confirmations=votes,
        contract=ir if all(votes) and (ir.coverage or ir.points) else None,
    )


__all__ = [
    "Confirm",
    "ContractJudge",
    "MAX_MESSAGES",
    "NegotiationObservation",
    "NegotiationOutcome",
    "PathInfo",
    "Say",
    "negotiate_contract",
    "says_agree",
]
