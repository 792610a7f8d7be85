"""What a scenario test asks of a game's engine beyond the contract: the players' utilities or scores.

The monitor says what the contract makes of the events; a utility also needs the game's world (inventory,
production, input costs, the Customer's valuation), which lives with the game. `contractlang` never imports a
game, so the runner is handed one `World` per contract kind (each game names its own, `GameType.scenario`, and
the facade `cl.test` collects them); without one, an expectation about a utility fails, saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from contractlang.interpreter.events import EventBase
from contractlang.ir import ContractIR, ScenarioIR
from contractlang.vocab import Frozen


class Fault(Frozen):
    """Why the engine cannot play a scenario: the `given` lines it is about, the first one the test writes
    taken (keys of `CheckedScenario.given_spans`: `env`, `order@4`, `week@3`), and what the game's rules forbid."""

    given: tuple[str, ...]
    message: str


class Outcome(Frozen):
    """What the engine made of a scenario: each role's realised utility in the setting's dollars and its
    account week by week, or the fault that stopped it."""

    utilities: dict[str, int] = {}  # ContractSim: each role's utility; CT-Bench: each player's final score
    rows: tuple[str, ...] = ()
    fault: Fault | None = None
    events: tuple[EventBase, ...] = ()  # the monitor's events as the engine played them (a CT-Bench board's)


@runtime_checkable
class World(Protocol):
    """A game's engine as a scenario test uses it: play the test's world with the events the monitor was given
    (ContractSim's payments and deliveries in the setting's dollars, in order), or a CT-Bench test's steps on
    its board, and say what each role's utility or score came to."""

    def play(self, contract: ContractIR, scenario: ScenarioIR, events: tuple[EventBase, ...]) -> Outcome: ...


Worlds = Mapping[str, World]
"""The engine for each contract kind (`ContractSimIR.kind`, `CTBenchIR.kind`) a run has at hand."""
