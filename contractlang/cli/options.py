"""Options several commands share, and the parsing of list and choice values."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from contractlang.cli.errors import InputError
from contractlang.errors import UnknownName

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
Workers = Annotated[Optional[int], typer.Option(min=1, help="Local worker processes (default: all cores).")]
Ray = Annotated[Optional[str], typer.Option(help="Run the jobs on Ray instead: a cluster address, or 'local'.")]


def choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise UnknownName(f"unknown {what} {value!r}; choose from {', '.join(allowed)}")
    return value


def int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"expected comma-separated {what}s, got {text!r}") from None


def float_set(text: str, option: str) -> tuple[float, ...]:
    """Distinct probabilities in [0, 1], comma-separated, in their first order."""
    try:
        values = tuple(dict.fromkeys(float(x) for x in text.split(",")))
    except ValueError:
        raise InputError(f"{option} takes comma-separated probabilities, not {text!r}") from None
    if not values or any(not 0 <= v <= 1 for v in values):
        raise InputError(f"{option} takes probabilities in [0, 1], not {text!r}")
    return values
