"""Runs cut short (issues #15 and #30): a SIGTERM or Ctrl-C ends a sweep, its workers and the external agents they
started, in one clean "interrupted"; a worker that dies is one line; a rerun keeps every finished game and plays
only the rest; a second run into the same --out refuses while the first holds its lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hardening.hostile import agent, cli, ended, one_json_failure, stuck_agents_sweep, sweep_under_way
from tests.helpers import ROOT, run_process

pytestmark = pytest.mark.e2e  # signals, workers and sweeps in real processes


def sweep(out: Path, *extra, boards: str = "1,2", json_out: bool = True):
    return cli(
        "ctbench",
        "sweep",
        "--boards",
        boards,
        "--conditions",
        "none,prog_trading,nl_trading",
        "--out",
        out,
        "--workers",
        "2",
        *(["--json"] if json_out else []),
        *extra,
    )


def interrupted(stdout: str) -> bool:
    """One JSON failure saying the run was interrupted (and what it stored, and how to resume)."""
    payload = json.loads(stdout)
    return payload["ok"] is False and payload["error"].startswith("interrupted") and "\n" not in payload["error"]


def test_a_sweep_rerun_keeps_finished_games_and_plays_only_the_missing(tmp_path):
    first = json.loads(sweep(tmp_path, boards="24,24,24").stdout)
    assert first["games"] == first["played"] == 6  # three copies of board 1 are one board
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    assert record["log"] and record["visible"] is True and set(record["coverage"]) == {"red", "blue"}
    assert any(json.loads(line)["contract_terms"] for line in lines)
    assert any(json.loads(line)["transcript"] for line in lines)
    again = json.loads(sweep(tmp_path, boards="24,25").stdout)
    assert (again["games"], again["played"]) == (12, 6)
    assert (tmp_path / "games.jsonl").read_text().splitlines()[:6] == lines  # the first run's games stay first
    fresh = tmp_path / "fresh"
    json.loads(sweep(fresh, boards="24,25").stdout)
    assert (tmp_path / "summary.json").read_text() == (fresh / "summary.json").read_text()


def test_a_cut_line_is_dropped_and_a_stale_summary_never_survives(tmp_path):
    sweep(tmp_path, boards="1")
    games = tmp_path / "games.jsonl"
    games.write_text(games.read_text()[:-40])  # an interrupted write: the last line is cut short
    (tmp_path / "summary.json").write_text("[]\n")
    proc = sweep(tmp_path, boards="1", json_out=False)
    assert "dropped its last line, cut short" in proc.stderr and "5 of 6 games already" in proc.stderr
    assert "games: 6/6 done" in proc.stderr  # progress as a line: stderr is not a terminal
    assert all(json.loads(line) for line in games.read_text().splitlines())
    assert json.loads((tmp_path / "summary.json").read_text())
    before = games.read_text()
    games.write_text('{"not": "a game"}\n' + before)  # a foreign line is never silently thrown away
    payload = one_json_failure(sweep(tmp_path, boards="1"))
    assert "games.jsonl:1: not a game record" in payload["error"] and games.read_text().startswith('{"not"')


def test_sigterm_ends_the_sweep_and_its_workers_and_the_rerun_completes_it(tmp_path):
    """A SIGTERM, then a Ctrl-C while the first one's shutdown runs (the impatient user's second signal once
    broke the shutdown off half-way: "error: release unlocked lock"): one clean "interrupted", exit 130."""
    out = tmp_path / "s"
    boards = ",".join(str(i) for i in range(12))  # 96 games: long enough to be cut, and the rerun plays the rest
    proc, games = sweep_under_way(out, boards)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert children, "the sweep should be running worker processes"
    proc.send_signal(signal.SIGTERM)
    for _ in range(20):
        time.sleep(0.005)
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and interrupted(stdout)
    assert "Traceback" not in stderr and not (out / "summary.json").exists()
    time.sleep(0.5)
    alive = [
        pid
        for pid in children
        if Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    ]
    assert alive == []
    done = len(games.read_text().splitlines())
    assert 0 < done < 96
    resumed = json.loads(cli("ctbench", "sweep", "--boards", boards, "--out", out, "--workers", "2", "--json").stdout)
    assert resumed["games"] == 96 and resumed["played"] == 96 - done


def test_an_interrupted_sweep_ends_the_external_agents_its_workers_started(tmp_path):
    """The parent ends its workers with SIGTERM; each worker takes its agents with it (they sat in a game that
    would never ask again, orphaned, for as long as they cared to run)."""
    proc, pids = stuck_agents_sweep(tmp_path)
    try:
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and interrupted(stdout)
    stuck = [int(pid) for pid in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not all(ended(pid) for pid in stuck):
        time.sleep(0.05)
    assert len(stuck) == 2 and all(ended(pid) for pid in stuck)


@pytest.mark.parametrize(
    "inherited",
    [
        lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}),
        lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    ],
    ids=["blocked", "ignored"],
)
def test_ctrl_c_reaches_a_run_started_with_sigint_blocked_or_ignored(tmp_path, inherited):
    """A blocked mask and an ignored SIGINT both survive exec, and Python keeps them, so a command started by
    such a process — as something in a full pytest-xdist run is — once finished its work and exited 0 after
    Ctrl-C. The CLI unblocks SIGINT and SIGTERM and restores the default Ctrl-C handler on start."""
    proc, _ = sweep_under_way(tmp_path / "sweep", ",".join(str(i) for i in range(30)), inherited)
    assert proc.poll() is None, "the sweep should still be running"
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130 and interrupted(stdout)


def test_a_sweep_whose_worker_dies_ends_in_one_line(tmp_path):
    killer = agent(tmp_path, "killer", "kill -9 $PPID; sleep 1")
    proc = cli(
        "ctbench",
        "sweep",
        "--boards",
        "24,25",
        "--red",
        killer,
        "--blue",
        "planner",
        "--out",
        tmp_path / "s",
        "--workers",
        "2",
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        "error: a worker process was killed (SIGKILL: by hand, or by the system when memory ran out) in the middle "
        "of its jobs; the finished jobs are kept, and a rerun runs the rest"
    ]


def test_a_second_sweep_into_the_same_out_refuses_at_once_and_a_stale_lock_is_taken_over(tmp_path):
    out = tmp_path / "s"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contractlang",
            "ctbench",
            "sweep",
            "--boards",
            ",".join(map(str, range(20))),
            "--out",
            str(out),
            "--workers",
            "1",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        lock = out / "games.jsonl.lock"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not lock.exists():
            time.sleep(0.05)
        start = time.monotonic()
        second = cli("ctbench", "sweep", "--boards", "1", "--out", out, "--json")
        assert time.monotonic() - start < 30
        assert second.returncode == 1 and json.loads(second.stdout)["error"] == (
            f"{out}: another run (pid {first.pid}) is writing game records there; wait for it to end or choose "
            "another --out"
        )
    finally:
        first.kill()
        first.communicate()
    assert lock.read_text() == f"{first.pid}\n"  # killed: its lock stays behind, naming a dead process
    proc = cli("ctbench", "sweep", "--boards", "1", "--out", out, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True and not lock.exists()


FORK_INTERRUPT = """
import os, signal

def interrupt_once():
    if os.environ.pop("INTERRUPT_AT_FORK", None):
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(10_000))  # Python runs the handler here, inside the hook that fork runs after it

os.register_at_fork(after_in_parent=interrupt_once)

class Customer:
    name = "forking"
    roles = ("customer",)

    def act(self, observation):
        return {"kind": "pay", "amount": min(observation.payment_due, observation.remaining_budget)}
"""


def test_a_ctrl_c_while_the_run_forks_its_workers_still_ends_it(tmp_path):
    """Python drops an exception raised in a hook it runs after a fork: a Ctrl-C that came then was printed as a
    traceback and lost, and the run went on to exit 0. It ends the run, in one line, and a rerun completes it."""
    (tmp_path / "forking.py").write_text(FORK_INTERRUPT)
    args = ("tournament", "--agents", "f=py:forking.py:Customer,rcc", "--limit", "1", "--seeds", "1")
    args += ("--workers", "2", "--out", "t", "--json")
    done = run_process(*args, cwd=tmp_path, env={**os.environ, "INTERRUPT_AT_FORK": "1"}, timeout=240)
    assert done.returncode == 130 and interrupted(done.stdout), (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert not (tmp_path / "t" / "tournament.json").exists()
    again = run_process(*args, cwd=tmp_path, timeout=240)
    assert again.returncode == 0 and json.loads(again.stdout)["games"] == 2, again.stderr
