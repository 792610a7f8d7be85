"""The testing commands: `test` (scenario tests, coverage, generated tests) and `coverage` (clauses agents fired)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.app import app
from contractlang.cli.errors import InputError, UsageProblem
from contractlang.cli.inputs import emit_diagnostics
from contractlang.cli.options import JsonFlag
from contractlang.diagnostics import ContractError
from contractlang.files import read_capped, write_atomically


def _source(file: str) -> str | None:
    try:
        return read_capped(Path(file)).decode("utf-8", errors="replace")
    except OSError:
        return None


def _coverage_lines(report) -> list[str]:
    lines = []
    for c in report.coverage:
        lines.append(f"{c.contract}: {c.covered}/{c.reachable} reachable clauses covered ({c.percent}%)")
        for row in c.clauses:
            where = f"line {row.clause.span.line}" if row.clause.span else ""
            if row.dead:
                state = f"DEAD: {row.dead}"
            elif row.covered:
                state = "covered by " + ", ".join(f'"{t}"' for t in row.fired_by)
            else:
                state = "NOT COVERED"
            lines.append(f"  {where:>8}  {row.clause.label}: {state}")
    return lines


@app.command()
def test(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders of .contract files (default: .).")
    ] = None,
    coverage: Annotated[bool, typer.Option("--coverage", help="Report which tests fire each clause.")] = False,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write the results as JUnit XML to FILE.")] = None,
    generate: Annotated[
        Path | None,
        typer.Option("--generate", help="Write tests for the clauses of CONTRACT no test fires; report dead ones."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Run only the test of this name.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Run the scenario tests beside contracts through the monitor the games use; exit 1 when any fails."""
    import contractlang.api.tests as face

    if generate is not None:
        if paths or junit or name:
            raise UsageProblem("--generate takes one contract file and no other paths, --junit or --name")
        if not generate.is_file():
            raise InputError(
                f"{generate}: {'a folder' if generate.is_dir() else 'no such file'}; --generate takes one contract file"
            )
        try:
            done = face.generate_tests(generate)
        except ContractError as err:
            for d in err.diagnostics:
                emit_diagnostics([d], _source(d.file))
            raise typer.Exit(1) from None
        if json_out:
            typer.echo(
                json.dumps(
                    {
                        "ok": True,
                        "written": list(done.written),
                        "generated": [f.clause.label for f in done.found],
                        "dead": [{"clause": d.clause.label, "reason": d.reason} for d in done.dead],
                    }
                )
            )
            return
        for f in done.found:
            typer.echo(f"wrote a test that fires {f.clause.label} ({len(f.steps)} step{'s' * (len(f.steps) != 1)})")
        for d in done.dead:
            typer.echo(f"dead: {d.clause.label}: {d.reason}")
        for w in done.written:
            typer.echo(f"wrote {w}")
        if not done.found:
            typer.echo("every reachable clause is already covered; nothing written")
        return
    report = face.test(paths or [Path(".")], coverage=coverage, only=name)
    if not report.results and not report.diagnostics:  # a run of no test would hide a mistyped path or --name
        where = ", ".join(map(str, paths or [Path(".")]))
        if name is not None:
            raise InputError(f"no test named {name!r} under {where}")
        raise InputError(
            f'no tests under {where}: write `test "NAME" {{ ... }}` in a contract, or `tests for "CONTRACT" '
            "{ ... }` in a .contract file"
        )
    if junit is not None:
        from contractlang.scenario.junit import junit_xml

        write_atomically(junit, junit_xml(report))
    if json_out:
        typer.echo(json.dumps(report.to_json()))
    else:
        for d in report.diagnostics:
            emit_diagnostics([d], _source(d.file))
        for r in report.results:
            if r.passed:
                typer.echo(f"ok    {r.contract}: {r.name}")
            else:
                typer.echo(f"FAIL  {r.contract}: {r.name}")
                for f in r.failures:
                    typer.echo("  " + f.text().replace("\n", "\n  "))
        typer.echo(
            f"{len(report.results) - report.failed} passed, {report.failed} failed"
            + (f", {len(report.diagnostics)} check errors" if report.diagnostics else "")
        )
        for line in _coverage_lines(report):
            typer.echo(line)
    if not report.ok:
        raise typer.Exit(1)


@app.command("coverage")
def coverage_command(
    path: Annotated[
        Path, typer.Argument(help="A run --log file, or a folder of logs, experiment, sweep or tournament outputs.")
    ],
    json_out: JsonFlag = False,
) -> None:
    """Which clauses agents triggered in play, per contract, and which they never did."""
    import contractlang.api.tests as face

    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    result = face.coverage(path)
    if json_out:
        typer.echo(json.dumps({"ok": True, **result.to_json()}))
        return
    for c in result.contracts:
        typer.echo(f"{c.contract}: {c.games} game{'s' * (c.games != 1)}")
        for row in c.clauses:
            count = f"{row.games}/{row.observable_in} games" if row.observable_in else "-"
            typer.echo(f"  {row.clause.label}: {row.status} ({count})")
