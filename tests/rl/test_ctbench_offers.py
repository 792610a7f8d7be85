"""CT-Bench's learners make offers: trades in trading mode, Pay-for-Partner arrangements otherwise, as masked
discrete actions the rules' own legality test decides ([CT-16], [CT-17]), seen by the responder as features."""

from __future__ import annotations

import numpy as np
import pytest

from contractlang.api.rl import CTBENCH_ACTIONS, ctbench_env, ctbench_gym

SWAP = "examples/ctbench-board-24-swap.contract"


def test_the_offers_are_listed_once_each_and_named():
    assert len(set(CTBENCH_ACTIONS)) == len(CTBENCH_ACTIONS)
    trades = [a for a in CTBENCH_ACTIONS if a.startswith("trade: ")]
    arrangements = [a for a in CTBENCH_ACTIONS if a.startswith("arrangement: ")]
    assert len(trades) == 3 * 4 * 2 * 4  # a colour and 1..4 chips for another colour and 1..4 chips
    assert len(arrangements) == 13 * 13 - 1  # nothing or a colour and 1..4 tiles, each way, not both nothing
    assert "trade: give 2 red for 1 blue" in trades
    assert "arrangement: I cover nothing, you cover 3 green" in arrangements


@pytest.mark.parametrize(("mode", "kind"), [("trade", "trade: "), ("pfp", "arrangement: ")])
def test_the_mode_decides_which_offers_the_proposer_may_make(mode, kind):
    env = ctbench_env(SWAP, board=24, mode=mode)
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    legal = {CTBENCH_ACTIONS[i] for i in np.flatnonzero(mask)}
    offers = {a for a in CTBENCH_ACTIONS if a.startswith(("trade: ", "arrangement: "))}
    assert legal & offers == {a for a in offers if a.startswith(kind)}
    assert "no proposal" in legal


def test_an_offer_is_played_and_the_responder_sees_it():
    env = ctbench_env(SWAP, board=24, mode="trade")
    env.reset(seed=0)
    proposer = env.agent_selection
    env.step(CTBENCH_ACTIONS.index("trade: give 2 red for 1 blue"))
    assert env.infos[proposer]["events"][-1]["offer"]["give"]["red"] == 2
    responder = env.agent_selection
    assert responder != proposer
    seen = dict(zip(env.feature_names(responder), env.observe(responder)["observation"]))
    assert (seen["offer_gain[red]"], seen["offer_cost[blue]"], seen["offer_gain[blue]"]) == (2, 1, 0)
    legal = {CTBENCH_ACTIONS[i] for i in np.flatnonzero(env.observe(responder)["action_mask"])}
    assert legal == {"accept", "reject"}


def test_a_learner_offers_the_planner_an_arrangement():
    env = ctbench_gym(SWAP, board=24, role="red", opponent="planner", mode="pfp")
    env.reset(seed=0)
    _, _, _, _, info = env.step(CTBENCH_ACTIONS.index("arrangement: I cover 1 red, you cover 1 blue"))
    kinds = [e.get("type") for e in info["events"]]
    assert kinds[:2] == ["proposal", "response"], kinds
