"""`cl.load_game` and `cl.play`: a registered game set up, and one game of it played under a contract, agents
given as objects, names or specs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from contractlang.api.language import ContractLike, as_checked
from contractlang.api.results import Rows
from contractlang.errors import Seed, Text, checked
from games.game import Game, GameType, PlayRecord, game_for_contract, game_type
from games.game import load_game as _load


class Played(Rows):
    """One played game's record (`PlayRecord`: agents and outcome by role, events, LLM usage, the game's own
    record as `detail`); `rows()` are the game's table of it (ContractSim: one per week, CT-Bench: one per
    player)."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    record: PlayRecord
    loaded: Any = Field(default=None, exclude=True, repr=False)  # the game it was played in

    def story(self) -> str:
        """The game told for a person, as `contractlang run` prints it."""
        return self.loaded.story(self.record)

    def to_json(self) -> dict:
        """The object `contractlang run --json` prints."""
        return self.loaded.to_json(self.record)

    @property
    def game(self) -> str:
        return self.record.game

    @property
    def p_sat(self) -> float | None:
        """ContractSim with a rational Supplier: the contract's P_sat in the environment (exact DP)."""
        return self.record.facts.get("p_sat")

    def rows(self) -> list[dict]:
        return [dict(r) for r in self.record.rows]


@checked
def load_game(name: Text, **setup: Any) -> Game:
    """The registered game `name` set up by `setup`; a `contract` may be a file or a checked contract, e.g.
    `load_game("contractsim", contract="examples/worked-example-1.contract", env=5)` or
    `load_game("ctbench", contract=..., board=24)`."""
    if isinstance(setup.get("contract"), (str, bytes)) or hasattr(setup.get("contract"), "__fspath__"):
        setup["contract"] = as_checked(setup["contract"])
    return _load(name, **setup)


@checked
def play(
    contract: Any = None,
    agents: Mapping[str, Any] | None = None,
    seed: Seed | None = None,
    llm: Any = None,
    game: Text | None = None,
    **setup: Any,
) -> Played:
    """Play `contract` (a file or a checked contract) in the game its kind names, or the registered `game` under
    its own kind of contract (None: none), set up by `setup` (ContractSim: `env=N`, `floors=`, `guidance=`;
    CT-Bench: `board=ID`, `mode=`, `visible=`, `rules=`), with `agents` {role: agent} where an agent is an object
    with `act`, a class, a factory, a built-in name or a spec (`py:`, `cmd:`, `llm:`); unnamed roles take the
    game's default agent (RCC, the planner). The seed defaults as `contractlang run`'s (42 and 0); `llm` is an
    `LlmClient` for `llm:` agents."""
    if game is None:
        contract = as_checked(contract)
        kind = game_for_contract(contract.ir)
    else:
        kind = game_type(game)
    seats = {**kind.default_agents, **(agents or {})}
    unknown = set(seats) - set(kind.roles)
    if unknown:
        raise ValueError(f"{kind.name} has the roles {', '.join(kind.roles)}, not {', '.join(sorted(unknown))}")
    given = {k: v for k, v in {**setup, "contract": contract}.items() if v is not None}
    loaded = load_game(kind.name, **given)
    return Played(record=loaded.play(seats, seed, llm=llm), loaded=loaded)


@checked
def game_for(contract: ContractLike) -> GameType:
    """The registered type of the game a contract (a file or a checked contract) plays."""
    return game_for_contract(as_checked(contract).ir)
