"""CT-Bench monitor: honoured coverage, forfeits, single use, off-colour transfers, points at game end."""

import pytest

from contractlang.interpreter import ChipTransfer, Forfeit, PointsTransfer, compile
from contractlang.interpreter.events import ChipCounts, EventError, GameEnd, GoalReached, Holdings, MoveAttempt
from contractlang.ir import CoverageTerm, CTBenchIR, PointsTerm

RICH = Holdings(red=ChipCounts(red=14, green=2), blue=ChipCounts(blue=14, green=2))
NO_RED = Holdings(red=ChipCounts(red=0, green=2), blue=ChipCounts(blue=14, green=2))


def ir(coverage=(), points=()):
    return CTBenchIR(name="t", parties=("P-Red", "P-Blue"), coverage=tuple(coverage), points=tuple(points))


def move(player, tile, colour, holdings=RICH):
    return MoveAttempt(player=player, tile=tile, tile_colour=colour, holdings=holdings)


def test_honoured_coverage_pays_the_move_once():
    m = compile(ir([CoverageTerm(tile=(1, 2), giver="red", receiver="blue", colour="red")]))
    m = m.apply(move("blue", (1, 2), "red"))
    assert m.last_actions == (ChipTransfer(giver="red", receiver="blue", colour="red", tile=(1, 2), pays_move=True),)
    m = m.apply(move("blue", (1, 2), "red"))
    assert m.last_actions == ()  # single use ([CT-22])


def test_giver_without_chip_forfeits():
    m = compile(ir([CoverageTerm(tile=(1, 2), giver="red", receiver="blue")]))
    m = m.apply(move("blue", (1, 2), "red", NO_RED))
    assert m.last_actions == (Forfeit(player="red", tile=(1, 2), colour="red"),)
    assert m.forfeited == ("red",)
    assert m.open_entries("blue") == []  # consumed even though it failed


def test_off_colour_entry_transfers_without_paying():
    m = compile(ir([CoverageTerm(tile=(1, 2), giver="red", receiver="blue", colour="green")]))
    m = m.apply(move("blue", (1, 2), "red"))
    assert m.last_actions[0].pays_move is False and m.last_actions[0].colour == "green"


def test_only_the_receiver_triggers_an_entry():
    m = compile(ir([CoverageTerm(tile=(1, 2), giver="red", receiver="blue")]))
    assert m.apply(move("red", (1, 2), "red")).last_actions == ()


def test_points_paid_only_when_giver_finished():
    terms = [PointsTerm(giver="blue", receiver="red", amount=10), PointsTerm(giver="red", receiver="blue", amount=4)]
    m = compile(ir(points=terms)).apply(GoalReached(player="blue")).apply(GameEnd())
    assert m.last_actions == (PointsTransfer(giver="blue", receiver="red", amount=10),)
    m = compile(ir(points=terms)).apply(GameEnd())
    assert m.last_actions == ()


def test_events_after_the_end_or_from_a_finished_player_are_rejected():
    m = compile(ir()).apply(GoalReached(player="red"))
    with pytest.raises(EventError):
        m.apply(move("red", (3, 2), "red"))
    with pytest.raises(EventError):
        m.apply(GameEnd()).apply(GameEnd())
