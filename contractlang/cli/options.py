"""Options several commands share, and the parsing of list and choice values."""

from __future__ import annotations

import math
from typing import Annotated

import typer

from contractlang.cli.errors import InputError, UsageProblem
from contractlang.errors import MAX_WORKERS

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
Workers = Annotated[
    int | None, typer.Option(min=1, max=MAX_WORKERS, help="Local worker processes (default: all cores).")
]
Ray = Annotated[str | None, typer.Option(help="Run the jobs on Ray instead: a cluster address, or 'local'.")]
ConventionOption = Annotated[
    str,
    typer.Option(
        help="How a breach bears on the weeks after it: cs19 (every later due counts, [CS-19]) or paper-tables (in a "
        "contract with a deduction or rollover clause the Customer owes nothing after the first breach, as the "
        "paper's rows imply, [CS-19a]). Only the scoring changes; the games are the same."
    ),
]
FloorsOption = Annotated[
    str,
    typer.Option(
        "--floors",
        help="Which written minimums are hard floors ([CS-14a]): cs14 (the default: substitution's and "
        "deduction's), no-deduction-floor, rollover-lifts-floors, or "
        "no-deduction-floor+rollover-lifts-floors. A game rule: part of every job and record, so runs "
        "under different rule sets never share games.",
    ),
]
LlmWorkers = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=MAX_WORKERS,
        help="Local worker processes for the CPU work, DP solves and rational games (default: all cores). LLM "
        "games do not take one each: --max-connections of them wait on the model at once, in threads of "
        "one process, while the workers solve the next contracts.",
    ),
]
FailOnErrorOption = Annotated[
    str | None,
    typer.Option(
        "--fail-on-error",
        help="End the run with exit 1 once more games than this have errored (their model calls "
        "failed after the client's retries): a count such as 5, or a share of the games to "
        "play such as 0.1. Default: never; errored games are stored as such, left out of the "
        "tables, and a rerun of the same command retries them.",
    ),
]
EstimateFlag = Annotated[
    bool,
    typer.Option(
        "--estimate",
        help="Print the games (to play now, stored, errored to retry), the expected LLM calls, tokens "
        "and cost, then exit without playing.",
    ),
]


def fail_on_error(text: str | None) -> float | None:
    """--fail-on-error's value: a count of games (a whole number) or a share of them (0 < share < 1)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value >= 1 and not value.is_integer()):
        raise UsageProblem(f"--fail-on-error takes a count of games (0, 5) or a share of them (0.1), not {text!r}")
    return value


def floors_for_env(floors: str, env: int | None) -> None:
    """A floor rule set ([CS-14a]) is a rule of ContractSim games in an environment: naming one other than the
    default without `--env` is a usage error, never silently ignored; an unknown name is refused."""
    from contractlang.interpreter.rounds import DEFAULT_FLOORS, FLOOR_RULES

    choice(floors, tuple(FLOOR_RULES), "floor rule set")
    if floors != DEFAULT_FLOORS and env is None:
        raise UsageProblem("--floors is a rule of ContractSim games in an environment; give --env N")


def seconds(value: float) -> float:
    """A time limit option's value, never NaN or infinity: click's range check lets both through, and a NaN
    deadline ended every LLM call at once as a "connection error"."""
    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a number of seconds")
    return value


def choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    """`value` if it is one of `allowed`, else `UnknownName` listing them (the facade's rule, `choose`)."""
    from contractlang.api.language import choose

    return choose(value, allowed, what)


def items(text: str, option: str) -> list[str]:
    """The comma-separated items of `option`; an empty item (`1,,2`, `''`) is a usage error, never dropped."""
    values = [x.strip() for x in text.split(",")]
    if not all(values):
        raise UsageProblem(f"{option} takes a comma-separated list with no empty item, not {text!r}")
    return values


def int_list(text: str, what: str, option: str) -> list[int]:
    try:
        return [int(x) for x in items(text, option)]
    except ValueError:
        raise InputError(f"expected comma-separated {what}s, got {text!r}") from None


def float_set(text: str, option: str) -> tuple[float, ...]:
    """Distinct probabilities in [0, 1], comma-separated, in their first order."""
    try:
        values = tuple(dict.fromkeys(float(x) for x in items(text, option)))
    except ValueError:
        raise InputError(f"{option} takes comma-separated probabilities, not {text!r}") from None
    if not values or any(not 0 <= v <= 1 for v in values):
        raise InputError(f"{option} takes probabilities in [0, 1], not {text!r}")
    return values


BoardSetOption = Annotated[
    str | None,
    typer.Option(
        "--set",
        help="Board set: ours (our seeded sample) or paper (the CT-Bench authors' 80 grids); an ID may name "
        "its set instead, paper:17.",
    ),
]
RulesOption = Annotated[
    str,
    typer.Option(
        "--rules",
        help="How contract entries are enforced: authors (the authors' engine, which made every published "
        "number) or paper (the paper's text, [CT-23]/[CT-24]).",
    ),
]


def rule_set(name: str):
    """The named CT-Bench rule set ([CT-24a])."""
    from contractlang.interpreter import Rules
    from contractlang.vocab import RULE_SETS

    return Rules.named(choice(name, RULE_SETS, "rule set"))


def ctbench_board(ref: str, board_set: str | None = None, header: str | None = None):
    """The CT-Bench board `ref` (ID or SET:ID) names, with the set `--set` and a contract's header may name."""
    from contractlang.api.ctbench import board

    return board(ref, board_set, header)
