"""`contractlang.testing.check_game_api` takes a loaded game, as PettingZoo's `api_test(env)`: both games pass it,
and it fails, naming the broken property, on games broken on purpose: one that leaks money, one that offers an
action it then refuses, one whose initial state does not follow its seed."""

from __future__ import annotations

import numpy as np
import pytest

import contractlang as cl
from contractlang.errors import UnknownName
from contractlang.testing import GameApiError, check_game_api
from games.contractsim.game import Pay, State
from games.contractsim.registered import ContractSim
from games.contractsim.shocks import draw_shocks
from games.game import SetupError, game_types, load_game
from tests.helpers import ROOT

WORKED = ROOT / "examples" / "worked-example-1.contract"
SWAP = ROOT / "examples" / "ctbench-board-24-swap.contract"


def test_both_games_load_by_name_and_pass():
    contractsim = cl.load_game("contractsim", contract=WORKED, env=3)
    assert contractsim.game_type.roles == ("customer", "supplier")
    assert check_game_api(contractsim, seeds=(0, 1)).games == 2
    ctbench = cl.load_game("ctbench", contract=SWAP, board=24)
    assert check_game_api(ctbench, seeds=(0, 1)).steps > 50


def test_a_setup_that_does_not_fit_is_one_line_naming_the_fields():
    with pytest.raises(SetupError, match=r"^ctbench needs board= \(it takes board=, contract="):
        cl.load_game("ctbench", contract=SWAP)
    with pytest.raises(SetupError, match="^contractsim takes no board="):
        cl.load_game("contractsim", contract=WORKED, env=3, board=24)
    with pytest.raises(UnknownName, match="unknown game 'go'"):
        load_game("go")


def test_the_registry_knows_each_game_by_its_contracts_kind():
    kinds = {t.name: t.ir_kind for t in game_types()}
    assert kinds["contractsim"] == "contractsim" and kinds["ctbench"] == "ctbench"
    assert kinds["contractsim-negotiation"] is None  # a protocol, not a game played on its own


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


class Broken(ContractSim):
    """ContractSim whose initial states are of a broken state type."""

    def __init__(self, state_type):
        super().__init__(cl.load_game("contractsim", contract=WORKED, env=3).setup)
        self.state_type = state_type

    def new_initial_state(self, seed: int):
        return self.state_type.model_construct(**dict(super().new_initial_state(seed)))


class Unseeded(ContractSim):
    """ContractSim whose shocks ignore the seed."""

    def __init__(self):
        super().__init__(cl.load_game("contractsim", contract=WORKED, env=3).setup)

    def new_initial_state(self, seed: int):
        return self.base.new_initial_state(draw_shocks(self.environment, np.random.default_rng()))


@pytest.mark.parametrize(
    "broken,message",
    [
        (lambda: Broken(LeakyState), "changed the conserved quantity"),
        (lambda: Broken(OverOfferingState), "is called illegal: pays $"),
        (Unseeded, "two plays with the same seed differ"),
    ],
)
def test_a_broken_game_fails_with_the_property_it_breaks(broken, message):
    with pytest.raises(GameApiError) as failed:
        check_game_api(broken(), seeds=(0,))
    assert message in str(failed.value)
    if "pays $" in message:
        assert "of the budget remains" in str(failed.value) and "is legal but apply_action refuses it" in str(
            failed.value
        )
