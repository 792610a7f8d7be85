"""Re-play an imported game through our engine and Monitor, and say where it parts from the authors' log.

The logged players become a scripted agent (their proposals, responses, moves and honour decisions, turn by
turn) and the logged NL-Trading judge becomes a judge that covers exactly the moves the log shows paid under
the contract. After every turn both players' positions and chips are compared with the state the log starts
the next turn in (or its final state); the first turn that differs is classified by the rule behind it, and a
game that disagrees is replayed again, [CT-24a] switch by switch, to name every rule it needs.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from pydantic import computed_field

from contractlang.interpreter import ChipTransfer, Forfeit, Rules
from contractlang.ir import CTBenchIR
from contractlang.vocab import Frozen
from games.ctbench.board import PLAYERS, Player, Tile, benchmark_boards, neighbours
from games.ctbench.game import (
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
from games.ctbench.judge import read_terms
from games.ctbench.log import CoverageUnfulfilled, LogEvent
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
    "contract forfeit": "a contract entry whose giver lacks the chip: the paper's rules forfeit the giver's score "
    "[CT-24]; the authors' engine blocks the contract payment, the move falls back to the "
    "mover's chips and the entry stays usable ([CT-24a] (2))",
    "contract colour": "a contract entry naming a chip colour other than the tile's: the paper's rules transfer the "
    "named chip and the mover still pays the tile [CT-23]; the authors' engine transfers a chip "
    "of the tile's colour whatever the entry says ([CT-24a] (1))",
    "contract key": "a judge entry whose key is not written exactly '(r,c)': the paper's rules read it; the "
    "authors' engine never pays it ([CT-24a] (3))",
    "contract payment": "a move paid through the contract in one engine and not the other, for no listed reason",
    "other": "a difference no listed rule explains",
}
# the rules the `authors` rule set changes, each with the switch of `Rules` that changes it
SWITCHES = {"contract colour": "tile_colour", "contract forfeit": "block_not_forfeit", "contract key": "exact_keys"}


class Disagreement(Frozen):
    turn: int  # the authors' turn number (0 = first); the number of turns when only the end differs
    rule: str
    detail: str


class ReplayVerdict(Frozen):
    """Whether our engine, fed the logged actions under `rules`, passes through every logged state and ends
    where the log does. `first` is the first turn whose end state differs; the `final_*` fields compare the
    final state alone (a game can part from its log and meet it again); `needs` names every rule the game
    needs changed to agree (the smallest set of [CT-24a] switches that does it, or the rule seen at `first`)."""

    source: str
    condition: str
    mode: str
    rules: str
    superseded: bool = False
    final_positions_agree: bool
    final_chips_agree: bool
    final_scores_agree: bool
    our_scores: tuple[int, int]
    logged_scores: tuple[int, int]
    first: Disagreement | None = None
    needs: tuple[str, ...] = ()

    @computed_field
    @property
    def agrees(self) -> bool:
        """Every turn and the end agree."""
        return self.first is None


class ReplaySummary(Frozen):
    """Replay of a runs file under one rule set: counts by rule and the size of the rules' effect on scores."""

    rules: str
    replayed: int
    skipped_incomplete: int
    agree: int
    by_rule: dict[str, int]  # games needing each rule (a game needing two counts under both)
    first_by_rule: dict[str, int]  # the rule seen at each disagreeing game's first differing turn
    scores_differ: int  # games whose final scores differ from the logged ones
    scores_differ_latest: dict[str, int]  # the same among the games the paper's tables use, per condition
    latest: dict[str, int]  # the games the paper's tables use (latest complete run of each), per condition
    verdicts: tuple[ReplayVerdict, ...]


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
                self.refused.append(
                    (
                        state.round - 1,
                        f"{player}'s move to {mine.move}, not next to {state.position(player)} in our game",
                    )
                )
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

    def judge(
        self, transcript: str, mover: Player, origin: Tile, target: Tile, colour: str, executed: tuple
    ) -> JudgeDecision:
        """The logged judge: covered exactly when the log shows this move paid under the contract."""
        logged = self.turns[self.turn].of(mover) if 0 <= self.turn < len(self.turns) else None
        if logged is not None and logged.move == target and logged.move_type == "move_under_contract":
            return JudgeDecision(covered=True, giver=other(mover), colour=self.board.colour(target))
        return JudgeDecision(covered=False)


def replay(game: ImportedGame, rules: Rules | None = None) -> ReplayVerdict:
    """Play the logged actions through our engine under `rules` (default: the authors' engine's) and compare
    every turn's end state with the log's; a disagreeing game is replayed again to find the rules it needs."""
    rules = rules or Rules.named("authors")
    verdict = _replay_once(game, rules)
    if verdict.agrees:
        return verdict
    return verdict.model_copy(update={"needs": _needed(game, rules, verdict.first.rule)})


def _needed(game: ImportedGame, rules: Rules, seen: str) -> tuple[str, ...]:
    """The smallest set of [CT-24a] switches still off in `rules` that makes the game agree, else the rule seen."""
    off = [name for name, switch in SWITCHES.items() if not getattr(rules, switch)]
    for size in range(1, len(off) + 1):
        for names in combinations(off, size):
            changed = rules.model_copy(update={SWITCHES[n]: True for n in names})
            if _replay_once(game, changed).agrees:
                return names
    return (seen,)


def _contract(game: ImportedGame, rules: Rules) -> CTBenchIR | None:
    """The judge's terms as the rules read them; runs files imported before the judge's JSON was kept have
    only the reading of every entry."""
    if not game.contract_formed or game.condition not in ("prog_trading", "prog_points"):
        return None
    if game.judge_terms is not None:
        return read_terms(game.judge_terms, game.condition, f"{game.source}/judge_contract", rules)[1]
    return CTBenchIR.from_terms_json(game.contract_terms) if game.contract_terms is not None else None


def _replay_once(game: ImportedGame, rules: Rules) -> ReplayVerdict:
    if not game.complete:
        raise ValueError(f"{game.source}: the log ends before the game did; there is no final state to compare")
    board = benchmark_boards("paper")[game.board_id].board
    contract = _contract(game, rules)
    condition = game.condition if game.contract_formed else "none"
    if condition in ("prog_trading", "prog_points") and contract is None:
        condition = "none"
    spec = CTBenchGame(
        board=board,
        mode=game.mode,
        condition=condition,
        contract=contract,
        transcript=game.transcript if condition == "nl_trading" else "",
        visible=game.visible,
        rules=rules,
    )
    players = LoggedPlayers(game)
    state = spec.new_initial_state(judge=players.judge if condition == "nl_trading" else None)
    first: Disagreement | None = None
    expected = _expected_states(game)
    for k, turn in enumerate(game.turns):
        if state.is_terminal():
            if _acts(turn) and first is None:
                first = Disagreement(
                    turn=k,
                    rule="termination",
                    detail=f"ours ended ({state.end_reason}) before turn {k}, where the log still moves or trades",
                )
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
                first = Disagreement(turn=k, rule=_rule(turn, state.log[entries_before:], players, k), detail=diff)
    positions = tuple(state.position(p) for p in PLAYERS)
    chips = tuple(state.chips(p) for p in PLAYERS)
    ours = tuple(state.final_score(p) for p in PLAYERS)
    final = (positions == tuple(game.final_positions), chips == tuple(game.final_chips), ours == tuple(game.scores))
    if first is None and not all(final):
        first = Disagreement(
            turn=len(game.turns), rule="other", detail=f"final scores ours {list(ours)}, logged {list(game.scores)}"
        )
    return ReplayVerdict(
        source=game.source,
        condition=game.condition,
        mode=game.mode,
        rules=rules.name,
        superseded=game.superseded,
        final_positions_agree=final[0],
        final_chips_agree=final[1],
        final_scores_agree=final[2],
        our_scores=ours,
        logged_scores=game.scores,
        first=first,
    )


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
    """How our state after a turn differs from the logged one; a forfeit differs too (the log's engine has none)."""
    positions, chips = expected
    out = []
    for i, p in enumerate(PLAYERS):
        if state.position(p) != tuple(positions[i]):
            out.append(f"{p} at {state.position(p)}, logged {tuple(positions[i])}")
        if state.chips(p) != chips[i]:
            mine, logged = state.chips(p), chips[i]
            out.append(
                f"{p} holds {mine.red}/{mine.blue}/{mine.green}, logged {logged.red}/{logged.blue}/"
                f"{logged.green} (red/blue/green)"
            )
    out += [f"{p} forfeited its score" for p in state.forfeited]
    return "; ".join(out)


def _rule(turn: LoggedTurn, entries: tuple[LogEvent, ...], players: LoggedPlayers, k: int) -> str:
    """The rule behind the first difference, from what this turn did in the log and in our engine."""
    refused = [why for t, why in players.refused if t == k]
    if refused:
        return "one-sided offer" if "offer" in refused[0] else "other"
    if any(isinstance(e, Forfeit) for e in entries):
        return "contract forfeit"
    transfers = [e for e in entries if isinstance(e, ChipTransfer)]
    if any(not e.pays_move for e in transfers):
        return "contract colour"
    logged_contract = {p.player for p in turn.players if p.move_type == "move_under_contract"}
    if {e.receiver for e in transfers} != logged_contract:
        return "contract payment"
    honoured_in_log = {p.player for p in turn.players if p.move_type == "pay4partner"}
    if honoured_in_log and any(isinstance(e, CoverageUnfulfilled) and e.why == "no chip" for e in entries):
        return "honour without the chip"
    return "other"


def replay_runs(games: list[ImportedGame], rules: Rules) -> ReplaySummary:
    """Replay every complete game under `rules` and count the disagreements by rule."""
    complete = [g for g in games if g.complete]
    verdicts = tuple(replay(g, rules) for g in complete)
    latest = [v for v in verdicts if not v.superseded]
    return ReplaySummary(
        rules=rules.name,
        replayed=len(verdicts),
        skipped_incomplete=len(games) - len(complete),
        agree=sum(v.agrees for v in verdicts),
        by_rule=dict(Counter(r for v in verdicts for r in v.needs).most_common()),
        first_by_rule=dict(Counter(v.first.rule for v in verdicts if v.first is not None).most_common()),
        scores_differ=sum(not v.final_scores_agree for v in verdicts),
        scores_differ_latest=dict(Counter(v.condition for v in latest if not v.final_scores_agree)),
        latest=dict(Counter(v.condition for v in latest)),
        verdicts=verdicts,
    )


def replay_text(summary: ReplaySummary) -> str:
    """The replay for a person: each disagreeing game (first differing turn, the rules it needs), then counts."""
    lines = [
        f"{v.source}: turn {v.first.turn}: {v.first.rule}: {v.first.detail}; needs {' + '.join(v.needs)}"
        for v in summary.verdicts
        if not v.agrees
    ]
    rate = summary.agree / summary.replayed if summary.replayed else 0.0
    lines.append(
        f"replayed {summary.replayed} complete games under the {summary.rules} rules "
        f"({summary.skipped_incomplete} cut-short logs skipped): {summary.agree} pass through every logged "
        f"state and end in the logged one ({rate:.1%})"
    )
    final = [
        sum(not getattr(v, f"final_{k}_agree") for v in summary.verdicts) for k in ("positions", "chips", "scores")
    ]
    lines.append(
        f"  the final state alone: positions differ in {final[0]} games, chips in {final[1]}, scores in "
        f"{final[2]} ({sum(summary.scores_differ_latest.values())} of them among the latest runs, which "
        "the paper's tables use)"
    )
    if summary.by_rule:
        lines.append("  every rule the disagreeing games need (a game needing two counts under both):")
        lines += [f"  {n:>5}  {rule}: {RULES[rule]}" for rule, n in summary.by_rule.items()]
        lines.append(
            "  the rule seen at the first differing turn: "
            + ", ".join(f"{rule} {n}" for rule, n in summary.first_by_rule.items())
        )
    return "\n".join(lines)
