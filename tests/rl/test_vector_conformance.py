"""The conformance table of the ContractSim clause semantics (tests/conformance/contractsim.json) run on the
vectorised engine, as tests/interpreter/test_conformance.py runs it on every other implementation: the case's
Customer is one of the engine's rational ones, its Supplier the learner, scripted to deliver the case's
quantities (free inputs, received in full, nothing spoils)."""

from __future__ import annotations

import numpy as np
import pytest

from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS
from games.contractsim.environments import environment
from games.contractsim.vector import VectorGames
from tests.interpreter.test_conformance import CASES, IMPLEMENTATIONS, batch_customer, contract, mismatches

SIDE = 13


def vector_engine(case):
    """The case played as one game: the answers the engine keeps (compliance, D, dues, required quantities,
    memory, the deduction δ) and the first violations."""
    floors = case.get("floors", "cs14")
    env = environment(1, floors).model_copy(  # exact receipts, no spoilage; free inputs, cash to spare
        update={"price_laws": (((0, 1.0),),) * 3, "budget": 10**6, "capital": 0}
    )
    games = VectorGames(contract(case), env, 1, "supplier", batch_customer(case))
    games.begin(np.array([0]), np.zeros((1, 5, 3, 3)))
    answer = {}
    for week in PRODUCTION_WEEKS:
        y = case["weeks"][week - 1]["delivered"]
        uses = (y[0] + y[1], y[0] + y[1], y[0] + y[2])
        games.step(np.array([(uses[0] * SIDE + uses[1]) * SIDE + uses[2]]), np.array([True]))
        required = games.obs[0, 17:20].astype(int).tolist()
        games.step(np.array([(y[0] * SIDE + y[1]) * SIDE + y[2]]), np.array([True]))
        assert not games.fallback[0]
        answer[week] = {
            "required": required,
            "deduction": int(games.week_delta[0, PRODUCTION_WEEKS.index(week)]),
            "memory": games.memory_states[games.st[0, 7]].tolist(),  # MU
        }
    for week in PAYMENT_WEEKS + PRODUCTION_WEEKS:
        row = answer.setdefault(week, {})
        row.update(compliant=bool(games.week_ok[0, week - 1]), D=bool(games.week_seen[0, week - 1]))
        if week in PAYMENT_WEEKS:
            row["due"] = int(games.week_due[0, week // 2])
    first = games.first_violations()[0]
    return answer, {"customer": int(first[0]) or None, "supplier": int(first[1]) or None}


PLAYABLE = [name for name, case in CASES.items() if batch_customer(case) is not None]


@pytest.mark.parametrize("name", PLAYABLE)
def test_conformance_of_the_vectorised_engine(name, monkeypatch):
    monkeypatch.setitem(IMPLEMENTATIONS, "vector", vector_engine)
    assert mismatches("vector", CASES[name]) == []


def test_the_engine_plays_most_cases():
    assert len(PLAYABLE) >= len(CASES) - 2
