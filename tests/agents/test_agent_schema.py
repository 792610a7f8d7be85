"""`contractlang agent-schema` (issue #43 item 7): the schema comes from the games' models, and what the games
really send and accept validates against it, while a malformed observation or action does not."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from games.agents import Seat, make_agent
from games.ctbench.board import benchmark_board
from games.ctbench.game import CTBenchGame
from games.ctbench.negotiation import observation as talk_observation
from tests.helpers import run_cli


def schemas(*args) -> dict:
    done = run_cli("agent-schema", *args, "--json")
    assert done.returncode == 0, done.stderr
    return {(s["game"], s["role"]): s for s in json.loads(done.stdout)["schemas"]}


def valid(schema: dict, document) -> bool:
    return Draft202012Validator(schema).is_valid(document)


def contractsim_states():
    """Every decision of one ContractSim game between rational players, with the state it was taken in."""
    from contractlang import load
    from games.contractsim.environments import environment
    from games.contractsim.game import ContractSimGame
    from games.contractsim.shocks import draw_shocks
    from solver.dp import TableCache

    ir, env = load("examples/worked-example-1.contract")[0].ir, environment(1)
    tables = TableCache(None)
    seat = Seat(game="contractsim", role="customer", tables=lambda cover: tables.solve(ir, env, cover)[1])
    agents = {r: make_agent("rcc", replace(seat, role=r)) for r in ("customer", "supplier")}
    state = ContractSimGame.make(ir, env).new_initial_state(draw_shocks(env, np.random.default_rng(42)))
    while not state.is_terminal():
        role = state.current_player()
        action = agents[role].act(state.observe(role))
        yield role, state.observe(role), action
        state = state.apply_action(action)


@pytest.mark.e2e
def test_every_observation_and_action_of_a_contractsim_game_validates():
    found = schemas("contractsim")
    seen = set()
    for role, observation, action in contractsim_states():
        schema = found["contractsim", role]
        assert valid(schema["observation"], observation.model_dump(mode="json"))
        assert valid(schema["action"], action.model_dump(mode="json"))
        seen.add((role, action.kind))
    assert seen == {("customer", "pay"), ("supplier", "order"), ("supplier", "produce")}
    customer = found["contractsim", "customer"]
    assert not valid(customer["action"], {"kind": "pay"})  # the amount is required
    assert not valid(customer["observation"], {"role": "customer", "week": 1})


def test_ctbench_play_and_negotiation_observations_validate():
    red = schemas("ctbench", "red")["ctbench", "red"]
    board = benchmark_board(24).board
    state = CTBenchGame(board=board).new_initial_state()
    planner = make_agent("planner", Seat(game="ctbench", role="red"))
    for _ in range(6):
        player = state.current_player()
        obs = state.observe(player)
        action = planner.act(obs)
        assert valid(red["observation"], obs.model_dump(mode="json"))
        assert valid(red["action"], action.model_dump(mode="json"))
        state = state.apply_action(action)
    talk = talk_observation("red", "negotiate", "prog_trading", "pfp", board, True, ())
    assert valid(red["observation"], talk.model_dump(mode="json"))
    assert valid(red["action"], {"kind": "say", "message": "agree"})
    assert not valid(red["action"], {"kind": "move", "tile": [0, 1, 2]})


def test_unknown_games_and_roles_are_one_line():
    builtin = {"contractsim", "contractsim-negotiation", "ctbench"}  # a test may have registered a game of its own
    assert len([game for game, _ in schemas() if game in builtin]) == 6
    for args, message in ((("chess",), "unknown game 'chess'"), (("ctbench", "customer"), "ctbench has the roles")):
        done = run_cli("agent-schema", *args)
        assert done.returncode == 1 and message in done.stderr


@pytest.mark.parametrize("game", ["contractsim-negotiation"])
def test_the_negotiation_turn_is_the_answer_line(game):
    turn = schemas(game)[game, "customer"]["action"]
    assert valid(turn, {"response": "I accept.", "accept": True})
    assert not valid(turn, {"accept": True})


def _properties(schema: dict):
    """(where, property schema) of every property of a schema and of its $defs."""
    for name, definition in [("", schema), *schema.get("$defs", {}).items()]:
        for field, prop in definition.get("properties", {}).items():
            yield f"{name}.{field}", prop


def test_every_field_says_what_it_means_and_the_supplier_schema_holds_the_recipes():
    found = schemas()
    for (game, role), schema in found.items():
        for part in ("observation", "action"):
            props = dict(_properties(schema[part]))
            # CT-Bench: the observation's own fields (its nested board and chip types are self-explaining)
            asked = [w for w in props if game.startswith("contractsim") or (part == "observation" and w[0] == ".")]
            undescribed = [
                w for w in asked if w.split(".")[-1] not in ("role", "kind") and not props[w].get("description")
            ]
            assert not undescribed, f"{game} {role} {part}: {undescribed}"
    found = schemas("contractsim")
    supplier = found["contractsim", "supplier"]["observation"]["properties"]
    assert supplier["recipes"]["default"] == [[1, 1, 1], [1, 1, 0], [0, 0, 1]]
    assert "base units" in supplier["cash"]["description"] and "input" in supplier["prices"]["description"]


def allowed(observation, q) -> bool:
    """By hand (ContractSim paper, App. C.1): an order within the cap and the cash; an output whose inputs the
    inventory holds, the first product using inputs 1, 2 and 3, the second 1 and 2, the third 3."""
    n = observation.inventory
    if observation.phase == "order":
        cost = sum(x * p for x, p in zip(q, observation.prices))
        return max(q) <= observation.order_cap and cost <= observation.cash
    return q[0] + q[1] <= min(n[0], n[1]) and q[0] + q[2] <= n[2]


def test_the_supplier_observation_lists_exactly_the_legal_actions():
    """legal_actions() on the Supplier's observation is every order or output the rules allow, and nothing else."""
    from games.contractsim.game import Order, Produce

    decisions = [(o, a) for role, o, a in contractsim_states() if role == "supplier"]
    assert {o.phase for o, _ in decisions} == {"order", "produce"}
    state_of = {}
    for role, observation, _ in contractsim_states():
        if role == "supplier":
            state_of.setdefault(observation.phase, observation)
    for phase, observation in state_of.items():
        listed = observation.legal_actions()
        kind = Order if phase == "order" else Produce
        box = range(max(observation.order_cap, max(observation.inventory)) + 2)
        every = [kind(quantities=(a, b, c)) for a in box for b in box for c in box]
        assert set(listed) == {x for x in every if allowed(observation, x.quantities)} and listed
        assert all(observation.why_illegal(x) is None for x in listed)
    for observation, action in decisions:  # what the rational Supplier chose is always among them
        assert action in observation.legal_actions()
