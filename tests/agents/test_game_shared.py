"""The one game API of both games (issue #43 item 3): the same module names on both sides, one record shape
(`games.log.Record`), one set of event classes (`contractlang.interpreter.events.EventBase`), one seating and
play loop (`games.agents.seated`, `games.agents.play_out`)."""

from __future__ import annotations

import importlib
import json

import pytest

from contractlang import load
from contractlang.interpreter.events import (
    EVENT_MODELS,
    EventBase,
    GameEnd,
    GoalReached,
    MoveAttempt,
    WeekEnd,
    monitor_events,
)
from games.agents import AgentError, seated
from games.contractsim.environments import environment
from games.contractsim.play import RunRecord
from games.contractsim.play import play as play_contractsim
from games.ctbench.board import benchmark_board
from games.ctbench.play import GameRecord
from games.ctbench.play import play as play_ctbench
from games.log import Record
from tests.helpers import ROOT

IR = load(ROOT / "examples" / "worked-example-1.contract")[0].ir


@pytest.mark.parametrize("game", ["contractsim", "ctbench"])
@pytest.mark.parametrize("module", ["play", "game", "log", "agents", "llm_agents", "story", "metrics", "negotiation"])
def test_both_games_have_the_same_modules(game, module):
    importlib.import_module(f"games.{game}.{module}")


def test_both_entries_are_named_play_and_write_a_record():
    cs = play_contractsim(IR, environment(3), "rcc", "random", seed=7)
    ct = play_ctbench(benchmark_board(24), "prog_trading", "pfp", "planner", "random", seed=3, keep_log=True)
    assert isinstance(cs, Record) and isinstance(ct, Record)
    assert (RunRecord.game, GameRecord.game) == ("contractsim", "ctbench")
    assert cs.agents == {"customer": "rcc", "supplier": "random"} and ct.agents == {"red": "planner", "blue": "random"}
    assert cs.outcome == {"customer": cs.u_customer, "supplier": cs.u_supplier}
    assert ct.outcome == {"red": ct.scores[0], "blue": ct.scores[1]} == ct.to_json()["scores"]
    for record in (cs, ct):
        assert record.llm_usage.calls == 0
        assert all(isinstance(e, EventBase) for e in record.log)
        events = record.monitor_events()
        # exactly the monitor's own fields, in its order: what `trace` reads back
        assert events and all(list(e) == list(EVENT_MODELS[e["type"]].model_fields) for e in events)
        assert [EVENT_MODELS[e["type"]].model_validate(e).model_dump(mode="json") for e in events] == events


def test_a_ctbench_log_entry_is_the_monitors_event_with_its_round():
    record = play_ctbench(benchmark_board(24), "none", "pfp", "planner", "planner", seed=0, keep_log=True)
    tried = next(e for e in record.log if e.type == "move_attempt")
    goal = next(e for e in record.log if e.type == "goal_reached")
    end = record.log[-1]
    assert isinstance(tried, MoveAttempt) and isinstance(goal, GoalReached) and isinstance(end, GameEnd)
    # the log's line format keeps `round` second, as logs written before the shared classes have it
    assert list(json.loads(tried.model_dump_json())) == ["type", "round", "player", "tile", "tile_colour", "holdings"]
    assert list(json.loads(goal.model_dump_json())) == ["type", "round", "player"]
    assert list(json.loads(end.model_dump_json())) == ["type", "reason"]
    monitor = monitor_events([tried, goal, end])
    assert [type(e) for e in monitor] == [MoveAttempt, GoalReached, GameEnd]
    assert monitor[0].holdings == tried.holdings and monitor[1].player == goal.player


def test_a_contractsim_week_end_reaches_the_monitor_without_its_annotations():
    record = play_contractsim(IR, environment(3), "rcc", "rcc", seed=1)
    ends = [e for e in monitor_events(record.log) if e.type == "week_end"]
    assert [type(e) for e in ends] == [WeekEnd] * 11 and [e.week for e in ends] == list(range(1, 12))


class Started:
    """An agent that records being closed."""

    closed: list[str] = []

    def __init__(self, seat):
        self.name = f"started-{seat.role}"

    def act(self, observation):
        return None

    def close(self):
        Started.closed.append(self.name)


class Broken:
    name = "broken"

    def __init__(self):
        raise RuntimeError("no table")


def test_seating_closes_the_agents_started_before_one_that_fails():
    Started.closed.clear()
    with pytest.raises(AgentError, match=r"agent 'broken' \(supplier\) failed to start: RuntimeError: no table"):
        with seated({"customer": Started, "supplier": Broken}, game="contractsim"):
            pass
    assert Started.closed == ["started-customer"]
    with seated({"customer": Started, "supplier": Started}, game="contractsim") as agents:
        assert list(agents) == ["customer", "supplier"]
    assert Started.closed == ["started-customer", "started-customer", "started-supplier"]
