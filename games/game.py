"""A game is a registered type, as OpenSpiel's `register_game`/`load_game`: a `GameType` says what the game is
(its name, roles, setup parameters, observation and action types), `load_game(name, **setup)` makes a `Game`
(initial states from a seed, whole games played to one `PlayRecord`, each event in words), and everything
outside a game's folder asks the registry instead of testing a game's name.

The two games of the papers register themselves (`games/contractsim/registered.py`, `games/ctbench/registered.py`);
a third game is one more module calling `register_game`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Protocol, Union, runtime_checkable

from pydantic import BaseModel, Field, SerializeAsAny, TypeAdapter, ValidationError, field_validator

from contractlang.errors import BadArgument, UnknownName
from contractlang.interpreter.events import EventBase, monitor_events
from contractlang.llm import LlmCall, LlmUsage
from contractlang.vocab import Frozen

BUILTIN_GAMES = ("games.contractsim.registered", "games.ctbench.registered")
"""The modules that register the papers' two games, imported on the registry's first use."""


@dataclass(frozen=True)
class GameType:
    """What a game is: `name`, its `roles` in seating order, the model of its setup parameters (None for a game
    that is only a protocol, such as a negotiation), each role's observation and action types, the checked
    contract's IR kind it plays (`ir_kind`), each role's default agent, the modules that register its built-in
    agents, and how an error names a role's agent (`who`, with `{role}` and `{Role}`)."""

    name: str
    roles: tuple[str, ...]
    observations: Mapping[str, Any]
    actions: Mapping[str, Any]
    title: str = ""  # how a person calls it (ContractSim, CT-Bench); default its name
    setup: type[BaseModel] | None = None
    ir_kind: str | None = None
    default_agents: Mapping[str, str] = field(default_factory=dict)
    agent_modules: tuple[str, ...] = ()
    who: str = "agent"
    summary: str = ""
    events: Any = None  # the union of its log's event classes, by `type`: how a stored record's events read back
    tournament: str | None = None  # the module that makes its cross-play tournaments' jobs (`cl.tournament`)
    scenario: str | None = None  # the module whose `WORLD` plays scenario tests' worlds (`cl.test` utilities)

    @cached_property
    def event_adapter(self) -> TypeAdapter | None:
        return TypeAdapter(self.events) if self.events is not None else None

    @cached_property
    def action_adapter(self) -> TypeAdapter:
        """Reads any of the game's actions from its JSON form (`kind` plus fields)."""
        flat = list(dict.fromkeys(m for role in self.roles for m in _members(self.actions[role])))
        union = flat[0] if len(flat) == 1 else Union[tuple(flat)]  # noqa: UP007 - a union built at run time
        return TypeAdapter(Annotated[union, Field(discriminator="kind")] if len(flat) > 1 else union)

    def schemas(self, role: str) -> tuple[dict, dict]:
        """The JSON Schemas of `role`'s observation and action, amounts in the game's base units."""
        return (
            _schema(self.observations[role], f"{self.name} {role} observation"),
            _schema(self.actions[role], f"{self.name} {role} action"),
        )

    def takes(self, option: str) -> bool:
        """Whether the game is set up with `option` (ContractSim: `env`, `floors`; CT-Bench: `board`, `rules`)."""
        return self.setup is not None and option in self.setup.model_fields

    def agent_noun(self, role: str | None) -> str:
        """What an error calls the agent of `role`: a customer policy, a Customer negotiator, an agent."""
        return self.who.format(role=role, Role=role.capitalize()) if role else "agent"


def _members(tp) -> tuple:
    """The classes of a (possibly annotated) union type."""
    from types import UnionType
    from typing import get_args, get_origin

    if get_origin(tp) is Annotated:
        return _members(get_args(tp)[0])
    if get_origin(tp) in (Union, UnionType):
        return tuple(m for a in get_args(tp) for m in _members(a))
    return (tp,)


def _schema(model, title: str) -> dict:
    schema = TypeAdapter(model).json_schema()
    return {"title": title, **{k: v for k, v in schema.items() if k != "title"}}


class PlayRecord(Frozen):
    """One played game of any game: the game and its setup, the seed, each role's agent and outcome, the events
    in order, the LLM usage, the rows a table shows of it, and the game's own record (`detail`: ContractSim's
    `RunRecord`, CT-Bench's `GameRecord`, the format its stores keep)."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    game: str
    setup: dict[str, Any]
    seed: int
    agents: dict[str, str]
    outcome: dict[str, int]
    events: tuple[SerializeAsAny[EventBase], ...] = ()
    llm_calls: tuple[LlmCall, ...] = ()
    rows: tuple[dict, ...] = ()
    facts: dict[str, Any] = {}  # what the game knows beyond the outcome (ContractSim: the contract's P_sat)
    detail: Any = None

    @field_validator("events", mode="before")
    @classmethod
    def _typed_events(cls, value, info):
        """Events read from JSON come back as the game's own classes (`GameType.events`)."""
        game = info.data.get("game")
        if not value or not any(isinstance(e, dict) for e in value) or not game or not is_game(game):
            return value
        adapter = game_type(game).event_adapter
        return value if adapter is None else tuple(adapter.validate_python(e) for e in value)

    @property
    def llm_usage(self) -> LlmUsage:
        return LlmUsage.of(self.llm_calls)

    def monitor_events(self) -> list[dict]:
        """The events a monitor consumes, as the lines of a `run --log` file that `trace` replays."""
        return [e.model_dump(mode="json") for e in monitor_events(self.events)]


@runtime_checkable
class Game(Protocol):
    """A loaded game: its type and setup, initial states from a seed, whole games played, events in words.

    `story(record)` tells a played game for a person (what `contractlang run` prints); `to_json(record)` is the
    object `run --json` prints. A state offers `current_player()`, `is_terminal()`, `legal_actions()`, `why_illegal(action)`,
    `apply_action(action)` (a new state), `observe(role)` (a pydantic model) and `returns()`. A game may also
    give `check_game_api` a random player (`random_action(state, rng)`), actions to probe beyond the offered ones
    (`probes(state)`) and a quantity every transition conserves (`conserved(state)`)."""

    game_type: GameType
    setup: BaseModel

    def new_initial_state(self, seed: int) -> Any: ...

    def play(self, agents: Mapping[str, Any], seed: int | None = None, *, llm: Any = None) -> PlayRecord: ...

    def describe(self, event: EventBase) -> str | None: ...

    def story(self, record: PlayRecord) -> str: ...

    def to_json(self, record: PlayRecord) -> dict: ...


@dataclass(frozen=True)
class _Entry:
    game_type: GameType
    load: Callable[[BaseModel], Game] | None


class GameRegistry:
    """The registered games by name; the built-in games register on first use."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._loaded = False

    def register(self, game_type: GameType, load: Callable[[BaseModel], Game] | None = None) -> GameType:
        self._entries[game_type.name] = _Entry(game_type, load)
        return game_type

    def _builtins(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in BUILTIN_GAMES:
                importlib.import_module(module)

    def types(self) -> list[GameType]:
        self._builtins()
        return [e.game_type for e in self._entries.values()]

    def entry(self, name: str) -> _Entry:
        self._builtins()
        if name not in self._entries:
            raise UnknownName(f"unknown game {name!r}; choose from {', '.join(self._entries)}")
        return self._entries[name]

    def known(self, name: str) -> bool:
        self._builtins()
        return name in self._entries


REGISTRY = GameRegistry()


def register_game(game_type: GameType, load: Callable[[BaseModel], Game] | None = None) -> GameType:
    """Register `game_type`; `load` makes the game from its validated setup (None: a protocol only, which
    agents can be registered for and schemas asked of, but which is not played on its own)."""
    return REGISTRY.register(game_type, load)


def game_type(name: str) -> GameType:
    """The registered type of the game `name`; `UnknownName` when there is none."""
    return REGISTRY.entry(name).game_type


def game_types() -> list[GameType]:
    """Every registered game type, the built-in ones first."""
    return REGISTRY.types()


def is_game(name: str) -> bool:
    return REGISTRY.known(name)


def playable() -> list[GameType]:
    """The game types `load_game` can load."""
    return [t for t in REGISTRY.types() if REGISTRY.entry(t.name).load is not None]


def games_taking(option: str) -> str:
    """The titles of the playable games whose setup takes `option` (`env`, `board`, `floors`), as an error names
    the games an option is for: "ContractSim", "CT-Bench"."""
    return " or ".join(t.title or t.name for t in playable() if t.takes(option))


def game_for_contract(ir) -> GameType:
    """The game a checked contract's IR plays (by its kind)."""
    for t in playable():
        if t.ir_kind == ir.kind:
            return t
    raise UnknownName(f"no registered game plays a {ir.kind} contract")


def scenario_worlds() -> dict[str, Any]:
    """The engine each game lends scenario tests (`contractlang.scenario.world.World`), by the contract kind it
    plays: what `cl.test` judges utilities with."""
    return {t.ir_kind: importlib.import_module(t.scenario).WORLD for t in playable() if t.scenario and t.ir_kind}


def load_game(name: str, **setup) -> Game:
    """The game `name` set up by `setup` (its `GameType.setup` model's fields); a `ValueError` names a bad one."""
    entry = REGISTRY.entry(name)
    if entry.load is None:
        raise UnknownName(f"{name} is not a game that plays on its own; choose from {_names(playable())}")
    model = entry.game_type.setup
    try:
        valid = model.model_validate(setup)
    except ValidationError as exc:
        raise SetupError(f"{name} {_setup_problem(exc, model)}") from None
    return entry.load(valid)


class SetupError(BadArgument):
    """A game's setup does not fit its `GameType.setup` model: one line saying what to give instead."""


def _setup_problem(exc: ValidationError, model: type[BaseModel]) -> str:
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first["loc"])
    takes = ", ".join(f"{k}=" for k in model.model_fields)
    if first["type"] == "missing":
        return f"needs {where}= (it takes {takes})"
    if first["type"] == "extra_forbidden":
        return f"takes no {where}= (it takes {takes})"
    given = repr(first.get("input"))
    return f"setup ({where}={given if len(given) <= 60 else given[:57] + '...'}): {first['msg']}"


def _names(types: list[GameType]) -> str:
    return ", ".join(t.name for t in types)
