"""In-process (`py:`) agents that try to end the process, hang, or leave processes behind: each ends its own
game with one line naming the agent and what it did; the command goes on, never hangs, never exits 0 or with
the agent's code, and no child of the agent outlives the game (games/confined.py)."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers import fresh, run_process

pytestmark = pytest.mark.e2e  # commands in real processes: an exit or a hang must not take the test runner

AGENT = "py:tests/hardening/misbehaving_agents.py:Customer"
RUN = ("run", "examples/worked-example-1.contract", "--env", "1", "--customer", AGENT)


def run_misbehaving(how: str, *args, extra_env: dict | None = None, timeout: float = 120):
    env = {**os.environ, "MISBEHAVE": how, "CONTRACTLANG_AGENT_TIMEOUT": "2", **(extra_env or {})}
    return run_process(*(args or RUN), env=env, timeout=timeout)


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("import:exit", "called sys.exit(3)"),
        ("import:os_exit", "called os._exit(0)"),
        ("init:exit", "called sys.exit(3)"),
        ("init:os_exit", "called os._exit(0)"),
        ("act:exit", "called sys.exit(3)"),
        ("act:os_exit", "called os._exit(0)"),
        ("act:interrupt", "raised KeyboardInterrupt"),
        ("act:base", "raised Abandon"),
        ("act:sigterm", "signalled the process (os.kill)"),
        ("act:alarm", "signalled the process (signal.alarm)"),
        ("act:unsayable", "raised Unsayable: (its message cannot be shown: RuntimeError)"),
        ("act:flag", "pay.amount: Value error, true is not a whole number"),
        ("act:generator_exit", "raised GeneratorExit"),
        ("init:base", "raised Abandon"),
        ("import:base", "raised Abandon"),
        ("act:sleep", "gave no answer within 2 s"),
        ("init:sleep", "gave no answer within 2 s"),
    ],
)
def test_an_agent_that_ends_or_hangs_the_process_ends_its_game_in_one_line(how, said):
    done = run_misbehaving(how)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "agent 'py:tests/hardening/misbehaving_agents.py:Customer'" in lines[0] or "'misbehaving'" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("how", ["act:print", "act:recursion_limit", "act:chdir"])
def test_an_agent_that_prints_or_changes_the_process_leaves_the_answer_whole(how, tmp_path):
    """Its prints go to stderr, so `--json` stays JSON; the recursion limit and working directory it changes are
    set back before the game goes on, so the game neither fails deep in its own stack nor writes elsewhere."""
    log = tmp_path / "game.jsonl"
    done = run_misbehaving(how, *RUN, "--json", "--log", str(log))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json.loads(done.stdout)["ok"] is True
    for said in TALK:
        assert (said in done.stderr) == (how == "act:print")
    assert log.is_file() and "Traceback" not in done.stderr


TALK = ("the agent talks on stdout", "the agent writes to file descriptor 1", "the agent's program talks on stdout")
"""What the agent of `act:print` writes to stdout: with `print`, to file descriptor 1, and through a program."""


@pytest.mark.parametrize("command", ["tournament", "performance"])
def test_what_agents_in_worker_processes_print_leaves_the_json_whole(synthetic, tmp_path, command):
    """The games run in forked workers, whose stdout is the command's: the agents' output goes to stderr."""
    directory = fresh(synthetic, tmp_path)
    args = {
        "tournament": ("tournament", directory, "--agents", f"talk={AGENT},rcc", "--seeds", "1"),
        "performance": ("experiment", "performance", directory, "--agent", f"talk={AGENT}", "--seeds", "0"),
    }[command]
    done = run_misbehaving("act:print", *args, "--limit", "1", "--workers", "2", "--json", timeout=240)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json.loads(done.stdout)["ok"] is True
    assert all(said in done.stderr for said in TALK) and "Traceback" not in done.stderr


def test_the_processes_an_agent_starts_end_with_its_game(tmp_path):
    pids = tmp_path / "pids"
    done = run_misbehaving("act:fork", extra_env={"MISBEHAVE_PIDS": str(pids)})
    assert done.returncode == 0, done.stderr
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) >= 1  # the Customer acts every payment week, starting a child each time
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in started):
        time.sleep(0.1)
    assert not [p for p in started if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize(("how", "said"), [("act:exit", "called sys.exit(3)"), ("act:os_exit", "called os._exit(0)")])
def test_an_experiment_ends_naming_the_agent_whatever_the_workers(synthetic, tmp_path, how, said, workers):
    directory = fresh(synthetic, tmp_path)
    args = ("experiment", "performance", directory, "--agent", f"bad={AGENT}", "--contracts", "synth-env1-*")
    done = run_misbehaving(how, *args, "--limit", "1", "--workers", workers, "--json", timeout=240)
    assert (done.returncode, done.stderr) == (1, ""), done
    assert json.loads(done.stdout) == {
        "ok": False,
        "error": f"agent 'bad' (customer) {said}: an agent cannot end the process, so its game ends instead",
    }
