"""A third game registered only in the tests (tests/thirdgame/exchange.py) plays through every piece the two
papers' games use: `cl.play` and `cl.load_game`, `check_game_api`, the agent registry, the runner's workers,
store and resume, and the viewer's game list."""

from __future__ import annotations

import pytest

import contractlang as cl
from contractlang.api.schema import agent_schema
from contractlang.api.view.site import Viewer
from contractlang.testing import GameApiError, check_game_api
from games.agents import model_of
from games.runner import run_phase
from tests.thirdgame.exchange import ROLES, Clause, Exchange, ExchangeJob, ExchangeRun, Send, play_job

JOBS = [ExchangeJob(seed=s, alice=a, bob=b) for s in (0, 1) for a, b in (("generous", "keeper"), ("random", "random"))]


def test_it_plays_through_cl_play_with_names_and_objects():
    class Half:
        name = "half"

        def act(self, observation):
            return Send(amount=observation.received // 2)

    played = cl.play(game="exchange", agents={"bob": Half()}, seed=4)
    # alice (generous by default) sends 3, bob returns 1; the clause takes the other 2 from bob
    assert played.record.outcome == {"alice": 5, "bob": 5}
    assert [cl.load_game("exchange").describe(e) for e in played.record.events] == [
        "round 1: alice sends 3",
        "round 2: bob sends 1",
        "contract: 2 taken from bob for alice",
    ]
    assert played.rows()[1] == {"player": "bob", "agent": "half", "tokens": 5}
    unbound = cl.play(game="exchange", agents={"bob": "keeper"}, contract=Clause(share=0))
    assert unbound.record.outcome == {"alice": 2, "bob": 8}  # a clause that asks nothing: bob keeps it all
    assert model_of("keeper", "exchange") is None


def test_it_passes_the_game_api_check_and_a_leaky_version_fails():
    assert check_game_api(cl.load_game("exchange", start=2)).games == 3

    class Leaky(Exchange):
        def conserved(self, state):
            return sum(state.holdings.values()) + state.round  # counts a token that is not there

    with pytest.raises(GameApiError, match="changed the conserved quantity"):
        check_game_api(Leaky(cl.load_game("exchange").setup), seeds=(0,))


def test_its_roles_and_types_are_in_the_agent_schema():
    schemas = agent_schema("exchange")
    assert [s.role for s in schemas] == list(ROLES) and "amount" in schemas[0].action["properties"]


def _store_run(path, workers: int):
    return run_phase("exchange", path, ExchangeRun, play_job, JOBS, workers=workers)


def test_the_runner_stores_resumes_and_the_viewer_lists_it(tmp_path):
    store = tmp_path / "games.jsonl"
    records, played = _store_run(store, workers=1)
    assert played == len(JOBS) and records[JOBS[0]].outcome == {"alice": 5, "bob": 5}
    first = store.read_bytes()
    store.write_bytes(b"".join(first.splitlines(keepends=True)[:1]))  # a run stopped after its first game
    again, played = _store_run(store, workers=1)
    assert played == len(JOBS) - 1 and store.read_bytes() == first and again == records
    rows = Viewer(tmp_path, live=False).index.rows
    assert [(r.game, r.agent, r.counterparty, r.utility) for r in rows][:2] == [
        ("exchange", "generous", "keeper", 5),
        ("exchange", "random", "random", records[JOBS[1]].outcome["alice"]),
    ]
    page = Viewer(tmp_path, live=False).game(rows[0].id)
    assert page["events"][-1]["text"] == "contract: 3 taken from bob for alice"


@pytest.mark.e2e
def test_the_runners_worker_processes_write_the_same_store(tmp_path):
    _store_run(tmp_path / "one.jsonl", workers=1)
    records, played = _store_run(tmp_path / "two.jsonl", workers=2)
    assert played == len(JOBS) and (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
