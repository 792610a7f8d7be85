"""The `contractlang` command line: the one package that wires contractlang, solver and games together.

`app.py` holds the command groups and `errors.py` the one failure path; each command module registers its
commands on import. The games and solvers are imported inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

import signal

from contractlang.cli.app import app

# registered in the order `--help` lists them
from contractlang.cli import (  # noqa: E402,F401,I001
    language, verify, solve, play, contractsim, ctbench, experiments, lsp,
)


def _interrupt(signum, frame) -> None:
    # The first Ctrl-C or SIGTERM unwinds the run (workers ended, files closed); a second one arriving during
    # that unwinding broke it off half-way (a lock released twice, a traceback). So only the first raises: it
    # blocks both in this thread, and one that reaches another thread and comes back here finds them blocked.
    # The unwinding ends workers at once, it never waits on them.
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    if signal.SIGINT not in before:
        raise KeyboardInterrupt


def main() -> None:
    """Console entry point: bad input exits 1, usage errors 2, an internal error 3; never a traceback."""
    # a blocked signal mask is inherited across exec (Python resets handlers, not the mask): unblock, so that
    # Ctrl-C and SIGTERM reach a run whatever process started it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, _interrupt)  # likewise an inherited SIG_IGN: Ctrl-C must end a run
    signal.signal(signal.SIGTERM, _interrupt)  # a killed run unwinds like Ctrl-C
    try:
        app()
    finally:
        # the exit code is decided: at exit Python puts the default handlers back, and a late signal would then
        # end the process by signal instead of with that code
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


__all__ = ["app", "main"]
