"""ContractSim as a registered game ([CS-01]): its type, its setup (a contract, an environment, a floor rule set)
and the loaded game `load_game("contractsim", contract=..., env=N)` returns."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any

import numpy as np
from pydantic import Field, field_validator

from contractlang.interpreter.events import EventBase
from contractlang.interpreter.rounds import DEFAULT_FLOORS
from contractlang.ir import ContractSimIR
from contractlang.vocab import Frozen
from games.agents import Seat, make_agent
from games.contractsim.environments import environment
from games.contractsim.game import (
    Action,
    ContractSimGame,
    CustomerObservation,
    Order,
    Pay,
    Produce,
    State,
    SupplierObservation,
)
from games.contractsim.log import LogEntry
from games.contractsim.negotiation import NegotiationObservation, NegotiationTurn
from games.contractsim.shocks import draw_shocks
from games.game import GameType, PlayRecord, register_game


class ContractSimSetup(Frozen):
    """A ContractSim game: the contract (a checked contract or its IR), the environment (1..6, ContractSim
    paper, App. A.3), the floor rule set ([CS-14a]) and the prompt guidance clauses of LLM agents."""

    contract: ContractSimIR
    env: Annotated[int, Field(ge=1, le=6)]
    floors: str = DEFAULT_FLOORS
    guidance: tuple[str, ...] = ()

    @field_validator("contract", mode="before")
    @classmethod
    def _ir(cls, value):
        return getattr(value, "ir", value)

    @field_validator("guidance")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Only prompt guidance clauses the LLM agents know (`UnknownName` names the others)."""
        from games.contractsim.llm_agents import guidance_for

        guidance_for(value, "performance", "customer")
        return value


GAME_TYPE = GameType(
    name="contractsim",
    title="ContractSim",
    roles=("customer", "supplier"),
    observations={"customer": CustomerObservation, "supplier": SupplierObservation},
    actions={"customer": Pay, "supplier": Annotated[Order | Produce, Field(discriminator="kind")]},
    setup=ContractSimSetup,
    ir_kind="contractsim",
    default_agents={"customer": "rcc", "supplier": "rcc"},
    agent_modules=("games.contractsim.agents",),
    who="{role} policy",
    summary="supplier contracting over 11 weeks under stochastic prices, losses and spoilage",
    events=LogEntry,
    tournament="games.tournament.contractsim",
    scenario="games.contractsim.scenario",
)
DEFAULT_SEED = 42  # ContractSim paper, App. A.3


class ContractSim:
    """One contract in one environment: initial states from a seed's shocks ([CS-11]), whole games played."""

    game_type = GAME_TYPE

    def __init__(self, setup: ContractSimSetup):
        self.setup = setup
        self.environment = environment(setup.env, setup.floors)
        self.base = ContractSimGame.make(setup.contract, self.environment)

    def new_initial_state(self, seed: int) -> State:
        return self.base.new_initial_state(draw_shocks(self.environment, np.random.default_rng(seed)))

    @cached_property
    def _tables(self):
        from solver.dp import TableCache

        return TableCache()

    def play(self, agents: Mapping[str, Any], seed: int | None = None, *, llm=None, tables=None) -> PlayRecord:
        """One game, each role's agent a spec or a Python agent; a rational Supplier (rc, rcc) solved the
        contract's DP table for it, so the contract's P_sat comes with the record."""
        from games.contractsim.play import play

        seed = DEFAULT_SEED if seed is None else seed
        tables = tables or self._tables
        ir, env = self.setup.contract, self.environment
        record = play(
            ir, env, agents["customer"], agents["supplier"], seed, tables=tables, llm=llm, guidance=self.setup.guidance
        )
        p_sat = tables.solve(ir, env)[0].p_sat if record.supplier in ("rc", "rcc") else None
        return self.record(record, p_sat)

    def record(self, run, p_sat: float | None = None) -> PlayRecord:
        """The one record of a played game, from ContractSim's own (`RunRecord`)."""
        return PlayRecord(
            game=GAME_TYPE.name,
            setup={
                "env": run.env,
                "guidance": self.setup.guidance or None,
                "floors": None if run.floors == DEFAULT_FLOORS else run.floors,
            },
            seed=run.seed,
            agents=run.agents,
            outcome=run.outcome,
            events=run.log,
            llm_calls=run.llm_calls,
            rows=tuple(w.model_dump() for w in run.weeks),
            facts={"p_sat": p_sat, "usage_note": _defaults_note(run)},
            detail=run,
        )

    def story(self, record: PlayRecord) -> str:
        """The game week by week ([CS-11]), the floor rule set when it is not the default ([CS-14a]) and the
        contract's P_sat when a rational Supplier played."""
        from games.contractsim.story import story

        run, p_sat = record.detail, record.facts.get("p_sat")
        lines = [story(run, self.setup.contract)]
        if run.floors != DEFAULT_FLOORS:
            lines.append(f"Played under the {run.floors} floor rule set [CS-14a].")
        if p_sat is not None:
            lines.append(f"P_sat of this contract here (exact DP): {p_sat:.6f}")
        return "\n".join(lines)

    def to_json(self, record: PlayRecord) -> dict:
        return record.detail.to_json(record.facts.get("p_sat"))

    def describe(self, event: EventBase) -> str | None:
        """The event in the story's words, the parties by their names in the contract; the story's other lines
        (a delivery, told with its week's end) in the event's own."""
        from games.contractsim.story import describe

        return (describe(event, self.setup.contract) or event.describe()).strip()

    # --- what check_game_api needs beyond the state API ----------------------------------------------------

    def random_action(self, state: State, rng: np.random.Generator) -> Action:
        role = state.current_player()
        agent = make_agent("random", Seat(game=GAME_TYPE.name, role=role, rng=rng))
        return agent.act(state.observe(role))

    def probes(self, state: State) -> list[Action]:
        """Payments at and past the budget left, orders within and past the order cap, deliveries past stock."""
        cap = self.environment.order_cap
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

    def conserved(self, state: State) -> int:
        """Money: the budget left, the Supplier's cash and what it spent ([CS-05])."""
        return state.budget_left + state.cash + state.spend_total


def _defaults_note(run) -> str:
    """What an LLM agent's usage line adds: the requests that ran out of attempts and defaulted to zero."""
    if not run.llm_calls:
        return ""
    return "requests defaulted to zero: " + ", ".join(f"{role} {n}" for role, n in run.llm_defaults.items())


register_game(GAME_TYPE, ContractSim)
register_game(
    GameType(
        name="contractsim-negotiation",
        roles=("customer", "supplier"),
        observations={"customer": NegotiationObservation, "supplier": NegotiationObservation},
        actions={"customer": NegotiationTurn, "supplier": NegotiationTurn},
        default_agents={"customer": "scripted", "supplier": "scripted"},
        agent_modules=("games.contractsim.session",),
        who="{Role} negotiator",
        summary="the contract negotiation before ContractSim's games (ContractSim paper, Sec. 3)",
    )
)
