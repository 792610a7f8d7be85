"""Every command's --help reads as text: no type metavars, and no option name cut short in a pipe."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli, run_process


def _command_paths(path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group under `path`, read from click's own tree (the app the console script runs)."""
    import typer.main

    from contractlang.cli import app

    node = typer.main.get_command(app)
    for name in path:
        node = node.commands[name]
    found = [path]
    for name in getattr(node, "commands", {}):
        found += _command_paths((*path, name))
    return found


def test_help_reads_without_type_metavars():
    """No `<bool>`, `<list[Path]>` or `{files}` in any --help: typer 0.27+ print them, so the range is pinned."""
    paths = _command_paths()
    assert len(paths) > 20 and ("experiment", "rational") in paths
    for path in paths:
        shown = run_cli(*path, "--help")
        assert shown.returncode == 0, (path, shown.stderr)
        for mark in ("<bool>", "<list[", "{files}", "<int>", "<str>"):
            assert mark not in shown.stdout, f"`contractlang {' '.join(path)} --help` shows {mark}"


@pytest.mark.e2e
@pytest.mark.parametrize("command", [("ctbench", "sweep"), ("experiment", "performance")])
def test_help_into_a_pipe_cuts_no_option_name(command):
    done = run_process(*command, "--help")
    assert done.returncode == 0 and "--help" in done.stdout
    assert "…" not in done.stdout, [line for line in done.stdout.splitlines() if "…" in line]


@pytest.mark.e2e
def test_help_paragraphs_are_wrapped_once_to_the_terminal():
    """Every paragraph of a command's help reaches rich as one line, so a terminal of 90 columns gets full lines
    and not the source's 115-column breaks wrapped again (a long line, then a short one)."""
    import os

    done = run_process("metrics", "--help", env={**os.environ, "TERMINAL_WIDTH": "90"})
    assert done.returncode == 0, done.stderr
    lines = [line.strip() for line in done.stdout.split("╭")[0].splitlines()]
    paragraph = lines[lines.index(next(x for x in lines if x.startswith("Amounts are"))) :]
    paragraph = paragraph[: paragraph.index("")]
    assert len(paragraph) >= 3 and all(len(line) > 70 for line in paragraph[:-1]), paragraph
