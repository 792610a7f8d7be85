"""The one agent protocol of every game, and the one registry that turns an agent's name into an agent.

An agent has a `name` and `act(observation) -> action`; `reset()` (called before each game) and `close()`
(after it) are optional. The registry knows, per registered game (`games.game`):

- built-in agents (`rcc`, `planner`, …), registered by the games with `register_agent`;
- families of specs by prefix: `cmd:PROGRAM` (an external program, games/external.py) and
  `llm:[PROVIDER/]MODEL` (an LLM agent, `register_llm_agent`);
- `py:MODULE:ATTR` and `py:path/to/file.py:ATTR`, where ATTR is a class, a factory or an agent instance;
- agents a user's code registers with the `register_agent` decorator, and agents an installed package
  declares in the entry-point group `contractlang.agents` (its name is the agent's name).

A class or a factory is called with the `Seat` (what the game offers the agent: its role, a seeded generator,
the contract, …) when it takes an argument, else with none. `LABEL=SPEC` names an agent for tables and figures.
Each entry says whether, and which, model its agents call (`model_of`): nothing else reads a spec for it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from contractlang.errors import BadArgument, UnknownName
from contractlang.llm import CallRefused, LlmModel, agent_model
from games.confined import AgentEnded, AgentTimeout, Confined
from games.errors import AgentError, CommandRefused
from games.external import EXIT_SECONDS, ExternalAgent
from games.game import game_type, game_types, is_game

ENTRY_POINT_GROUP = "contractlang.agents"
PY_PREFIX = "py:"
LABEL = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.+-]*)=(.+)", re.DOTALL)


@runtime_checkable
class Agent(Protocol):
    """What both games seat: `act` maps the role's typed observation to a typed action."""

    name: str

    def act(self, observation: Any) -> Any: ...


@dataclass(frozen=True)
class Seat:
    """What a game offers the agent it seats: the spec it was named by, its role, a seeded generator for its
    randomness, and the game's context (the contract, the environment, DP tables, an LLM client, …)."""

    game: str
    role: str
    spec: str = ""
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    contract: Any = None
    env: Any = None
    tables: Callable[[str], Any] | None = None  # ContractSim: cover → the solved DP order table
    llm: Any = None  # an LlmClient for `llm:` agents
    model: LlmModel | None = None  # the model the agent calls, as its registry entry says (`model_of`)
    guidance: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)  # game-specific helpers (a negotiation's appraiser)


Factory = Callable[[Seat], Any]


@dataclass(frozen=True)
class Registration:
    """One registry entry: `name` (a family of specs when it ends in ':'), the game and roles it plays, and
    which model a spec's agent calls (`model`; None: it calls none)."""

    name: str
    game: str
    roles: tuple[str, ...] | None  # None: every role
    factory: Factory
    builtin: bool = False
    summary: str = ""
    accepts: Callable[[str], bool] | None = None  # a family: which of the specs it starts are well formed
    model: Callable[[str], LlmModel | None] | None = None

    def plays(self, game: str, role: str | None) -> bool:
        return self.game == game and (role is None or self.roles is None or role in self.roles)

    def model_for(self, spec: str) -> LlmModel | None:
        """The model the agent `spec` names calls, or None when it calls none."""
        return self.model(spec) if self.model is not None else None


_REGISTRY: list[Registration] = []  # filled as modules register; a later entry replaces one it overlaps


def register_agent(
    name: str,
    *,
    game: str,
    roles: Iterable[str] | None = None,
    builtin: bool = False,
    accepts: Callable[[str], bool] | None = None,
    model: Callable[[str], LlmModel | None] | None = None,
):
    """Decorator: register a class, factory or agent instance under `name` for `game` (and only `roles`, if
    given), so `--agent name` (or `--customer name`, `--red name`, …) seats it. A name ending in ':' registers
    a family of specs (`cmd:`), `accepts` saying which are well formed; `model` says which model a spec's agent
    calls (None when it calls none)."""
    if not is_game(game):
        raise ValueError(f"unknown game {game!r}; one of {', '.join(t.name for t in game_types())}")
    if not isinstance(name, str) or not name or name.startswith(PY_PREFIX) or "=" in name:
        raise BadArgument(f"register_agent(name={name!r}): cannot name an agent (text, not empty, py: or '=')", "name")

    def register(target):
        entry = Registration(
            name,
            game,
            tuple(roles) if roles is not None else None,
            _factory_of(target, name),
            builtin,
            (inspect.getdoc(target) or "").split("\n")[0],
            accepts,
            model,
        )
        _REGISTRY[:] = [r for r in _REGISTRY if (r.name, r.game) != (name, game) or not _overlap(r, entry)]
        _REGISTRY.append(entry)
        return target

    return register


def _overlap(a: Registration, b: Registration) -> bool:
    return a.roles is None or b.roles is None or bool(set(a.roles) & set(b.roles))


def register_llm_agent(game: str, factory: Factory) -> None:
    """Register `factory` as `game`'s LLM agents: `llm` and `llm:[PROVIDER/]MODEL`, each calling the model its
    spec names (on the Seat as `seat.model`)."""
    register_agent(
        "llm:", game=game, builtin=True, accepts=lambda spec: agent_model(spec) is not None, model=agent_model
    )(factory)


def model_of(agent: str | Agent | Callable[..., Any], game: str | None = None) -> LlmModel | None:
    """The model the agent `agent` (a spec or `LABEL=SPEC`) calls, as the registry entry that starts it says;
    None for an agent that calls none (a Python object, a built-in, a program, a name no entry knows). Any
    game's entries when `game` is None. `BadArgument` for what is no agent at all (a number, None)."""
    if game is not None and not isinstance(game, str):
        raise BadArgument(f"model_of(game={game!r}): takes a game's name or None", "game")
    if not isinstance(agent, str):
        if callable(agent) or _is_agent(agent):
            return None
        raise BadArgument(
            f"model_of(agent={agent!r:.60}): takes an agent spec (text) or a Python agent (a class, a factory, "
            "or an object with act)",
            "agent",
        )
    spec = split_label(agent)[1]
    _load_builtins()
    for entry in _REGISTRY:
        if (
            entry.model is not None
            and (game is None or entry.game == game)
            and (entry.name == spec or _family_takes(entry, spec))
        ):
            return entry.model_for(spec)
    return None


def calls_model(agent, game: str | None = None) -> bool:
    """Whether the agent `agent` names calls a model (see `model_of`)."""
    return model_of(agent, game) is not None


def _family_takes(entry: Registration, spec: str) -> bool:
    return (
        entry.name.endswith(":")
        and (spec.startswith(entry.name) or spec == entry.name[:-1])
        and (entry.accepts is None or entry.accepts(spec))
    )


_LOADING = threading.RLock()
"""Held while the games' agent modules are imported: threads that start games at once (an LLM run's
`--max-connections`) would otherwise read the registry while another is still filling it, and miss an entry."""


def _load_builtins() -> None:
    with _LOADING:
        for kind in game_types():
            for module in kind.agent_modules:
                importlib.import_module(module)


def registered(game: str, role: str | None = None) -> list[Registration]:
    """Every entry that plays `role` in `game`: built-ins first, in the order they were registered."""
    _load_builtins()
    entries = [r for r in _REGISTRY if r.plays(game, role)]
    return sorted(entries, key=lambda r: not r.builtin)


# --- labels -------------------------------------------------------------------------------------------------


def split_label(text: str) -> tuple[str, str]:
    """(label, spec) of `LABEL=SPEC`; a plain spec is its own label. The '=' must come before any ':', so a
    program's arguments (`cmd:prog --x=1`) are never taken for a label."""
    match = LABEL.fullmatch(text)
    if match and ":" not in match.group(1):
        return match.group(1), match.group(2)
    return text, text


# --- py: specs ----------------------------------------------------------------------------------------------


def _py_target(spec: str) -> tuple[str, str]:
    """(module or file, attribute) of `py:MODULE:ATTR` / `py:path/to/file.py:ATTR`."""
    where, colon, attr = spec.removeprefix(PY_PREFIX).rpartition(":")
    if not colon or not where.strip() or not attr.strip():
        raise AgentError(f"agent {spec!r}: write py:MODULE:ATTR or py:path/to/file.py:ATTR")
    return where.strip(), attr.strip()


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or where.startswith(".")


def _module_at(where: str) -> Path | str:
    return Path(where) if _is_file(where) else where


def _import_file(path: Path):
    """The module of a Python file, imported once per process under a name made from its absolute path (so
    worker processes, which import the same spec, give its classes the same names)."""
    resolved = path.resolve()
    stem = re.sub(r"\W", "_", resolved.stem)
    name = f"contractlang_user_{stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@lru_cache(maxsize=256)
def load_py(spec: str):
    """The object `py:...` names, imported once per process; any failure to import it is an `AgentError` naming
    the spec and why."""
    where, attr = _py_target(spec)
    if _is_file(where) and not Path(where).is_file():
        raise AgentError(f"agent {spec!r}: no Python file {where}")
    confined = Confined(f"agent {spec!r}")
    try:
        with user_code(f"agent {spec!r}: cannot import {where}:"):
            module = confined.call(_import_file if _is_file(where) else importlib.import_module, _module_at(where))
    finally:
        confined.end()
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise AgentError(f"agent {spec!r}: {where} has no attribute {attr!r}")
        target = getattr(target, part)
    if not (inspect.isclass(target) or callable(target) or _is_agent(target)):
        raise AgentError(f"agent {spec!r}: {attr} is not an agent (a class, a factory, or an object with act)")
    return target


def _line(exc: BaseException) -> str:
    """The exception's first line; the agent's exception may fail even to say what it is."""
    try:
        text = str(exc)
    except Exception as failed:  # noqa: BLE001 - the agent's own __str__ raised
        return f"(its message cannot be shown: {type(failed).__name__})"
    return (text.strip().splitlines() or [""])[0][:200]


@contextmanager
def user_code(what: str) -> Iterator[None]:
    """Whatever a user's agent code raises inside, as one `AgentError` line, `what` then the exception's type and
    first line, so it ends the game naming the agent, never with a traceback (an attempt to end the process or a call past
    the per-move limit too: `games.confined`); an `AgentError` passes as it is, and so does a `CallRefused` (a game or run limit, or a stop, ends the game recorded as such, not as an error)."""
    try:
        yield
    except (AgentError, CallRefused):
        raise
    except (AgentEnded, AgentTimeout) as exc:
        raise AgentError(str(exc)) from None
    except Exception as exc:
        raise AgentError(f"{what} {type(exc).__name__}: {_line(exc)}{_user_frames(exc)}") from None


PROJECT = Path(__file__).resolve().parents[1]
"""The checkout or site-packages folder holding this project's packages, whose frames are not the user's."""


def _user_frames(exc: BaseException) -> str:
    """With CONTRACTLANG_DEBUG=1, the traceback's frames in the user's own code (outside contractlang, games and
    solver), one `File …, line …` block each, so the line of the agent that raised can be found; else nothing."""
    if os.environ.get("CONTRACTLANG_DEBUG") != "1":
        return ""
    ours = tuple(str(PROJECT / package) + os.sep for package in ("contractlang", "games", "solver"))
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(ours)]
    return "".join("\n" + block.rstrip("\n") for block in traceback.format_list(frames))


def _is_agent(obj) -> bool:
    return callable(getattr(obj, "act", None)) and not inspect.isclass(obj)


def _takes_seat(target) -> bool:
    """Whether a class or factory wants the Seat: it takes at least one positional argument."""
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)


def _factory_of(target, name: str) -> Factory:
    """How to seat `target`: an instance is seated as it is (reset before each game), a class or factory is
    called, with the Seat when it takes an argument."""
    if _is_agent(target):
        return lambda seat: target
    if not callable(target):
        raise AgentError(f"agent {name!r}: {target!r} is not an agent (a class, a factory, or an object with act)")
    wants_seat = _takes_seat(target)
    return lambda seat: target(seat) if wants_seat else target()


# --- entry points -------------------------------------------------------------------------------------------


def _entry_point(name: str):
    """The installed entry point `name` of the group `contractlang.agents`, or None."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep
    return None


def _installed(name: str, game: str):
    """The registration (or bare agent object) an installed package provides under `name`, or None. Loading it
    runs the package's `register_agent` calls; an object that registers nothing plays any game."""
    ep = _entry_point(name)
    if ep is None:
        return None
    with user_code(f"agent {name!r}: cannot load the entry point {ep.value}:"):
        target = ep.load()
    return _named(name, game, None) or Registration(name, game, None, _factory_of(target, name))


def _named(name: str, game: str, role: str | None) -> Registration | None:
    return next((r for r in reversed(_REGISTRY) if r.name == name and r.plays(game, role)), None)


# --- resolving a spec ---------------------------------------------------------------------------------------


def resolve(spec: str, game: str, role: str | None = None, what: str | None = None) -> Registration:
    """The entry that makes `spec`'s agent in `game` (for `role`); `UnknownName` when none does. A `py:` spec
    is imported now (an `AgentError` if it cannot be)."""
    if spec.startswith(PY_PREFIX):
        return _py_registration(spec, game)
    _load_builtins()
    for entry in _REGISTRY:
        if entry.plays(game, role) and _family_takes(entry, spec):
            return entry
    entry = _named(spec, game, role)
    if entry is None and _named(spec, game, None) is None:
        entry = _installed(spec, game)
    if entry is not None and entry.plays(game, role):
        return entry
    raise UnknownName(f"unknown {what or _who(game, role)} {spec[:60]!r}; choose from {', '.join(choices(game, role))}")


@lru_cache(maxsize=256)
def _py_registration(spec: str, game: str) -> Registration:
    return Registration(spec, game, None, _factory_of(load_py(spec), spec))


def _who(game: str, role: str | None) -> str:
    """What an error calls the agent of `role`, as the game's type says (a customer policy, an agent, …)."""
    return game_type(game).agent_noun(role)


def choices(game: str, role: str | None = None) -> list[str]:
    """The names and spec forms `resolve` takes for `role` in `game`, for error messages and help."""
    names = [
        f"{r.name}PROGRAM" if r.name == "cmd:" else f"{r.name}[PROVIDER/]MODEL" if r.name == "llm:" else r.name
        for r in registered(game, role)
    ]
    return [*dict.fromkeys(names), "py:MODULE:ATTR", "py:FILE.py:ATTR"]


def check(spec: str, game: str, role: str | None = None, what: str | None = None) -> str:
    """`spec` when `resolve` finds it (importing a `py:` agent, so a bad one fails before any game); else the
    error it raises. A `LABEL=` before the spec is allowed."""
    resolve(split_label(spec)[1], game, role, what)
    return spec


def roles_of(agent, game: str) -> tuple[str, ...] | None:
    """The roles an agent says it plays (a registry entry's roles, or a Python agent's `roles` attribute); None
    when it does not say."""
    if isinstance(agent, str):
        spec = split_label(agent)[1]
        if not spec.startswith(PY_PREFIX):
            entries = [r for r in registered(game) if r.name == spec]
            return (
                None
                if not entries or any(r.roles is None for r in entries)
                else tuple(dict.fromkeys(x for r in entries for x in r.roles))
            )
        agent = load_py(spec)
    roles = getattr(agent, "roles", None)
    return tuple(roles) if isinstance(roles, (tuple, list)) else None


def names_code(spec: str) -> bool:
    """Whether running `spec` runs code it names: a program (`cmd:PROGRAM`, or a bare `cmd`, which the `cmd:`
    family takes as the program `cmd`) or a Python agent (`py:`)."""
    spec = split_label(spec)[1]
    return spec.startswith(("cmd:", PY_PREFIX)) or spec == "cmd"


def refuse_code(specs: Iterable[str], where: str = "these records") -> None:
    """`CommandRefused` for the first spec that would run code named in data (see `names_code`)."""
    for spec in specs:
        if names_code(spec):
            what = "import the Python agent" if split_label(spec)[1].startswith(PY_PREFIX) else "start the program"
            raise CommandRefused(
                f"replaying {where} would {what} {spec!r} named in them; pass --allow-commands to let it run"
            )


def agent_name(agent) -> str:
    """How a table names an agent: the label of `LABEL=SPEC`, the spec itself, or an object's `name`."""
    if isinstance(agent, str):
        return split_label(agent)[0]
    return str(getattr(agent, "name", None) or getattr(agent, "__name__", None) or type(agent).__name__)


def spec_of(agent) -> str:
    """How a record names an agent: its spec as given (so a replay can seat it again), or a Python object's
    name."""
    return agent if isinstance(agent, str) else agent_name(agent)


def make_agent(agent, seat: Seat) -> Agent:
    """The agent `agent` names (a spec, `LABEL=SPEC`, or a Python class, factory or instance), seated at `seat`;
    a user's agent is guarded, so that whatever it does wrong ends the game with one line naming it."""
    name = agent_name(agent)
    if isinstance(agent, str):
        spec = split_label(agent)[1]
        entry = resolve(spec, seat.game, seat.role)
    else:
        spec = name
        entry = Registration(name, seat.game, None, _factory_of(agent, name))
    seat = replace(seat, spec=spec, model=entry.model_for(spec))
    if entry.builtin:
        return entry.factory(seat)
    confined = Confined(f"agent {name!r} ({seat.role})")
    try:
        with user_code(f"agent {name!r} ({seat.role}) failed to start:"):
            agent = confined.call(entry.factory, seat)
        if not _is_agent(agent):
            raise AgentError(
                f"agent {name!r} ({seat.role}): {type(agent).__name__} is not an agent (it has no act method)"
            )
        return Guarded(agent, name, seat.role, seat.game, confined)
    except BaseException:
        confined.end()
        raise


def action_adapter(game: str):
    """The pydantic adapter that reads a played game's actions from their JSON form (`kind` plus fields), so a
    user's agent may answer with a dict; None for a protocol that is not a game played on its own."""
    kind = game_type(game)
    return kind.action_adapter if kind.setup is not None else None


class Guarded:
    """A user's agent: its code runs confined to its own thread (`games.confined`: a per-move limit, no exit of
    the process, its child processes ended with it); what it raises becomes an `AgentError` naming it; an
    action given in its JSON form (a dict) is read into the game's typed action; `reset` and `close` are
    optional."""

    def __init__(self, agent, name: str, role: str, game: str, confined: Confined):
        self.agent = agent
        self.name = name
        self.role = role
        self.game = game
        self.confined = confined
        self._act = agent.act
        self._actions = action_adapter(game)
        self._call("reset")

    def _call(self, method: str) -> None:
        hook = getattr(self.agent, method, None)
        if callable(hook):
            with user_code(f"agent {self.name!r} ({self.role}) raised in {method}:"):
                self.confined.call(hook)

    def act(self, observation):
        with user_code(f"agent {self.name!r} ({self.role}) raised"):
            action = self.confined.call(self._act, observation)
        if isinstance(action, dict) and self._actions is not None:
            from pydantic import ValidationError

            try:
                return self._actions.validate_python(action)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"])
                raise AgentError(
                    f"agent {self.name!r} ({self.role}) answered {json.dumps(action)[:120]}, not a "
                    f"{self.game} action ({where}: {first['msg']})"
                ) from None
        return action

    def close(self, grace: float = 0.0) -> None:
        try:
            self._call("close")
        finally:
            self.confined.end()


# --- playing ------------------------------------------------------------------------------------------------


def checked_action(agent, state, role: str):
    """Ask `agent` for `role`'s action in `state`; an illegal answer is the agent's error, saying why it is
    illegal (`state.why_illegal`), never a crash."""
    action = agent.act(state.observe(role))
    why = state.why_illegal(action)
    if why is not None:
        raise AgentError(f"agent {agent.name!r} ({role}) chose an illegal action: {why} ({_action_text(action)})")
    return action


def play_out(state, agents: Mapping[str, Agent], step: Callable[[Any, Any], None] | None = None):
    """The one play loop of both games: ask the role to move for its action, checked (`checked_action`), until
    the state is terminal; `step(before, after)` hears every transition. Returns the terminal state."""
    while not state.is_terminal():
        role = state.current_player()
        after = state.apply_action(checked_action(agents[role], state, role))
        if step is not None:
            step(state, after)
        state = after
    return state


def _action_text(action) -> str:
    dump = getattr(action, "model_dump", None)
    return json.dumps(dump(mode="json")) if dump is not None else repr(action)[:200]


@contextmanager
def seated(agents: Mapping[str, Any], **context) -> Iterator[dict[str, Agent]]:
    """Both games' seating: each role's agent (`make_agent`, its `Seat` holding the role and the game's
    `context`: game, rng, contract, …), in the mapping's order, and every one closed when the game ends however
    it ends (`closing_agents`), those already started included when a later one fails to start."""
    made: dict[str, Agent] = {}
    try:
        for role, agent in agents.items():
            made[role] = make_agent(agent, Seat(role=role, **context))
    except BaseException:
        with closing_agents(made.values()):
            raise
    with closing_agents(made.values()):
        yield made


@contextmanager
def closing_agents(agents: Iterable) -> Iterator[list]:
    """Close every agent when the game ends, however it ends. After a game that failed, external programs are
    killed at once: a program that broke the protocol may never read its end of input, and the user's error
    line should not wait for it."""
    agents = list(agents)
    grace = 0.0
    try:
        yield agents
        grace = EXIT_SECONDS
    finally:
        for agent in agents:
            if isinstance(agent, (Guarded, ExternalAgent)):
                agent.close(grace)
