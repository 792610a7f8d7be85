"""The library's own errors, so callers catch exactly them: `ContractlangError` is the root of the ones a caller
gets for what it passed in."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, TypeVar

from pydantic import ConfigDict, Field, Strict, ValidationError, validate_call

__all__ = ["BadArgument", "BadData", "ContractlangError", "RunEnded", "UnknownName", "checked"]


class ContractlangError(Exception):
    """The root of the errors the library raises for its caller's input."""


class UnknownName(ContractlangError, LookupError):
    """An unknown agent, policy, guidance clause, board ID, environment, setting or other chosen name; the
    message says what the choices are."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class BadArgument(ContractlangError, ValueError, TypeError):
    """A facade verb's argument of the wrong type or out of range, or arguments that do not go together: the
    message names the parameter (`parameter`, when one is to blame), what it takes and what it was given. It is
    both a `ValueError` and a `TypeError`, so either `except` holds."""

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter
        """The parameter to blame, when one is (the CLI names its option instead)."""


class BadData(ContractlangError, ValueError):
    """A file or set the caller named that holds something other than what the verb reads: `file:line: reason`
    where there is a line."""


class RunEnded(Exception):
    """A run of games that stopped before its end, by a limit, its errors or an interrupt: the message says
    why in one line and how to resume; `code` is the exit status the command ends with."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code
        """The exit status the command ends with."""


Int = Annotated[int, Strict()]
"""A whole number, never a bool, float or text."""
Count = Annotated[int, Strict(), Field(ge=1)]
"""A whole number of things, 1 or more."""
MAX_WORKERS = 1024
"""The most worker processes a run takes: more than any one machine's or cluster's share of a run, so a larger
number is a mistyped one, refused before a run forks (or Ray starts actors) for it."""
Workers = Annotated[int, Strict(), Field(ge=1, le=MAX_WORKERS)]
"""A number of worker processes, 1 to MAX_WORKERS."""
MAX_SEEDS = 100_000
"""The most seeds per cell of a run: past it a run is a mistyped number, not a plan."""
Seed = Annotated[int, Strict(), Field(ge=0)]
"""A seed: a whole number, 0 or more."""
Flag = Annotated[bool, Strict()]
"""True or False, never 0, 1 or text."""
Text = Annotated[str, Strict()]
"""Text, never bytes or a number."""

F = TypeVar("F", bound=Callable)


def checked(verb: F) -> F:
    """`verb` with its arguments checked against its annotations at the call (pydantic's `validate_call`): a
    wrong one raises `BadArgument` naming the parameter, before the verb does anything."""
    validated = validate_call(config=ConfigDict(arbitrary_types_allowed=True))(verb)

    @functools.wraps(verb)
    def call(*args, **kwargs):
        try:
            return validated(*args, **kwargs)
        except ValidationError as exc:
            if exc.title not in (verb.__name__, verb.__qualname__):  # a model the verb built: not an argument
                raise
            found = _by_parameter(verb, exc)
            raise BadArgument(_message(verb, found), next(iter(found)) if len(found) == 1 else None) from None

    return call  # type: ignore[return-value]


def _by_parameter(verb: Callable, exc: ValidationError) -> dict[str, list[dict]]:
    """pydantic's errors of a call, by the parameter each is about."""
    names = list(inspect.signature(verb).parameters)
    found: dict[str, list[dict]] = {}
    for error in exc.errors(include_url=False):
        head = error["loc"][0] if error["loc"] else "?"
        name = names[head] if isinstance(head, int) and head < len(names) else str(head)
        found.setdefault(name, []).append(error)
    return found


def _message(verb: Callable, found: dict[str, list[dict]]) -> str:
    """One clause per wrong argument, named: `verify(timeout_ms=-1): Input should be greater than 0`; an argument
    that matches no member of a union is told the annotation it takes."""
    clauses = []
    for name, errors in found.items():
        first = errors[0]
        if first["type"] in ("unexpected_keyword_argument", "missing_argument", "unexpected_positional_argument"):
            clauses.append(f"{_name(verb)}: {name}: {first['msg'].lower()}")
            continue
        given = repr(first.get("input"))
        shown = given if len(given) <= 60 else given[:57] + "..."
        annotation = verb.__annotations__.get(name, "")
        if len(errors) == 1 or not annotation:
            said = first["msg"]
        elif "Annotated[" in annotation:  # a constrained member reads worse than pydantic's own words
            said = " or ".join(dict.fromkeys(e["msg"] for e in errors))
        else:
            said = f"takes {annotation}"
        clauses.append(f"{_name(verb)}({name}={shown}): {said}")
    return "; ".join(clauses)


def _name(verb: Callable) -> str:
    """How a message calls the verb: its name, or its class's for a constructor."""
    return verb.__qualname__.removesuffix(".__init__").rpartition("<locals>.")[2]
