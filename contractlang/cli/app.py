"""The command groups; the command modules register their commands on them."""

from __future__ import annotations

import typer

from contractlang.cli.errors import ReportingGroup

app = typer.Typer(
    cls=ReportingGroup,
    add_completion=False,
    no_args_is_help=True,
    help="Author, check, verify and run contracts for ContractSim and CT-Bench.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

ctbench_app = typer.Typer(
    help="CT-Bench: the board set, board pictures, sweeps and the authors' logs.", no_args_is_help=True
)
experiment_app = typer.Typer(
    help="ContractSim experiments on a synthetic contract set (written by `synth`).", no_args_is_help=True
)
