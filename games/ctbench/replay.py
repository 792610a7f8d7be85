"""Re-play an imported game through our engine and Monitor, and say where it parts from the authors' log.

The logged players become a scripted agent (their proposals, responses, moves and honour decisions, turn by
turn) and the logged NL-Trading judge becomes a judge that covers exactly the moves the log shows paid under
the contract. After every turn both players' positions and chips are compared with the state the log starts
the next turn in (or its final state); the first turn that differs is classified by the rule behind it.
"""

from __future__ import annotations

from collections import Counter

from pydantic import computed_field

from contractlang.ir import CTBenchIR
from contractlang.vocab import Frozen
from games.ctbench.board import PLAYERS, Player, Tile, benchmark_boards, neighbours
from games.ctbench.engine import (
    Action,
    CTBenchGame,
    Honour,
    JudgeDecision,
    Move,
    Propose,
    Respond,
    State,
    other,
)
from games.ctbench.published import ImportedGame, LoggedPlayerTurn, LoggedTurn

RULES = {
    "termination": "our game ended before the log did: the repeated-state rule [CT-13] counts the state at the "
                   "start of every round from the first, the authors' from the end of turn 1, and [CT-14] ends a "
                   "game with no payable move that the authors' engine plays on",
    "one-sided offer": "an accepted offer with nothing on one side: the authors' engine executes it, ours refuses "
                       "it [CT-16]/[CT-17]",
    "honour without the chip": "a Pay-for-Partner coverage honoured by a payer holding no chip of the colour: the "
                               "authors' engine lets the payer's count go below zero, ours records it unfulfilled "
                               "[CT-18]",
    "contract forfeit": "a contract entry whose giver lacks the chip: ours forfeits the giver's score [CT-24], the "
                        "authors' engine blocks the contract payment and the move falls back to the mover's chips",
    "contract colour": "a contract entry naming a chip colour other than the tile's: ours transfers the named chip "
                       "and the mover still pays the tile [CT-23]; the authors' engine transfers a chip of the "
                       "tile's colour whatever the entry says",
    "contract payment": "a move paid through the contract in one engine and not the other: the authors' engine "
                        "matches the key '(r,c)' exactly and keeps an entry whose payment failed for a later "
                        "attempt; ours reads every entry and uses it once [CT-22]",
    "other": "a difference no listed rule explains",
}


class Disagreement(Frozen):
    turn: int  # the authors' turn number (0 = first)
    rule: str
    detail: str


class ReplayVerdict(Frozen):
    """Whether our engine, fed the logged actions, ends where the log does."""

    source: str
    condition: str
    mode: str
    positions_agree: bool
    chips_agree: bool
    scores_agree: bool
    our_scores: tuple[int, int]
    logged_scores: tuple[int, int]
    first: Disagreement | None = None

    @computed_field
    @property
    def agrees(self) -> bool:
        """Every turn and the end agree (a game can part from its log and meet it again by the end)."""
        return self.first is None


class LoggedPlayers:
    """Both logged players as one agent: at round r they do what the log shows for the authors' turn r − 1."""

    def __init__(self, game: ImportedGame):
        self.board = benchmark_boards("paper")[game.board_id].board
        self.turns = game.turns
        self.refused: list[tuple[int, str]] = []
        self.turn = -1  # the authors' turn being replayed

    def logged(self, state: State, player: Player) -> LoggedPlayerTurn | None:
        k = state.round - 1
        return self.turns[k].of(player) if 0 <= k < len(self.turns) else None

    def act(self, state: State, player: Player) -> Action:
        if state.phase == "propose":
            mine = self.logged(state, player)
            if mine is None or mine.offer is None or mine.outcome == "invalid":
                return Propose(offer=None)
            action = Propose(offer=mine.offer)
            if not state.is_legal(action):
                self.refused.append((state.round - 1, f"{player}'s {mine.outcome} offer {mine.offer.model_dump()}"))
                return Propose(offer=None)
            return action
        if state.phase == "respond":
            proposer = other(player)
            theirs = self.logged(state, proposer)
            return Respond(accept=theirs is not None and theirs.outcome == "accepted")
        if state.phase == "honour":
            mover = state.pending_move.player
            logged = self.logged(state, mover)
            return Honour(honour=logged is not None and logged.move_type == "pay4partner")
        return self._move(state, player)

    def _move(self, state: State, player: Player) -> Move:
        mine = self.logged(state, player)
        if mine is None:
            return Move(tile=None)
        if mine.move is not None:
            action = Move(tile=tuple(mine.move))
            if not state.is_legal(action):
                self.refused.append((state.round - 1, f"{player}'s move to {mine.move}, not next to "
                                                      f"{state.position(player)} in our game"))
                return Move(tile=None)
            return action
        partner = self.logged(state, other(player))
        if partner is not None and partner.broke_promise is not None:
            # the log names no tile for a move that failed after a refused coverage; any tile of that colour
            # next to the mover is the same attempt
            here = state.position(player)
            for tile in neighbours(here):
                if self.board.colour(tile) == partner.broke_promise:
                    return Move(tile=tile)
        return Move(tile=None)

    def judge(self, transcript: str, mover: Player, origin: Tile, target: Tile, colour: str,
              executed: tuple) -> JudgeDecision:
        """The logged judge: covered exactly when the log shows this move paid under the contract."""
        logged = self.turns[self.turn].of(mover) if 0 <= self.turn < len(self.turns) else None
        if logged is not None and logged.move == target and logged.move_type == "move_under_contract":
            return JudgeDecision(covered=True, giver=other(mover), colour=self.board.colour(target))
        return JudgeDecision(covered=False)


def replay(game: ImportedGame) -> ReplayVerdict:
    """Play the logged actions through our engine and compare every turn's end state with the log's."""
    if not game.complete:
        raise ValueError(f"{game.source}: the log ends before the game did; there is no final state to compare")
    board = benchmark_boards("paper")[game.board_id].board
    contract = None
    if game.contract_formed and game.contract_terms is not None and game.condition in ("prog_trading",
                                                                                          "prog_points"):
        contract = CTBenchIR.from_terms_json(game.contract_terms)
    condition = game.condition if game.contract_formed else "none"
    if condition in ("prog_trading", "prog_points") and contract is None:
        condition = "none"
    spec = CTBenchGame(board=board, mode=game.mode, condition=condition, contract=contract,
                       transcript=game.transcript if condition == "nl_trading" else "", visible=game.visible)
    players = LoggedPlayers(game)
    state = spec.new_initial_state(judge=players.judge if condition == "nl_trading" else None)
    first: Disagreement | None = None
    expected = _expected_states(game)
    for k, turn in enumerate(game.turns):
        if state.is_terminal():
            if _acts(turn) and first is None:
                first = Disagreement(turn=k, rule="termination",
                                     detail=f"ours ended ({state.end_reason}) before turn {k}, where the log still "
                                            "moves or trades")
            break
        players.turn = k
        entries_before = len(state.log)
        current = state.round
        while not state.is_terminal() and state.round == current:
            player = state.current_player()
            state = state.apply_action(players.act(state, player))
        if first is None:
            diff = _difference(state, expected[k])
            if diff:
                first = Disagreement(turn=k, rule=_rule(turn, state.log[entries_before:], players, k),
                                     detail=diff)
    positions = tuple(state.position(p) for p in PLAYERS)
    chips = tuple(state.chips(p) for p in PLAYERS)
    ours = tuple(state.final_score(p) for p in PLAYERS)
    positions_agree = positions == tuple(game.final_positions)
    chips_agree = chips == tuple(game.final_chips)
    scores_agree = ours == tuple(game.scores)
    if first is None and not (positions_agree and chips_agree and scores_agree):
        first = Disagreement(turn=len(game.turns), rule=_end_rule(state),
                             detail=f"final scores ours {list(ours)}, logged {list(game.scores)}")
    return ReplayVerdict(source=game.source, condition=game.condition, mode=game.mode,
                         positions_agree=positions_agree, chips_agree=chips_agree, scores_agree=scores_agree,
                         our_scores=ours, logged_scores=game.scores, first=first)


def _acts(turn: LoggedTurn) -> bool:
    return any(p.move is not None or p.outcome == "accepted" for p in turn.players)


def _expected_states(game: ImportedGame) -> list[tuple]:
    """The state after each logged turn: the next turn's starting state, the final state after the last."""
    states = []
    for k in range(len(game.turns)):
        if k + 1 < len(game.turns):
            nxt = game.turns[k + 1]
            by = {p.player: p for p in nxt.players}
            states.append((tuple(by[p].start for p in PLAYERS), tuple(by[p].chips_start for p in PLAYERS)))
        else:
            states.append((tuple(game.final_positions), tuple(game.final_chips)))
    return states


def _difference(state: State, expected: tuple) -> str:
    positions, chips = expected
    out = []
    for i, p in enumerate(PLAYERS):
        if state.position(p) != tuple(positions[i]):
            out.append(f"{p} at {state.position(p)}, logged {tuple(positions[i])}")
        if state.chips(p) != chips[i]:
            mine, logged = state.chips(p), chips[i]
            out.append(f"{p} holds {mine.red}/{mine.blue}/{mine.green}, logged {logged.red}/{logged.blue}/"
                       f"{logged.green} (red/blue/green)")
    return "; ".join(out)


def _rule(turn: LoggedTurn, entries: tuple[dict, ...], players: LoggedPlayers, k: int) -> str:
    """The rule behind the first difference, from what this turn did in the log and in our engine."""
    kinds = Counter(e["type"] for e in entries)
    refused = [why for t, why in players.refused if t == k]
    if refused:
        return "one-sided offer" if "offer" in refused[0] else "other"
    if kinds["forfeit"]:
        return "contract forfeit"
    ours_contract = {e["receiver"] for e in entries if e["type"] == "contract_transfer"}
    logged_contract = {p.player for p in turn.players if p.move_type == "move_under_contract"}
    if any(e["type"] == "contract_transfer" and not e["pays_move"] for e in entries):
        return "contract colour"
    if ours_contract != logged_contract:
        return "contract payment"
    honoured_in_log = {p.player for p in turn.players if p.move_type == "pay4partner"}
    if honoured_in_log and any(e["type"] == "coverage_unfulfilled" and e.get("why") == "no chip" for e in entries):
        return "honour without the chip"
    return "other"


def _end_rule(state: State) -> str:
    if state.forfeited:
        return "contract forfeit"
    return "other"


def summary_by_rule(verdicts: list[ReplayVerdict]) -> dict[str, int]:
    return dict(Counter(v.first.rule for v in verdicts if v.first is not None).most_common())


class ReplayReport(Frozen):
    """Verdicts on the complete games of a runs file, and how many cut-short logs were left out."""

    verdicts: tuple[ReplayVerdict, ...]
    skipped_incomplete: int

    @property
    def agree(self) -> int:
        return sum(v.agrees for v in self.verdicts)

    @property
    def by_rule(self) -> dict[str, int]:
        """Games by the rule of their first disagreement, most frequent first."""
        return summary_by_rule(list(self.verdicts))


def replay_games(games: list[ImportedGame]) -> ReplayReport:
    """`replay` of every complete game; a cut-short log has no final state to compare, and is only counted."""
    complete = [g for g in games if g.complete]
    return ReplayReport(verdicts=tuple(replay(g) for g in complete), skipped_incomplete=len(games) - len(complete))
