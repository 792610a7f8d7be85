"""Reading contract files for a command: checked contracts, or a failure the error path reports."""

from __future__ import annotations

from pathlib import Path

import typer

from contractlang import check_source
from contractlang.cli.errors import CheckFailed, InputError, UsageProblem
from contractlang.files import MAX_CONTRACT_BYTES, read_capped
from contractlang.ir import CheckedContract


def read(path: Path) -> tuple[bytes, str]:
    """A contract file (or contract prose) and its name for diagnostics."""
    return read_capped(path, MAX_CONTRACT_BYTES), str(path)


def emit_diagnostics(diags, source: str | None) -> None:
    for d in diags:
        typer.echo(d.render(source), err=True)


def source_text(data: bytes) -> str:
    """Text for caret lines; undecodable bytes show as U+FFFD so a bad-UTF-8 report still points."""
    return data.decode("utf-8", errors="replace")


def load_contracts(path: Path) -> list[CheckedContract]:
    """Read and check a contract file for a command; diagnostics are printed and exit 1 on failure."""
    data, name = read(path)
    result = check_source(data, name)
    if not result.ok:
        raise CheckFailed(result.diagnostics, source_text(data))
    return list(result.contracts)


def load_one(path: Path) -> CheckedContract:
    contracts = load_contracts(path)
    if len(contracts) > 1:
        raise InputError(f"{path}: holds {len(contracts)} contracts; this command takes a file with one")
    return contracts[0]


def game_options(contracts: list[CheckedContract], env: int | None, board: str | None, path: Path) -> None:
    """--env is for ContractSim contracts and --board for CT-Bench (the games whose setup takes them): one no
    contract of the file can use is a usage error."""
    from contractlang.api.play import game_for, games_taking

    games = {game_for(c).name: game_for(c) for c in contracts}.values()
    for option, value, instead in (("env", env, "--board ID"), ("board", board, "--env N")):
        if value is not None and not any(g.takes(option) for g in games):
            titles = " and ".join(g.title for g in games)
            raise UsageProblem(
                f"--{option} applies to {games_taking(option)} contracts; {path} is for {titles} (use {instead})"
            )


from contractlang.api.experiments import DEFAULT_OUT, output_dir, synthetic_set  # noqa: E402,F401  (one place each)
