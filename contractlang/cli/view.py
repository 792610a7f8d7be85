"""`contractlang view`: a local web viewer over games, sweeps and experiments, or the same as a static site."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError, UsageProblem
from contractlang.cli.inputs import load_one, read, source_text
from contractlang.cli.llm_options import LlmFlags, llm_options, llm_settings
from contractlang.cli.options import JsonFlag
from contractlang.errors import MAX_WORKERS


@app.command()
# a viewer makes no LLM calls: only the settings that key an LLM game's recorded responses, so it replays them
@llm_options(max_tokens=8192, timeout=120.0, only=("recordings", "effort", "thinking", "max_tokens", "base_url"))
def view(
    path: Annotated[
        Path,
        typer.Argument(
            help="A game log (`run --log`), run records (`run --json`), a sweep's or "
            "experiment's output directory, or a folder of them."
        ),
    ] = Path("."),
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle", help="Write the viewer as a static site into this directory (a snapshot) instead of serving it."
        ),
    ] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on (0: a free one).")] = 0,
    host: Annotated[
        str,
        typer.Option(
            help="Address to bind; the default serves this machine only (any other address is reachable from the "
            "network, and `view` warns of it)."
        ),
    ] = "127.0.0.1",
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
    contract: Annotated[
        Path | None,
        typer.Option(
            help="The contract of an event log without a header (`run --log` files written before logs had one)."
        ),
    ] = None,
    board: Annotated[int | None, typer.Option(min=0, max=79, help="The board of a bare CT-Bench event log.")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1, max=MAX_WORKERS, help="Processes that build a --bundle's game pages (default: one per core)."
        ),
    ] = None,
    allow_commands: Annotated[
        bool,
        typer.Option(
            "--allow-commands",
            help="Let a rebuild start the external programs (cmd:PROGRAM) and import the Python agents (py:...) a "
            "record names; off by default.",
        ),
    ] = False,
    json_out: JsonFlag = False,
    llm_flags: LlmFlags | None = None,
) -> None:
    """See games, sweeps and experiments in a browser: each game week by week (ContractSim) or move by move
    (CT-Bench) beside its contract, the tables and figures, and a filterable list of games to compare."""
    from contractlang.api.play import game_for, game_type, games_taking
    from contractlang.api.view.options import ViewOptions
    from contractlang.api.view.site import Viewer, server
    from contractlang.api.view.site import bundle as write_bundle

    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    checked = load_one(contract) if contract is not None else None
    if board is not None and (checked is None or not game_for(checked).takes("board")):
        raise UsageProblem(
            f"--board goes with --contract FILE of a {games_taking('board')} contract "
            f"(for a bare {games_taking('board')} event log)"
        )
    # an LLM game is rebuilt by replaying its recordings, under the settings (--max-tokens, --base-url, ...) it was
    # played with: they key the recorded responses
    replay = llm_settings(["llm"], llm_flags.model_copy(update={"replay": True}))
    options = ViewOptions(
        contract=checked,
        source=source_text(read(contract)[0]) if contract else None,
        board=board,
        llm=replay,
        allow_commands=allow_commands,
    )
    viewer = Viewer(path, options, live=bundle is None)
    if not viewer.index.candidates():
        raise InputError(
            f"{path}: no games, tables or figures found (game logs, `run --json` records, sweep or experiment output)"
        )
    rows = viewer.index.rows
    if not rows and not path.is_dir() and viewer.index.problems:
        raise InputError(f"{path}: {next(iter(viewer.index.problems.values()))}")
    if checked is None and len(rows) == 1 and rows[0].line == 0 and path.is_file():
        if not rows[0].header:
            raise InputError(
                f"{path} is an event log (`run --log`) without a header naming its contract: give "
                "--contract FILE" + (" and --board ID" if game_type(rows[0].game).takes("board") else "")
            )
        from contractlang.interpreter.trace import TraceError, header_contract, read_header

        try:  # a header that cannot be read is this command's error, not a page's
            header_contract(read_header(viewer.index.line(rows[0]), str(path)), str(path))
        except TraceError as exc:
            raise InputError(str(exc)) from None
    if bundle is not None:
        from contractlang.cli.errors import runner_progress

        with runner_progress(json_out) as advance:
            done = write_bundle(viewer, bundle, advance, workers)
        if json_out:
            typer.echo(json.dumps({"ok": True, **done.model_dump()}))
        else:
            typer.echo(
                f"wrote {done.out}/index.html: {done.games} game(s), {done.figures} figure(s)"
                + (f"; {done.failed} game(s) could not be shown (the page says why)" if done.failed else "")
            )
        return
    try:
        httpd = server(viewer, host, port)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    url = f"http://{f'[{host}]' if ':' in host else host}:{httpd.server_address[1]}/"
    if httpd.network_reachable():
        typer.echo(
            f"warning: {host} is reachable from the network: anyone who can reach this machine can read the games "
            f"under {path} (bind 127.0.0.1 to serve this machine only)",
            err=True,
        )
    typer.echo(json.dumps({"ok": True, "url": url}) if json_out else f"contractlang view: {url}  (Ctrl-C stops it)")
    if open_browser:
        webbrowser.open(url)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
