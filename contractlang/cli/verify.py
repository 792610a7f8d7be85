"""`contractlang verify`: the z3 verifier's checks of a contract, alone or against an environment or board."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError
from contractlang.cli.inputs import game_options, load_contracts, read, source_text
from contractlang.cli.options import BoardSetOption, FloorsOption, JsonFlag, RulesOption, floors_for_env
from contractlang.files import write_atomically


@app.command()
def verify(
    contract: Annotated[Path, typer.Argument(help="The contract to verify.")],
    env: Annotated[
        int | None,
        typer.Option("--env", min=1, max=6, help="ContractSim environment 1..6 (budget, capacity, cash-flow checks)."),
    ] = None,
    board: Annotated[
        str | None, typer.Option("--board", help="CT-Bench board ID 0..79 or SET:ID (colour, chip and path checks).")
    ] = None,
    board_set: BoardSetOption = None,
    rules: RulesOption = "authors",
    timeout_ms: Annotated[int, typer.Option(min=1, help="z3 time limit per check, in milliseconds.")] = 5000,
    events_out: Annotated[
        Path | None,
        typer.Option(help="Write each refuted check's counterexample as an event log here, for `contractlang trace`."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any check is refuted (the report is printed all the same).")
    ] = False,
    floors: FloorsOption = "cs14",
    json_out: JsonFlag = False,
) -> None:
    """Prove or refute the contract's properties with z3; refutations come with a replayable counterexample."""
    from contractlang.api.language import verify_all

    contracts = load_contracts(contract)  # a file that does not check is reported with carets, before z3 starts
    game_options(contracts, env, board, contract)
    floors_for_env(floors, env)
    verified = verify_all(contract, env, board, board_set, rules, timeout_ms, floors)
    reports, notes = verified.reports, verified.notes
    if events_out is not None:
        try:
            events_out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot write {events_out}: {exc.strerror or exc}") from None
        stems = _file_stems([r.contract for r in reports])
        for report, stem in zip(reports, stems):
            for check in report.checks:
                if check.counterexample and "events" in check.counterexample:
                    body = "".join(json.dumps(e) + "\n" for e in check.counterexample["events"])
                    write_atomically(events_out / f"{stem}.{check.name}.jsonl", body)
    if json_out:
        payload = [r.to_json() | ({"notes": n} if n else {}) for r, n in zip(reports, notes)]
        typer.echo(json.dumps({"ok": True, **(payload[0] if len(payload) == 1 else {"contracts": payload})}))
    else:
        from contractlang.cli.render import print_verification

        source = source_text(read(contract)[0])
        for report, note in zip(reports, notes):
            print_verification(report, str(contract), source)
            for name, text in note.items():
                typer.echo(f"  note on {name}: {text}")
        from contractlang.api.play import game_for

        games = [game_for(c) for c in contracts]
        if env is None and any(g.takes("env") for g in games):
            typer.echo("(pass --env N, an environment 1..6, for the budget, capacity and cash-flow checks)", err=True)
        if board is None and any(g.takes("board") for g in games):
            typer.echo(
                "(pass --board ID, a board 0..79 of `contractlang ctbench boards` or SET:ID, for the coverage "
                "colour, chip sufficiency and path-to-goal checks)",
                err=True,
            )
    if strict and any(c.status == "refuted" for r in reports for c in r.checks):
        raise typer.Exit(1)


def _file_stems(names: list[str]) -> list[str]:
    """File-name stems from contract names: no separators, no leading dots, and distinct."""
    stems: list[str] = []
    for name in names:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "contract"
        base, k = stem, 1
        while stem in stems:
            k += 1
            stem = f"{base}-{k}"
        stems.append(stem)
    return stems
