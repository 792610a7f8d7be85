"""`cl.expected_utility_differences` from Python: each decision of a played ContractSim game beside RCC's in the
same state (ContractSim paper, eq. 12; [CS-28]), the analysis the viewer's week-by-week page shows."""

from __future__ import annotations

import pytest

import contractlang as cl
from contractlang.errors import BadData
from tests.helpers import ROOT

CONTRACT = ROOT / "examples" / "worked-example-1.contract"


def test_rcc_against_rcc_differs_from_rcc_nowhere(tables):
    played = cl.play(CONTRACT, env=5)
    found = cl.expected_utility_differences(played, tables=tables)
    assert found.decisions and all(d.same and d.expected is None for d in found.decisions)
    assert {d.role for d in found.decisions} == {"customer", "supplier"}
    assert all(row["difference"] is None for row in found.rows())


def test_a_random_customer_is_priced_against_rccs_payment(tables):
    played = cl.play(CONTRACT, env=5, agents={"customer": "random"}, seed=3)
    found = cl.expected_utility_differences(played.record, tables=tables)
    priced = [d for d in found.decisions if d.expected is not None]
    assert priced and all(not d.same for d in priced)
    for d in priced:
        assert d.expected.who == d.role == "customer"
        assert d.expected.difference == pytest.approx(d.expected.rcc - d.expected.agent)
    # the supplier is RCC itself: every one of its decisions is RCC's own
    assert all(d.same for d in found.decisions if d.role == "supplier")


def test_a_record_that_is_not_a_contractsim_game_is_refused():
    ctbench = cl.play("examples/ctbench-board-24-swap.contract", board=24)
    with pytest.raises(BadData, match="played ContractSim game"):
        cl.expected_utility_differences(ctbench)
    with pytest.raises(cl.BadArgument, match="played"):
        cl.expected_utility_differences(object())
