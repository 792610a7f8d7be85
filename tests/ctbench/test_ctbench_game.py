"""Hand-built CT-Bench games, one per rule (CT-Bench paper, Sec. 2–2.4; checks X2, X7 of docs/rules/checks.md)."""

import pytest

from contractlang.interpreter.events import ChipCounts
from contractlang.ir import CoverageTerm, CTBenchIR, PointsTerm
from games.ctbench.board import Board, benchmark_board
from games.ctbench.game import Arrangement, CTBenchGame, Honour, Move, Propose, Respond, Trade

MD = benchmark_board(24).board  # red path (0,1)(0,2)(0,3)(1,3)(2,3)(3,3); blue (0,1)(1,1)(1,2)(1,3)(2,3)(3,3)
IND = benchmark_board(0).board


def c(red=0, blue=0, green=0):
    return ChipCounts(red=red, blue=blue, green=green)


def play(state, script):
    """Apply actions in order; `None` entries are 'no proposal' / pass where the phase allows."""
    for action in script:
        state = state.apply_action(action)
    return state


def to_move_phase(state):
    while state.phase == "propose":
        state = state.apply_action(Propose(offer=None))
    return state


def test_independent_board_both_walk_home():  # X2
    s = CTBenchGame(board=IND).new_initial_state()
    red, blue = IND.best_path("red")[0], IND.best_path("blue")[0]
    for i in range(1, 7):
        s = to_move_phase(s)
        s = play(s, [Move(tile=red[i]), Move(tile=blue[i])])
    assert s.is_terminal() and s.returns() == {"red": 70, "blue": 70}
    assert s.end_reason == "both players reached the goal"


def test_paid_move_and_unaffordable_move():
    s = to_move_phase(CTBenchGame(board=MD).new_initial_state())
    s = s.apply_action(Move(tile=(0, 1)))  # red tile: red pays with its own red chip
    assert s.red_pos == (0, 1) and s.red_chips == c(red=13, green=2)
    s = s.apply_action(Move(tile=(1, 0)))  # (1,0) is red, blue has none: the move fails
    assert s.blue_pos == (0, 0) and s.blue_chips == c(blue=14, green=2)
    assert s.stats.failed_moves == 1


def test_pfp_honour_uses_up_the_promise():
    s = CTBenchGame(board=MD, mode="pfp").new_initial_state()
    s = play(
        s,
        [
            Propose(offer=Arrangement(i_cover=c(red=1), you_cover=c())),
            Respond(accept=True),
            Propose(offer=None),
            Move(tile=None),
            Move(tile=(0, 1)),
        ],
    )
    assert s.phase == "honour" and s.current_player() == "red"
    s = s.apply_action(Honour(honour=True))
    assert s.blue_pos == (0, 1) and s.red_chips.red == 13 and s.blue_chips == c(blue=14, green=2)
    assert s.promises[0].remaining == 0 and s.stats.honoured == 1


def test_pfp_refusal_keeps_the_promise_and_counts_a_defection():
    s = CTBenchGame(board=MD, mode="pfp").new_initial_state()
    s = play(
        s,
        [
            Propose(offer=Arrangement(i_cover=c(red=1), you_cover=c())),
            Respond(accept=True),
            Propose(offer=None),
            Move(tile=None),
            Move(tile=(0, 1)),
            Honour(honour=False),
        ],
    )
    assert s.blue_pos == (0, 0)  # blue has no red chip of its own
    assert s.promises[0].remaining == 1 and s.stats.unfulfilled == 1 and s.defections_by("red") == 1


def test_trade_executes_and_fails_when_unaffordable():
    s = CTBenchGame(board=MD, mode="trade").new_initial_state()
    s = play(s, [Propose(offer=Trade(give=c(red=2), receive=c(blue=2))), Respond(accept=True)])
    assert s.red_chips == c(red=12, blue=2, green=2) and s.blue_chips == c(red=2, blue=12, green=2)
    s = play(s, [Propose(offer=Trade(give=c(red=20), receive=c(green=1))), Respond(accept=True)])
    assert s.blue_chips == c(red=2, blue=12, green=2) and s.stats.trades == 1
    # trade volume counts chips that changed hands: 2 red one way and 2 blue the other; the failed trade none
    assert s.stats.chips_traded == 4


def prog(entries=(), points=()):
    return CTBenchIR(name="t", parties=("P-Red", "P-Blue"), coverage=tuple(entries), points=tuple(points))


def test_prog_trading_transfer_and_forfeit():
    contract = prog(
        [
            CoverageTerm(tile=(0, 1), giver="red", receiver="blue"),
            CoverageTerm(tile=(1, 0), giver="blue", receiver="red", colour="green"),
        ]
    )
    s = to_move_phase(CTBenchGame(board=MD, condition="prog_trading", contract=contract).new_initial_state())
    s = play(s, [Move(tile=None), Move(tile=(0, 1))])  # blue onto red (0,1): red's chip pays the move
    assert s.blue_pos == (0, 1) and s.red_chips.red == 13 and s.blue_chips == c(blue=14, green=2)
    assert s.stats.contract_moves == 1
    s = s.model_copy(update={"blue_chips": c(blue=14)})  # blue has no green chip left to give
    s = to_move_phase(s)
    s = s.apply_action(Move(tile=(1, 0)))  # red onto red (1,0): the entry fires, blue lacks green → forfeit
    assert s.forfeited == ("blue",)
    assert s.red_pos == (1, 0) and s.red_chips.red == 12  # red's move proceeds with its own chip
    assert s.final_score("blue") == 0


def test_prog_points_only_when_giver_finished():
    contract = prog(points=[PointsTerm(giver="red", receiver="blue", amount=10)])
    s = CTBenchGame(board=IND, condition="prog_points", contract=contract).new_initial_state()
    red = IND.best_path("red")[0]
    for i in range(1, 7):
        s = to_move_phase(s)
        s = play(s, [Move(tile=red[i]), Move(tile=None)])
    while not s.is_terminal():
        s = s.apply_action(s.legal_actions()[0])
    assert "red" in s.finished and "blue" not in s.finished
    assert s.returns() == {"red": 60, "blue": 10}
    s2 = CTBenchGame(board=IND, condition="prog_points", contract=contract).new_initial_state()
    while not s2.is_terminal():
        s2 = s2.apply_action(s2.legal_actions()[0])
    assert s2.returns() == {"red": 0, "blue": 0} and s2.points == ()


def test_repeated_state_and_round_cap():
    s = CTBenchGame(board=MD).new_initial_state()
    while not s.is_terminal():
        s = s.apply_action(s.legal_actions()[0])  # nobody ever proposes or moves
    # as in the authors' loop, the states after rounds 2, 3 and 4 are counted; the first round's is not
    assert s.end_reason == "the same state began 3 rounds" and s.round == 4
    # red shuffles (0,0) <-> (0,1), paying a red then a green chip each trip, so no state ever repeats;
    # blue keeps failing to enter the red tile (0,1). After 4 rounds the cap ends the game.
    capped = CTBenchGame(board=MD, max_rounds=4).new_initial_state()
    while not capped.is_terminal():
        if capped.phase == "move":
            tile = (0, 1) if capped.position(capped.current_player()) == (0, 0) else (0, 0)
            capped = capped.apply_action(Move(tile=tile))
        else:
            capped = capped.apply_action(capped.legal_actions()[0])
    assert capped.end_reason == "the 4-round cap" and capped.round == 4
    assert capped.red_chips == c(red=12, green=0) and capped.blue_pos == (0, 0)


def test_no_move_possible_ends_the_game():
    board = Board(key=0, red_tiles=((0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)))
    s = CTBenchGame(board=board).new_initial_state()
    s = s.model_copy(update={"red_chips": c(), "blue_chips": c()})._start_round()
    assert s.is_terminal() and s.end_reason == "no further move is possible"


def test_illegal_actions_are_refused():
    s = CTBenchGame(board=MD, mode="pfp").new_initial_state()
    with pytest.raises(ValueError):
        s.apply_action(Propose(offer=Trade(give=c(red=1), receive=c(blue=1))))  # trades are not PfP
    with pytest.raises(ValueError):
        to_move_phase(s).apply_action(Move(tile=(2, 2)))  # not adjacent
