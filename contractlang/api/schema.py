"""The agent protocol as JSON Schema, generated from the games' own observation and action models, so an agent
in any language can be written from it (`contractlang agent-schema`)."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from contractlang.vocab import Frozen

ROLES = {
    "contractsim": ("customer", "supplier"),
    "contractsim-negotiation": ("customer", "supplier"),
    "ctbench": ("red", "blue"),
}


class NegotiationTurn(Frozen):
    """A negotiator's answer [CS-21]: what it says, and at most one of a contract, accept (Customer) or
    terminate. A `cmd:` negotiator writes this object itself as its answer line."""

    response: str = Field(description="what the negotiator says to the other side")
    contract: str | None = Field(default=None, description="a contract proposed now, in contractlang")
    accept: bool = Field(default=False, description="the Customer accepts the active proposal [CS-20]")
    terminate: bool = Field(default=False, description="end the negotiation without an agreement")


class RoleSchema(Frozen):
    game: str
    role: str
    observation: dict[str, Any]
    action: dict[str, Any]


def _types(game: str, role: str) -> tuple[Any, Any]:
    """(observation type, action type) of `role` in `game`."""
    if game == "contractsim":
        from games.contractsim.game import CustomerObservation, Order, Pay, Produce, SupplierObservation

        if role == "customer":
            return CustomerObservation, Pay
        return SupplierObservation, Annotated[Order | Produce, Field(discriminator="kind")]
    if game == "contractsim-negotiation":
        from games.contractsim.negotiation import NegotiationObservation

        return NegotiationObservation, NegotiationTurn
    from games.ctbench.agents import AnyAction
    from games.ctbench.game import CTBenchObservation
    from games.ctbench.negotiation import NegotiationObservation as TalkObservation

    return Union[CTBenchObservation, TalkObservation], Annotated[AnyAction, Field(discriminator="kind")]


def agent_schema(game: str | None = None, role: str | None = None) -> list[RoleSchema]:
    """The JSON Schemas of the observation each role receives and the action it answers with, for every role of
    `game` (every game when None); amounts are in the game's base units."""
    from contractlang.errors import UnknownName

    games = list(ROLES) if game is None else [game]
    out = []
    for g in games:
        if g not in ROLES:
            raise UnknownName(f"unknown game {g!r}; choose from {', '.join(ROLES)}")
        if role is not None and role not in ROLES[g]:
            raise UnknownName(f"{g} has the roles {', '.join(ROLES[g])}, not {role!r}")
        for r in ROLES[g] if role is None else (role,):
            observation, action = _types(g, r)
            out.append(
                RoleSchema(
                    game=g,
                    role=r,
                    observation=_schema(observation, f"{g} {r} observation"),
                    action=_schema(action, f"{g} {r} action"),
                )
            )
    return out


def _schema(model, title: str) -> dict:
    schema = TypeAdapter(model).json_schema()
    return {"title": title, **{k: v for k, v in schema.items() if k != "title"}}
