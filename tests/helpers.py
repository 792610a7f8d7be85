"""Small builders for ContractSim contracts and event streams used across tests, and the one way tests run the
command line (`run_cli` in this process, `run_process` in a real one)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from contractlang.interpreter import compile
from contractlang.interpreter.events import Delivery, Payment, WeekEnd
from contractlang.ir import (
    Contingencies,
    ContractSimIR,
    DeductionTerms,
    RolloverTerms,
    SubstitutionTerms,
)
from contractlang.vocab import PAYMENT_WEEKS, SETTINGS

PRODUCTS = SETTINGS["catering"].products


def contract(
    q=(1, 1, 1),
    prices=(10, 5, 3),
    payments=(18, 18, 18, 18, 18, 0),
    *,
    sub=None,
    pd=None,
    ro=None,
    grim=True,
    schedule=None,
) -> ContractSimIR:
    """A Catering contract; `sub`/`pd` are minimum triples (or True for the default), `ro` the max deficit."""
    c = Contingencies(
        substitution=SubstitutionTerms(min_qty=(1, 1, 1) if sub is True else sub) if sub else None,
        payment_deduction=DeductionTerms(min_qty=(1, 1, 1) if pd is True else pd) if pd else None,
        rollover=RolloverTerms(max_deficit=ro) if ro is not None else None,
        grim_trigger=grim,
    )
    return ContractSimIR(
        name="t",
        setting="catering",
        parties=("Customer", "Caterer"),
        prices=prices,
        deliveries=schedule or (q,) * 5,
        payments=payments,
        contingencies=c,
    )


def events(payments: dict[int, int], deliveries: dict[int, tuple[int, int, int]]):
    """Events for all 11 weeks: given payments and deliveries (absent weeks pay / deliver nothing)."""
    out = []
    for w in range(1, 12):
        if w in PAYMENT_WEEKS:
            out.append(Payment(week=w, amount=payments.get(w, 0)))
        else:
            for product, qty in zip(PRODUCTS, deliveries.get(w, (0, 0, 0))):
                out.append(Delivery(week=w, product=product, qty=qty))
        out.append(WeekEnd(week=w))
    return out


def run(ir: ContractSimIR, evs):
    m = compile(ir)
    for e in evs:
        m = m.apply(e)
    return m


def week(monitor, w):
    return next(s for s in monitor.weeks if s.week == w)


ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# the tests' data folders, reached from any test folder through these names
GOLDEN = ROOT / "tests" / "golden"
INVALID = ROOT / "tests" / "invalid"
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"


def compare_golden(path: Path, actual: str) -> None:
    """Compare with a golden file; `UPDATE_GOLDEN=1 pytest` rewrites it instead."""
    import pytest

    if UPDATE_GOLDEN or not path.exists():
        if not UPDATE_GOLDEN:
            pytest.fail(f"missing golden file {path}; run UPDATE_GOLDEN=1 pytest to create it")
        path.write_text(actual, encoding="utf-8")
        return
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"


class CliTimeout(BaseException):
    """An in-process command ran past its timeout (a BaseException, so the CLI's failure path lets it through)."""


@contextmanager
def _process_state(cwd, env, timeout: float):
    """For one in-process command: `cwd` and the environment `env` (all of it, as a child process would get
    it), a SIGALRM after `timeout` seconds; afterwards everything a command may change is as it was: the
    working directory, the environment, and the signal handlers and mask."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])

    def expire(signum, frame):
        raise CliTimeout(f"the command ran for more than {timeout} s")

    try:
        os.chdir(ROOT if cwd is None else cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, handler in handlers.items():
            signal.signal(s, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def run_cli(*args, cwd=None, env=None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m contractlang ARGS` run in this process, through the console script's own failure path, in `cwd`
    (default the repository root) with the environment `env` (default this one's); stdout and stderr
    captured apart, as text. A command past `timeout` seconds raises `subprocess.TimeoutExpired`."""
    from typer.testing import CliRunner

    from contractlang.cli import app

    argv = [str(a) for a in args]
    try:
        with _process_state(cwd, env, timeout):
            result = CliRunner().invoke(app, argv, prog_name="python -m contractlang", catch_exceptions=False)
    except CliTimeout:
        raise subprocess.TimeoutExpired(["contractlang", *argv], timeout) from None
    return subprocess.CompletedProcess(["contractlang", *argv], result.exit_code, result.stdout, result.stderr)


def run_process(*args, cwd=None, env=None, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m contractlang ARGS` in a real interpreter, for tests where the process is the point (signals,
    an external agent's pipes, the interpreter's exit); arguments as for `run_cli`."""
    return subprocess.run(
        [sys.executable, "-m", "contractlang", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT if cwd is None else cwd,
        timeout=timeout,
        env=env,
    )


def assert_each_fails_in_one_line(cli, cases) -> None:
    """Every (args, message) case exits 1 with `message` on stderr and no traceback. Every other case runs again
    with --json: one handler writes every command's errors, so a sample shows its JSON form."""
    import json

    for i, (args, message) in enumerate(cases):
        proc = cli(*args)
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        if i % 2 == 0:
            as_json = json.loads(cli(*args, "--json").stdout)
            assert as_json["ok"] is False and message in as_json["error"], (args, as_json)


VARIANTS = ("base", "S+PD")  # no contingency clause, and two (rollover would make the solve slow)


def fresh(synthetic: Path, tmp_path: Path) -> Path:
    """A copy of the set with no job records yet."""
    copy = tmp_path / "set"
    shutil.copytree(synthetic, copy, ignore=shutil.ignore_patterns("jobs", "rational", "performance"))
    return copy
