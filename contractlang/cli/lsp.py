"""`contractlang lsp`: the language server on stdio, with the z3 verifier, the CT-Bench boards and the games'
engines for scenario tests' utilities wired in."""

from __future__ import annotations

from typing import Annotated

import typer

from contractlang.api.language import verifier_inputs, verify
from contractlang.api.tests import GameWorlds
from contractlang.cli.app import app
from contractlang.cli.errors import InputError
from contractlang.ir import CheckedContract


def _verify(checked: CheckedContract, env: int | None, board: int | None):
    """The verifier as the server's `contractlang.verify` calls it: `cl.verify`, as `verify --env/--board`."""
    return verify(checked, env=env, board=board)


def _board_colours(board: int) -> tuple[tuple[str, ...], ...]:
    """A benchmark board's tile colours by row (the server's hover and chip-colour checks)."""
    return verifier_inputs(None, board)[1].colours


@app.command()
def lsp(
    # capped: a debounce of hours would mean diagnostics that never come, with nothing to say why
    debounce_ms: Annotated[
        int, typer.Option(min=0, max=10_000, help="Wait this long after the last edit before checking.")
    ] = 150,
) -> None:
    """Run the language server on stdin/stdout for editors (needs the `lsp` extra: pygls); see
    docs/how-to/editors.md."""
    try:
        from contractlang.lsp.server import serve
    except ImportError as exc:
        raise InputError(f"the language server needs pygls ({exc}): pip install 'contractlang[lsp]'") from None
    code = serve(verify=_verify, board_colours=_board_colours, debounce=debounce_ms / 1000, worlds=GameWorlds())
    if code:
        raise typer.Exit(code)  # `exit` without `shutdown`: 1, as the protocol says
