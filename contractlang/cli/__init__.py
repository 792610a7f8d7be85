"""The `contractlang` command line: the one package that wires contractlang, solver and games together.

`app.py` holds the command groups and `errors.py` the one failure path; each command module registers its
commands on import. The games and solvers are imported inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

import signal
import sys

from contractlang.cli.app import app

# registered in the order `--help` lists them
from contractlang.cli import (  # noqa: E402,F401,I001
    language, verify, solve, play, contractsim, ctbench, experiments, lsp,
)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Console entry point: bad input exits 1, usage errors 2, an internal error 3; never a traceback."""
    # a blocked signal mask is inherited across exec (Python resets handlers, not the mask): unblock, so that
    # Ctrl-C and SIGTERM reach a run whatever process started it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)  # likewise an inherited SIG_IGN: Ctrl-C must end a run
    signal.signal(signal.SIGTERM, _terminate)  # a killed run unwinds like Ctrl-C: workers ended, files closed
    app()


__all__ = ["app", "main"]
