"""The six ContractSim environments (ContractSim paper, App. A.3), in Catering base units."""

from __future__ import annotations

from contractlang.errors import UnknownName
from contractlang.interpreter.rounds import DEFAULT_FLOORS, FLOOR_RULES
from solver.environment import SupplyEnvironment

_FIXED = ((1, 1.0),), ((1, 1.0),), ((2, 1.0),)
_LOW = ((1, 2 / 3), (3, 1 / 3)), ((1, 2 / 3), (2, 1 / 3)), ((2, 2 / 3), (3, 1 / 3))
_HIGH = ((1, 0.5), (3, 0.5)), ((1, 0.5), (2, 0.5)), ((2, 0.5), (3, 0.5))
_V_LOW, _V_HIGH = (12, 6, 3), (20, 10, 5)

ENVIRONMENTS: dict[int, SupplyEnvironment] = {
    1: SupplyEnvironment(
        id=1, budget=200, capital=20, values=_V_LOW, price_laws=_FIXED, receipt_law="exact", spoilage_max=0
    ),
    2: SupplyEnvironment(
        id=2, budget=200, capital=40, values=_V_HIGH, price_laws=_FIXED, receipt_law="exact", spoilage_max=0
    ),
    3: SupplyEnvironment(
        id=3, budget=200, capital=20, values=_V_LOW, price_laws=_LOW, receipt_law="three_quarters", spoilage_max=1
    ),
    4: SupplyEnvironment(
        id=4, budget=200, capital=40, values=_V_HIGH, price_laws=_LOW, receipt_law="three_quarters", spoilage_max=1
    ),
    5: SupplyEnvironment(
        id=5, budget=200, capital=20, values=_V_LOW, price_laws=_HIGH, receipt_law="half", spoilage_max=2
    ),
    6: SupplyEnvironment(
        id=6, budget=200, capital=40, values=_V_HIGH, price_laws=_HIGH, receipt_law="half", spoilage_max=2
    ),
}


def environment(env_id: int, floors: str = DEFAULT_FLOORS) -> SupplyEnvironment:
    """Environment `env_id` played under the floor rule set named `floors` ([CS-14a])."""
    if env_id not in ENVIRONMENTS:
        raise UnknownName(f"unknown environment {env_id}; environments are 1..6")
    if floors not in FLOOR_RULES:
        raise UnknownName(f"unknown floor rule set {floors!r}; choose from {', '.join(FLOOR_RULES)}")
    env = ENVIRONMENTS[env_id]
    return env if floors == DEFAULT_FLOORS else env.model_copy(update={"floors": FLOOR_RULES[floors]})


class PlayedIn:
    """For a job or record with the fields `env` and `floors`: the environment its games are played in, under its
    floor rule set ([CS-14a])."""

    @property
    def environment(self) -> SupplyEnvironment:
        return environment(self.env, self.floors)
