"""`contractlang solve`: the exact DP for one ContractSim contract in one environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError
from contractlang.cli.inputs import load_one
from contractlang.cli.options import FloorsOption, JsonFlag


@app.command()
def solve(
    contract: Annotated[Path, typer.Argument(help="A ContractSim contract file (one contract).")],
    env: Annotated[int, typer.Option("--env", min=1, max=6, help="ContractSim environment 1..6.")],
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where solved tables are kept, keyed by contract terms "
            "and environment (default: $CONTRACTLANG_DP_CACHE, "
            "else .contractlang-cache/dp)."
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Solve afresh and keep nothing on disk.")] = False,
    plot: Annotated[Path | None, typer.Option(help="Draw the survival curve S_t to this PNG.")] = None,
    floors: FloorsOption = "cs14",
    json_out: JsonFlag = False,
) -> None:
    """Exact DP for the rational Supplier (ContractSim paper, App. C.1): P_sat, expected utilities with both players RCC,
    completeness (ContractSim paper, App. C.5), the survival curve, table size and solve time."""
    from rich.progress import Progress

    from contractlang.api.language import solve as solve_dp
    from contractlang.api.play import game_for, games_taking

    checked = load_one(contract)
    if not game_for(checked).takes("env"):  # the DP solves the rounds of a game set in an environment
        raise InputError(
            f"{contract}: `solve` needs a {games_taking('env')} contract; this one is for {game_for(checked).title}"
        )
    kept: list[bool] = []  # whether the table came from the cache, as the solve tells it
    with Progress(transient=True, disable=json_out) as bar:
        task = bar.add_task(f"solving {checked.ir.name} in environment {env}", total=None)
        result = solve_dp(
            checked,
            env,
            cache_dir=cache_dir,
            cache=not no_cache,
            floors=floors,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            cached=kept.append,
        )
    hit = kept[0]
    if plot is not None:
        from contractlang.cli.render import plot_survival

        plot_survival(result, plot)
    if json_out:
        payload = {"ok": True, **result.model_dump()}
        payload["survival"] = list(result.survival)
        payload["cached"] = hit
        typer.echo(json.dumps(payload))
        return
    from contractlang.cli.render import print_solution

    print_solution(result, checked.ir, hit)
