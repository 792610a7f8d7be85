"""The CLI's one failure path: every exception a command raises becomes an exit code and one report.

Exit codes: 0 ok, 1 the input is wrong (diagnostics, never a traceback), 2 usage error, 3 an internal error
(one line; CONTRACTLANG_DEBUG=1 shows the traceback), 130 interrupted. Under --json every failure is one JSON
object on stdout. The console script and the in-process test runner both reach it through `ReportingGroup.main`.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError  # typer 0.29 bundles its own click
from typer.core import TyperGroup
from typer.models import TyperPath

from contractlang.diagnostics import ContractError, printable
from contractlang.errors import BadArgument, BadData, RunEnded, UnknownName
from contractlang.files import FileError, GuardedOutput, OutputError


class InputError(Exception):
    """Bad input found by the CLI itself (missing file, a file with two contracts): one line, exit 1."""


class UsageProblem(Exception):
    """Options that cannot go together or do not apply to this input: one line, exit 2."""


class CheckFailed(Exception):
    """A contract file with diagnostics: printed with carets (or as JSON), exit 1."""

    def __init__(self, diagnostics, source: str):
        self.diagnostics = list(diagnostics)
        self.source = source
        super().__init__(f"{len(self.diagnostics)} error(s) in the contract")


def _report(
    message: str,
    code: int,
    json_mode: bool,
    diagnostics=None,
    source: str | None = None,
    lost_stdout: bool = False,
    quiet: bool = False,
) -> int:
    """One failure, one report: a JSON object on stdout under --json, else lines on stderr. When stdout is what
    cannot be written, the line goes to stderr (exit 1) and what is still buffered for stdout is dropped; when
    its reader simply left (`| head`), `quiet` keeps stderr silent, as other command-line tools do."""
    if json_mode:
        payload: dict = {"ok": False, "error": message}
        if diagnostics is not None:
            payload["diagnostics"] = [d.to_json() for d in diagnostics]
        try:
            typer.echo(json.dumps(payload))
            sys.stdout.flush()
            return code
        except OutputError as exc:
            message, code, diagnostics, lost_stdout, quiet = str(exc), 1, None, True, exc.reader_left
    if diagnostics is not None and not quiet:
        for d in diagnostics:
            typer.echo(d.render(source), err=True)
    elif not quiet:
        # one line, whatever the message holds; CONTRACTLANG_DEBUG=1 lets an agent's error show its own frames
        lines = message.split("\n") if os.environ.get("CONTRACTLANG_DEBUG") == "1" else [message]
        typer.echo("error: " + "\n".join(map(printable, lines)), err=True)
    if lost_stdout:
        _drop_stdout()
    return code


def _drop_stdout() -> None:
    """Point the process's stdout at /dev/null, so that the interpreter's last flush of a device that already
    failed stays silent."""
    stream = getattr(sys.stdout, "stream", None)
    if stream is sys.__stdout__:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def _usage_line(exc: ClickException) -> str:
    """`usage: Missing option '--env' (see `contractlang ctbench play --help`)`."""
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return f"usage: {exc.format_message()}{where}"


def exit_code(command: Callable[[], int | None], json_mode: bool, argv: Sequence[str] = ()) -> int:
    """Run `command` (the parsed command line `argv`) and map what it raises to an exit code, reporting the
    failure."""
    try:
        code = command()
        sys.stdout.flush()
    except OutputError as exc:
        return _report(str(exc), 1, False, lost_stdout=True, quiet=exc.reader_left)
    except KeyboardInterrupt:
        return _report("interrupted", 130, json_mode)
    except RunEnded as exc:
        return _report(str(exc), exc.code, json_mode)
    except CheckFailed as exc:
        return _report(str(exc), 1, json_mode, exc.diagnostics, exc.source)
    except ContractError as exc:
        return _report(str(exc), 1, json_mode, exc.diagnostics)
    except (InputError, UnknownName, FileError, BadData) as exc:
        return _report(str(exc), 1, json_mode)
    except UsageProblem as exc:
        return _report(f"usage: {exc}", 2, json_mode)
    except BadArgument as exc:
        return _report(f"usage: {option_words(exc, argv)}", 2, json_mode)
    except Exception as exc:
        if _agent_error(exc):  # an agent that cannot be found, started or played: the user's input
            return _report(str(exc), 1, json_mode)
        if _refused_call(exc):  # a game's or run's LLM limit the user set, reached outside the runner
            return _report(str(exc), 1, json_mode)
        if isinstance(exc, NoArgsIsHelpError):  # a bare command group prints its help
            exc.show()
            return exc.exit_code
        if isinstance(exc, ClickException):  # click's usage and parameter errors: one line, not its block
            return _report(_usage_line(exc), exc.exit_code, json_mode)
        if os.environ.get("CONTRACTLANG_DEBUG") == "1":
            raise
        return _report(
            f"internal error: {type(exc).__name__}: {exc} (set CONTRACTLANG_DEBUG=1 to see where)", 3, json_mode
        )
    if code == 130:  # typer turns an interrupt inside a command into exit code 130
        return _report("interrupted", 130, json_mode)
    return code or 0


def option_words(exc: BadArgument, argv: Sequence[str] = ()) -> str:
    """A facade's complaint about one of its parameters in the words of the command line: the parameter it
    names first is the option of that name (`floors is …` → `--floors is …`), and a verb's argument the option
    given on the command line (`tournament(detect=-1.0): …` → `--detect -1.0: …`)."""
    text, name = str(exc), exc.parameter
    if not name:
        return text
    option = f"--{name.replace('_', '-')}"
    if text.startswith(f"{name} "):
        return option + text[len(name) :]
    called = re.fullmatch(rf"[\w.]+\({name}=(.*?)\): (.*)", text)
    if called and any(a == option or a.startswith(f"{option}=") for a in argv):
        return f"{option} {called.group(1)}: {called.group(2)}"
    return text


def _agent_error(exc: Exception) -> bool:
    agents = sys.modules.get("games.agents")  # loaded by whatever seated an agent
    return agents is not None and isinstance(exc, agents.AgentError)


def _refused_call(exc: Exception) -> bool:
    errors = sys.modules.get("contractlang.llm.errors")  # loaded by whatever called a model
    return errors is not None and isinstance(exc, errors.CallRefused) and not isinstance(exc, errors.RunStopped)


class ReportingGroup(TyperGroup):
    """The top-level command group: parses and runs a command line, then exits through `exit_code`."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        unwrap_help(self)
        refuse_empty_paths(self)
        if not isinstance(sys.stdout, GuardedOutput):  # a full device or closed pipe on stdout: one line, exit 1
            sys.stdout = GuardedOutput(sys.stdout)
        sys.exit(
            exit_code(
                lambda: super(ReportingGroup, self).main(argv, prog_name, complete_var, standalone_mode=False, **extra),
                "--json" in argv,
                argv,
            )
        )


def unwrap_help(command) -> None:
    """Each paragraph of every command's help on one line, so rich wraps it to the terminal once: typer keeps the
    line breaks of the paragraphs after the first, and rich wrapping those lines again left them ragged. A
    paragraph of indented or listed lines, or marked `\\b`, keeps its breaks."""
    if command.help:
        command.help = "\n\n".join(
            paragraph
            if paragraph.startswith("\b") or any(line[:1] in (" ", "-", "*", "•") for line in paragraph.splitlines())
            else " ".join(paragraph.split("\n"))
            for paragraph in inspect.cleandoc(command.help).split("\n\n")
        )
    for sub in getattr(command, "commands", {}).values():
        unwrap_help(sub)


class GivenPath(TyperPath):
    """A file or folder named on the command line, never the empty text: `Path("")` is the current folder, so
    `--out "$UNSET"` would write there and `--junit ""` fail naming `.`."""

    def convert(self, value, param, ctx):
        if value == "":
            self.fail("an empty path names no file or folder (is a variable unset?)", param, ctx)
        return super().convert(value, param, ctx)


def refuse_empty_paths(command) -> None:
    """Every path option and argument of `command` and its subcommands read as a `GivenPath`."""
    for param in getattr(command, "params", ()):
        if type(param.type) is TyperPath:
            param.type.__class__ = GivenPath
    for sub in getattr(command, "commands", {}).values():
        refuse_empty_paths(sub)


@contextmanager
def playing() -> Iterator[None]:
    """Games as bad input, one line each: an agent that breaks the protocol (games/agents.py); what the agents
    write to stdout goes to stderr (`agents_off_stdout`)."""
    from contractlang.api import AgentError

    with agents_off_stdout():
        try:
            yield
        except AgentError as exc:
            raise InputError(str(exc)) from None


@contextmanager
def agents_off_stdout() -> Iterator[None]:
    """File descriptor 1 as stderr while agents run, so that what they write below Python's `print` (which
    `games.confined` already sends to stderr) stays out of the command's output: `os.write(1, …)`, a program an
    agent starts, a forked worker's output. The command writes its answer after the games, to stdout as it was
    (kept as a duplicate meanwhile), so a `--json` answer stays one JSON document. Ray's workers write to Ray's
    logs, never to this process's stdout. (Descriptors 1 and 2 are open: `contractlang.cli.main` fills those the
    process was started without.)"""
    sys.stdout.flush()
    kept = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(kept, 1)
        os.close(kept)


@contextmanager
def runner_progress(quiet: bool) -> Iterator:
    """`job_progress` for the experiments, whose runner reports its failures (Ray unreachable, …) as
    RuntimeError."""
    from contractlang.progress import job_progress

    with job_progress(quiet) as advance:
        try:
            yield advance
        except RuntimeError as exc:
            raise InputError(str(exc)) from None
