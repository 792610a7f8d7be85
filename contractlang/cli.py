"""The `contractlang` command line: the one module that wires contractlang, solver and games together.

Exit codes: 0 ok, 1 the input is wrong (diagnostics, never a traceback), 2 usage error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang import check_source
from contractlang.diagnostics import ContractError
from contractlang.formatter import format_source
from contractlang.ir import CheckedContract
from contractlang.parser import parse

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Author, check, verify and run contracts for ContractSim and CT-Bench.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


class InputError(Exception):
    """Bad input found by the CLI itself (missing file, unknown name): one line, exit 1."""


def _read(path: Path) -> tuple[bytes, str]:
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _emit_diagnostics(diags, source: str | None) -> None:
    for d in diags:
        typer.echo(d.render(source), err=True)


def _source_text(data: bytes) -> str:
    """Text for caret lines; undecodable bytes show as U+FFFD so a bad-UTF-8 report still points."""
    return data.decode("utf-8", errors="replace")


def load_contracts(path: Path) -> list[CheckedContract]:
    """Read and check a contract file for a command; diagnostics are printed and exit 1 on failure."""
    data, name = _read(path)
    result = check_source(data, name)
    if not result.ok:
        _emit_diagnostics(result.diagnostics, _source_text(data))
        raise typer.Exit(1)
    if not result.contracts:
        raise InputError(f"{name}: the file holds no contract")
    return list(result.contracts)


def load_one(path: Path, kind: str | None = None) -> CheckedContract:
    contracts = load_contracts(path)
    if len(contracts) > 1:
        raise InputError(f"{path}: holds {len(contracts)} contracts; this command takes a file with one")
    contract = contracts[0]
    if kind is not None and contract.ir.kind != kind:
        game = "ContractSim" if kind == "contractsim" else "CT-Bench"
        raise InputError(f"{path}: \"{contract.ir.name}\" is not a {game} contract")
    return contract


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Contract files to parse and type-check.")],
    json_out: JsonFlag = False,
) -> None:
    """Parse and type-check contract files; report every error as file:line:col with a hint."""
    failed = False
    for path in files:
        data, name = _read(path)
        result = check_source(data, name)
        failed |= not result.ok
        if json_out:
            payload: dict = {"file": name, "ok": result.ok}
            if result.ok:
                payload["contracts"] = [
                    {"name": c.ir.name, "game": c.ir.kind, "terms": c.ir.terms_json()} for c in result.contracts
                ]
                if len(result.contracts) == 1:
                    payload["terms"] = result.contracts[0].ir.terms_json()
            else:
                payload["diagnostics"] = [d.to_json() for d in result.diagnostics]
            typer.echo(json.dumps(payload))
        elif result.ok:
            names = ", ".join(c.ir.name for c in result.contracts)
            typer.echo(f"{name}: ok ({len(result.contracts)} contract{'s' * (len(result.contracts) != 1)}: {names})")
        else:
            _emit_diagnostics(result.diagnostics, _source_text(data))
    if failed:
        raise typer.Exit(1)


@app.command()
def fmt(
    files: Annotated[list[Path], typer.Argument(help="Contract files to format.")],
    check_only: Annotated[bool, typer.Option("--check", help="Exit 1 if a file is not in canonical form.")] = False,
    write: Annotated[bool, typer.Option("--write", "-w", help="Rewrite the files in place.")] = False,
) -> None:
    """Print contracts in canonical form (stdout), rewrite them (--write) or test them (--check)."""
    unformatted = []
    for path in files:
        data, name = _read(path)
        try:
            tree = parse(data, name)
        except ContractError as err:
            _emit_diagnostics(err.diagnostics, _source_text(data))
            raise typer.Exit(1) from None
        text = format_source(tree)
        original = data.decode("utf-8")
        if check_only:
            if text != original:
                unformatted.append(name)
                typer.echo(f"{name}: not in canonical form (run `contractlang fmt --write {name}`)", err=True)
        elif write:
            if text != original:
                _write_atomically(path, text)
                typer.echo(f"{name}: reformatted")
        else:
            typer.echo(text, nl=False)
    if unformatted:
        raise typer.Exit(1)


@app.command()
def trace(
    contract: Annotated[Path, typer.Argument(help="The contract the trajectory was played under.")],
    events: Annotated[Path, typer.Argument(help="Event log: one JSON object per line.")],
    json_out: JsonFlag = False,
) -> None:
    """Replay a trajectory: dues, compliance, prefix status, memory, enforcement, and who breached first."""
    from contractlang.interpreter.trace import TraceError, read_events, replay, trace_json

    checked = load_one(contract)
    try:
        monitor, steps = replay(checked.ir, read_events(events, checked.ir.kind), str(events))
    except TraceError as exc:
        raise InputError(str(exc)) from None
    report = trace_json(monitor, steps)
    if json_out:
        typer.echo(json.dumps(report))
        return
    from contractlang.render_terminal import print_trace

    print_trace(report, checked.ir)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main() -> None:
    """Console entry point: usage errors exit 2 (typer's standalone mode), bad input exits 1."""
    try:
        app()
    except InputError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except ContractError as exc:
        for d in exc.diagnostics:
            typer.echo(d.render(None), err=True)
        sys.exit(1)


__all__ = ["app", "main"]
