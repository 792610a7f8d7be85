"""The language commands: check, fmt, trace, render, translate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang import check_source
from contractlang.cli.app import app
from contractlang.cli.errors import InputError, UsageProblem
from contractlang.cli.inputs import emit_diagnostics, load_contracts, load_one, read, source_text
from contractlang.cli.llm_options import check_base_url
from contractlang.cli.options import FloorsOption, JsonFlag, RulesOption, seconds
from contractlang.diagnostics import ContractError, printable
from contractlang.files import FileError, write_atomically


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Contract files to parse and type-check.")],
    json_out: JsonFlag = False,
) -> None:
    """Parse and type-check contract files; report every error as file:line:col with a hint."""
    failed = False
    for path in files:
        try:
            data, name = read(path)
        except FileError as exc:
            failed = True
            typer.echo(
                json.dumps({"file": str(path), "ok": False, "error": str(exc)})
                if json_out
                else f"error: {printable(str(exc))}",
                err=not json_out,
            )
            continue
        result = check_source(data, name, decide_asserts=True)
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
            emit_diagnostics(result.diagnostics, source_text(data))
    if failed:
        raise typer.Exit(1)


@app.command()
def fmt(
    files: Annotated[list[Path], typer.Argument(help="Contract files to format.")],
    check_only: Annotated[bool, typer.Option("--check", help="Exit 1 if a file is not in canonical form.")] = False,
    write: Annotated[bool, typer.Option("--write", "-w", help="Rewrite the files in place.")] = False,
) -> None:
    """Print contracts in canonical form (stdout), rewrite them (--write) or test them (--check)."""
    if check_only and write:
        raise UsageProblem("--check and --write do not go together: --check only reports, --write rewrites")
    from contractlang.api.language import fmt as canonical

    unformatted = []
    for path in files:
        try:
            data, name = read(path)
            text = canonical(data, name)
        except FileError as exc:
            unformatted.append(str(path))
            typer.echo(f"error: {printable(str(exc))}", err=True)
            continue
        except ContractError as err:
            unformatted.append(str(path))
            emit_diagnostics(err.diagnostics, source_text(data))
            continue
        original = data.decode("utf-8")
        if check_only:
            if text != original:
                unformatted.append(name)
                typer.echo(f"{name}: not in canonical form (run `contractlang fmt --write {name}`)", err=True)
        elif write:
            if text != original:
                write_atomically(path, text)
                typer.echo(f"{name}: reformatted")
        else:
            typer.echo(text, nl=False)
    if unformatted:
        raise typer.Exit(1)


@app.command()
def trace(
    contract: Annotated[
        Path,
        typer.Argument(
            help="The contract the trajectory was played under; leave it out for a "
            "log that starts with its header (`run --log` writes one)."
        ),
    ],
    events: Annotated[Path | None, typer.Argument(help="Event log: one JSON object per line.")] = None,
    rules: RulesOption = "authors",
    floors: FloorsOption = "cs14",
    json_out: JsonFlag = False,
) -> None:
    """Replay a trajectory: dues, compliance, prefix status, memory, enforcement, and who breached first. A log
    is replayed under the rule set it was played under: a CT-Bench one under --rules, a ContractSim one under
    --floors (`run`'s defaults are the same; a log's header names them)."""
    from contractlang.api.language import trace as replay
    from contractlang.interpreter.trace import TraceError

    try:
        traced = replay(
            contract if events is None else events, None if events is None else load_one(contract), rules, floors
        )
    except TraceError as exc:
        raise InputError(str(exc)) from None
    report = traced.report
    if json_out:
        typer.echo(json.dumps({"ok": True, **report}))
        return
    from contractlang.cli.render import print_trace

    print_trace(report, traced.contract.ir)


@app.command()
def render(
    contract: Annotated[Path, typer.Argument(help="The contract to write out as prose.")],
    setting: Annotated[str | None, typer.Option(help="Re-label into catering, hotel or ai-hosting.")] = None,
) -> None:
    """Write a contract as prose: every term explicit, clauses in a fixed order, termination last."""
    from contractlang.api.language import render as prose

    for checked in load_contracts(contract):
        typer.echo(prose(checked, setting))


@app.command()
def translate(
    text_file: Annotated[Path, typer.Argument(help="Contract prose (UTF-8 text).")],
    backend: Annotated[
        str,
        typer.Option(
            help="rules (offline, deterministic), anthropic (needs ANTHROPIC_API_KEY) or "
            "openai (an OpenAI-compatible API: needs OPENAI_API_KEY and --model)."
        ),
    ] = "rules",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the DSL here.")] = None,
    name: Annotated[str | None, typer.Option(help="Contract name when the text gives none.")] = None,
    model: Annotated[
        str | None, typer.Option(help="Model for an LLM backend (anthropic's default: claude-sonnet-5-5).")
    ] = None,
    max_tokens: Annotated[
        int, typer.Option(min=1, max=128_000, help="Output token limit per attempt (LLM backends; at most 128,000).")
    ] = 4096,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            callback=seconds,
            help="Seconds the whole translation may "
            "take, every attempt, retry and wait "
            "included: a deadline, so a server "
            "that trickles bytes is cut at it "
            "(LLM backends).",
        ),
    ] = 60.0,
    retries: Annotated[
        int, typer.Option(min=0, help="Retries for transient API errors, with backoff (LLM backends).")
    ] = 3,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="API base URL of an LLM backend: a proxy, an "
            "OpenAI-compatible server. Default: ANTHROPIC_BASE_URL / "
            "OPENAI_BASE_URL, else the provider's own API."
        ),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option(help="SQLite cache and audit file (default .contractlang-cache/translations.sqlite).")
    ] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip the extra checks in the repair loop.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Translate contract prose to checked DSL; a missing term is reported, never filled in."""
    from contractlang.api.language import translate as translate_prose
    from contractlang.llm import LlmUnavailable

    check_base_url(base_url)
    if base_url is not None and backend == "rules":
        raise UsageProblem("--base-url applies to an LLM backend (anthropic, openai)")
    if backend == "openai" and model is None:
        raise UsageProblem("--backend openai needs --model (the model the server serves, e.g. gpt-5)")
    data, _ = read(text_file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{text_file}: not UTF-8 text") from None
    try:
        result = translate_prose(
            text,
            name=name or text_file.stem,
            backend=backend,
            model=model,
            max_tokens=max_tokens,
            timeout=timeout,
            retries=retries,
            base_url=base_url,
            cache=cache,
            verify=not no_verify,
        )
    except LlmUnavailable as exc:
        raise InputError(str(exc)) from None
    if output is not None and result.dsl:
        write_atomically(output, result.dsl)
    if json_out:
        typer.echo(
            json.dumps(
                {
                    **result.model_dump(
                        include={
                            "ok",
                            "well_formed",
                            "dsl",
                            "terms",
                            "missing",
                            "attempts",
                            "cached",
                            "backend",
                            "model",
                            "error",
                            "diagnostics",
                            "inconsistencies",
                            "notes",
                        }
                    ),
                    "status": result.status,
                }
            )
        )
    else:
        if output is None:
            typer.echo(result.dsl, nl=False)
        # the status line says when the offline default translated; a failure is the one failure line of every
        # command (`error: ...`), then the diagnostics of the contract that did not check, if one came back
        offline = " (offline: no LLM)" if result.backend == "rules" else ""
        how = f"{result.attempts} attempt(s), {'cached' if result.cached else 'fresh'}, {result.backend}/{result.model}"
        typer.echo(
            f"error: {printable(f'translation failed: {result.error} ({how}{offline})')}"
            if result.status == "failed"
            else f"{result.status}: {how}{offline}" + (f"; {result.error}" if result.error else ""),
            err=True,
        )
        for field in result.missing:
            typer.echo(f"missing: {field}", err=True)
        for finding in result.inconsistencies:
            typer.echo(f"inconsistent: {finding.message}", err=True)
        if result.inconsistencies:
            typer.echo("the text contradicts itself: translated as written, not well-formed", err=True)
        for note in result.notes:
            typer.echo(f"note: {note}", err=True)
        if not result.ok:
            from contractlang.diagnostics import Diagnostic

            for d in result.diagnostics:
                if not d["code"].startswith("E4"):
                    typer.echo(Diagnostic.from_json(d).render(result.dsl), err=True)
    if result.status != "ok":
        raise typer.Exit(1)
