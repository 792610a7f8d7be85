"""The agent protocol as JSON Schema, generated from each registered game's own observation and action models
(`games.game.GameType`), so an agent in any language can be written from it (`contractlang agent-schema`)."""

from __future__ import annotations

from typing import Any

from contractlang.errors import UnknownName
from contractlang.vocab import Frozen
from games.game import game_type, game_types


class RoleSchema(Frozen):
    game: str
    role: str
    observation: dict[str, Any]
    action: dict[str, Any]


def agent_schema(game: str | None = None, role: str | None = None) -> list[RoleSchema]:
    """The JSON Schemas of the observation each role receives and the action it answers with, for every role of
    `game` (every registered game when None); amounts are in the game's base units."""
    out = []
    for kind in game_types() if game is None else [game_type(game)]:
        if role is not None and role not in kind.roles:
            raise UnknownName(f"{kind.name} has the roles {', '.join(kind.roles)}, not {role!r}")
        for r in kind.roles if role is None else (role,):
            observation, action = kind.schemas(r)
            out.append(RoleSchema(game=kind.name, role=r, observation=observation, action=action))
    return out
