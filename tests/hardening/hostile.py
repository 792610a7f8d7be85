"""What the hardening tests share: the command as an attacker runs it (never a traceback), in a process with capped
memory, an external agent written as a shell script, a sweep caught half-way, and whether a process has ended."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import EXAMPLES, ROOT, run_cli

WORKED = EXAMPLES / "worked-example-1.contract"
SWAP = EXAMPLES / "ctbench-board-24-swap.contract"
LOGS = ROOT / "tests" / "data" / "ctbench_logs"


def no_traceback(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def cli(*args, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The command in this process (`run_cli`), which never prints a traceback."""
    return no_traceback(run_cli(*args, cwd=cwd, timeout=timeout))


def capped_cli(*args, cwd: Path, memory: int = 3 * 2**30, timeout: float = 120) -> subprocess.CompletedProcess:
    """`cli` in a process allowed `memory` bytes of address space: reading more than a capped input would
    fail it with a MemoryError (exit 3) instead of filling the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    proc = subprocess.run(
        [sys.executable, "-m", "contractlang", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        preexec_fn=limit,
    )
    return no_traceback(proc)


def one_json_failure(proc: subprocess.CompletedProcess, code: int = 1) -> dict:
    """The one JSON object a failed command under --json prints, exiting `code`."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    payload = json.loads(lines[0])
    assert payload["ok"] is False and payload["error"]
    return payload


def agent(tmp_path: Path, name: str, body: str) -> str:
    """An external agent program (`cmd:…`) with the shell `body`."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return f"cmd:{path}"


def ended(pid: int, within: float = 0) -> bool:
    """Whether process `pid` is gone (or a zombie awaiting its parent) within `within` seconds: a SIGKILL is not
    instant."""
    deadline = time.monotonic() + within
    while True:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def sweep_under_way(out: Path, boards: str, preexec_fn=None) -> tuple[subprocess.Popen, Path]:
    """A 2-worker `ctbench sweep` into `out`, returned once its first game is written."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contractlang",
            "ctbench",
            "sweep",
            "--boards",
            boards,
            "--out",
            str(out),
            "--workers",
            "2",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=preexec_fn,
    )
    games = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (games.exists() and games.stat().st_size > 0):
        time.sleep(0.05)
    return proc, games


def stuck_agents_sweep(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A 2-worker `ctbench sweep` whose red player is an external agent that reads its first observation, writes
    its pid to the returned file and sleeps; returned once both workers' agents are up (or the sweep ended)."""
    pids = tmp_path / "pids"
    stuck = agent(tmp_path, "stuck", f"read line\necho $$ >> {pids}\nexec sleep 300")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contractlang",
            "ctbench",
            "sweep",
            "--boards",
            "1,2",
            "--red",
            stuck,
            "--blue",
            "planner",
            "--out",
            str(tmp_path / "s"),
            "--workers",
            "2",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline
        and proc.poll() is None
        and len(pids.read_text().split() if pids.exists() else []) < 2
    ):
        time.sleep(0.05)
    return proc, pids
