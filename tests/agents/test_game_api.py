"""`contractlang.testing.check_game_api` (issue #43 item 3): both games pass it, and it fails — naming the broken
property — on games broken on purpose: one that leaks money, one that offers an action it then refuses, one whose
initial state does not follow its seed."""

from __future__ import annotations

import numpy as np
import pytest

from contractlang import load
from contractlang.testing import GameApiError, GameUnderTest, check_game_api
from games.agents import Seat, make_agent
from games.contractsim.environments import environment
from games.contractsim.game import ContractSimGame, Order, Pay, Produce, State
from games.contractsim.shocks import draw_shocks
from games.ctbench.board import benchmark_board
from games.ctbench.game import Arrangement, CTBenchGame, Move, Propose, Respond, Trade, total
from tests.helpers import ROOT

IR = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
ENV = environment(3)


def contractsim(state_type=State, new_state=None) -> GameUnderTest:
    game = ContractSimGame.make(IR, ENV)

    def start(seed: int):
        state = game.new_initial_state(draw_shocks(ENV, np.random.default_rng(seed)))
        return state if state_type is State else state_type.model_construct(**dict(state))

    def random_action(state, rng):
        agent = make_agent("random", Seat(game="contractsim", role=state.current_player(), rng=rng))
        return agent.act(state.observe(state.current_player()))

    def probes(state):
        cap = ENV.order_cap
        return [
            Pay(amount=state.budget_left),
            Pay(amount=state.budget_left + 1),
            Pay(amount=-1),
            Order(quantities=(1, 0, 0)),
            Order(quantities=(cap + 1, 0, 0)),
            Order(quantities=(cap, cap, cap)),
            Produce(quantities=(1, 0, 0)),
            Produce(quantities=(99, 0, 0)),
        ]

    return GameUnderTest(
        new_state=new_state or start,
        random_action=random_action,
        probes=probes,
        conserved=lambda s: s.budget_left + s.cash + s.spend_total,
    )


def ctbench() -> GameUnderTest:
    board = benchmark_board(24).board

    def random_action(state, rng):
        agent = make_agent("random", Seat(game="ctbench", role=state.current_player(), rng=rng))
        return agent.act(state.observe(state.current_player()))

    one = {"red": 1, "blue": 0, "green": 0}

    def probes(state):
        return [
            Propose(offer=None),
            Respond(accept=True),
            Move(tile=(3, 3)),
            Move(tile=None),
            Propose(offer=Trade(give=one, receive=one)),
            Propose(offer=Arrangement(i_cover=one, you_cover=one)),
        ]

    return GameUnderTest(
        new_state=lambda seed: CTBenchGame(board=board, mode="pfp").new_initial_state(),
        random_action=random_action,
        probes=probes,
        conserved=lambda s: total(s.red_chips) + total(s.blue_chips) + s.stats.chips_spent,
    )


def test_both_games_pass():
    assert check_game_api(contractsim(), seeds=(0, 1)).games == 2
    report = check_game_api(ctbench(), seeds=(0, 1))
    assert report.steps > 50


class LeakyState(State):
    """Every payment loses a dollar on the way to the Supplier."""

    def _pay(self, amount: int) -> State:
        paid = super()._pay(amount)
        return LeakyState.model_construct(**{**dict(paid), "cash": paid.cash - 1})


class OverOfferingState(State):
    """Offers a payment above the remaining budget, which it then refuses."""

    def legal_actions(self):
        offered = super().legal_actions()
        return offered + [Pay(amount=self.budget_left + 1)] if self.phase == "pay" else offered


@pytest.mark.parametrize(
    "broken,message",
    [
        (contractsim(LeakyState), "changed the conserved quantity"),
        (contractsim(OverOfferingState), "is called illegal: pays $"),
        (
            contractsim(
                new_state=lambda seed: ContractSimGame.make(IR, ENV).new_initial_state(
                    draw_shocks(ENV, np.random.default_rng())
                )
            ),
            "two plays with the same seed differ",
        ),
    ],
)
def test_a_broken_game_fails_with_the_property_it_breaks(broken, message):
    with pytest.raises(GameApiError) as failed:
        check_game_api(broken, seeds=(0,))
    assert message in str(failed.value)
    if "pays $" in message:
        assert "of the budget remains" in str(failed.value) and "is legal but apply_action refuses it" in str(
            failed.value
        )
