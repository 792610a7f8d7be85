"""The `contractlang` command line: the one package that wires contractlang, solver and games together.

`app.py` holds the command groups and `errors.py` the one failure path; each command module registers its
commands on import. The games and solvers are imported inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
import threading
import time

# registered in the order `--help` lists them
from contractlang.cli import (  # noqa: E402,F401,I001
    contractsim,
    ctbench,
    experiments,
    language,
    lsp,
    play,
    scenario,
    solve,
    tournament,
    verify,
    view,
)
from contractlang.cli.app import app

FORCE_AFTER_SECONDS = 2.0
"""A signal this long after the first one ends the process at once: the user insists, the shutdown is stuck."""


REDELIVER_SECONDS = 0.05
"""How long after Python dropped an interrupt it is sent again: time for the code that dropped it to end."""


def _interrupt_handler():
    """The handler for Ctrl-C and SIGTERM, and the hook that keeps it from being lost. The first one unwinds the
    run (workers ended, files closed) and exits 130. A second one close behind it (a double Ctrl-C, a `kill`
    after it) once broke that unwinding off half-way (a lock released twice, a traceback), so it is let pass;
    one later than FORCE_AFTER_SECONDS means the unwinding itself is stuck, and ends the process with 130 at
    once. Python drops an exception raised where it cannot propagate (a hook it runs after a fork, a `__del__`)
    with a traceback: the interrupt is delivered again instead, as a first one, so the run still ends."""
    first: list[tuple[float, KeyboardInterrupt]] = []  # when the first came, and the interrupt it raised
    report = sys.unraisablehook

    def handle(signum, frame) -> None:
        if not first:
            first.append((time.monotonic(), KeyboardInterrupt()))
            raise first[0][1]
        if time.monotonic() - first[0][0] > FORCE_AFTER_SECONDS:
            _leave(130)

    def dropped(unraisable) -> None:
        if first and unraisable.exc_value is first[0][1]:
            first.clear()
            # sent from another thread a moment later: raised in this hook, or in the one that dropped it, it
            # would be dropped again
            again = threading.Timer(
                REDELIVER_SECONDS, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT)
            )
            again.daemon = True
            again.start()
            return
        report(unraisable)

    return handle, dropped


def _leave(code: int) -> None:
    """Exit now, past Python's own shutdown: at exit it puts the default signal handlers back (so a late signal
    would end the run by signal instead of with `code`) and joins threads an interrupted run may have left
    waiting. Whatever the run had to close, its unwinding has closed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


HELP_WIDTH = 120
"""Columns of `--help` written to a pipe or file: rich takes 80 (or COLUMNS, which describes a terminal that is
not there) and cut option names (`--conditions,--condit…`) at that width; every command's help fits in 120."""


def _help_width() -> None:
    """Help into a pipe or file is HELP_WIDTH columns wide unless TERMINAL_WIDTH (typer's own setting) says
    otherwise."""
    if not sys.stdout.isatty() and not os.environ.get("TERMINAL_WIDTH"):
        import typer.rich_utils

        typer.rich_utils.MAX_WIDTH = HELP_WIDTH


class ClosedStdout(io.TextIOBase):
    """The stdout of a process started without one (`>&-`): each write fails as on a closed descriptor, so the
    command ends with the one line of any output it cannot write."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def _fill_closed_descriptors() -> None:
    """Put /dev/null on each of descriptors 0, 1 and 2 the process was started without: the next file the run
    opens (a job store) would otherwise take the number, and what an agent or a program it starts writes to its
    stdout would land in that file."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def main() -> None:
    """Console entry point: bad input exits 1, usage errors 2, an internal error 3; never a traceback."""
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
    _fill_closed_descriptors()
    # a blocked signal mask is inherited across exec (Python resets handlers, not the mask): unblock, so that
    # Ctrl-C and SIGTERM reach a run whatever process started it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    handler, sys.unraisablehook = _interrupt_handler()
    signal.signal(signal.SIGINT, handler)  # likewise an inherited SIG_IGN: Ctrl-C must end a run
    signal.signal(signal.SIGTERM, handler)  # a killed run unwinds like Ctrl-C
    _help_width()
    try:
        app()
    except SystemExit as exc:
        if exc.code == 130:
            _leave(130)
        raise


__all__ = ["app", "main"]
