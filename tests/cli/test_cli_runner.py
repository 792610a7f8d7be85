"""The tests' command runner: in this process it goes through the console script's own failure path, honours
`cwd`, `env` and `timeout`, and leaves the process as it found it."""

import os
import signal
import socket
import subprocess

import pytest

from tests.helpers import ROOT, run_cli, run_process

WORKED = "examples/worked-example-1.contract"


@pytest.mark.e2e
def test_in_process_and_a_real_process_report_a_failure_alike():
    for args in (("check", "no-such.contract", "--json"), ("run", WORKED, "--env", "9"), ("check", "--no-such")):
        here, there = run_cli(*args), run_process(*args)
        assert (here.returncode, here.stdout) == (there.returncode, there.stdout), args
        assert here.stderr == there.stderr, args


def test_cwd_and_env_apply_to_the_command_and_are_restored(tmp_path):
    (tmp_path / "here.contract").write_text((ROOT / WORKED).read_text())
    before_cwd, before_env = os.getcwd(), dict(os.environ)
    assert run_cli("check", "here.contract", cwd=tmp_path).returncode == 0
    assert run_cli("check", "here.contract").returncode == 1  # the default is the repository root
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    args = (
        "translate",
        "tests/nl/01-plain-lists.txt",
        "--backend",
        "anthropic",
        "--base-url",
        closed,
        "--retries",
        "0",
        "--cache",
        tmp_path / "c.sqlite",
    )
    without = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    assert "ANTHROPIC_API_KEY" in run_cli(*args, env=without).stderr
    with_key = run_cli(*args, env={**without, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key"})
    assert with_key.returncode == 1 and "ANTHROPIC_API_KEY" not in with_key.stderr, with_key.stderr
    assert (os.getcwd(), dict(os.environ)) == (before_cwd, before_env)


def test_a_command_past_its_timeout_stops_and_leaves_the_handlers_alone():
    def mine(signum, frame):
        raise AssertionError("not to be called")

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            run_cli("ctbench", "boards", timeout=0.001)
        assert signal.getsignal(signal.SIGTERM) is mine and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGTERM, previous)
