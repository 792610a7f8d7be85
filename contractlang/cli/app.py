"""The command groups; the command modules register their commands on them."""

from __future__ import annotations

from typing import Annotated

import typer

from contractlang.cli.errors import ReportingGroup

app = typer.Typer(
    cls=ReportingGroup,
    add_completion=False,
    no_args_is_help=True,
    help="Author, check, verify and run contracts for ContractSim and CT-Bench.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(asked: bool) -> None:
    if asked:
        from contractlang import __version__

        typer.echo(f"contractlang {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Options before any command."""


ctbench_app = typer.Typer(
    help="CT-Bench: the board set, board pictures, sweeps and the authors' logs.", no_args_is_help=True
)
experiment_app = typer.Typer(
    help="ContractSim experiments on a synthetic contract set (written by `synth`).", no_args_is_help=True
)
