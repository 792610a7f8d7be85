"""`contractlang verify`: the z3 verifier's checks of a contract, alone or against an environment or board."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Optional

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError
from contractlang.cli.inputs import game_options, load_contracts, read, source_text
from contractlang.cli.options import JsonFlag
from contractlang.files import write_atomically


def verifier_inputs(env: int | None, board: int | None):
    """The verifier's environment and board description for `--env N` and `--board ID` (None where not given)."""
    environment = board_value = None
    if env is not None:
        from games.contractsim.environments import environment as get_env

        environment = get_env(env)
    if board is not None:
        from games.ctbench.board import benchmark_board
        from games.ctbench.verify_board import board_spec

        board_value = board_spec(benchmark_board(board).board, f"board {board}")
    return environment, board_value


@app.command()
def verify(
    contract: Annotated[Path, typer.Argument(help="The contract to verify.")],
    env: Annotated[Optional[int], typer.Option("--env", min=1, max=6, help="ContractSim environment 1..6 (budget, capacity, "
                                                              "cash-flow checks).")] = None,
    board: Annotated[Optional[int], typer.Option("--board", help="CT-Bench board ID 0..79 (colour, chip and path "
                                                                  "checks).")] = None,
    timeout_ms: Annotated[int, typer.Option(min=1, help="z3 time limit per check, in milliseconds.")] = 5000,
    events_out: Annotated[Optional[Path], typer.Option(help="Write each refuted check's counterexample as an "
                                                            "event log here, for `contractlang trace`.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Prove or refute the contract's properties with z3; refutations come with a replayable counterexample."""
    from solver.verify import verify as run_verify

    contracts = load_contracts(contract)
    game_options(contracts, env, board, contract)
    environment, board_value = verifier_inputs(env, board)
    reports = [run_verify(c, env=environment, board=board_value, timeout_ms=timeout_ms) for c in contracts]
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
        payload = [r.to_json() for r in reports]
        typer.echo(json.dumps(payload[0] if len(payload) == 1 else {"contracts": payload}))
        return
    from contractlang.cli.render import print_verification

    source = source_text(read(contract)[0])
    for report in reports:
        print_verification(report, str(contract), source)
    if env is None and board is None:
        typer.echo("(pass --env N for budget, capacity and cash-flow checks; --board ID for CT-Bench board checks)",
                   err=True)


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
