"""The CLI as a hostile or careless user drives it (issue #15): every case gives one clear line (one JSON
object under --json) and exit 1 or 2, never a traceback, a lost result or an unsafe write."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import run_cli, run_process

EXAMPLES = ROOT / "examples"
WORKED = EXAMPLES / "worked-example-1.contract"
SWAP = EXAMPLES / "ctbench-board-24-swap.contract"


def no_traceback(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def cli(*args, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in this process (`run_cli`), which never prints a traceback."""
    return no_traceback(run_cli(*args, cwd=cwd, timeout=timeout))


def one_json_failure(proc: subprocess.CompletedProcess, code: int = 1) -> dict:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    payload = json.loads(lines[0])
    assert payload["ok"] is False and payload["error"]
    return payload


# --- 1. sweeps: resumable, deduplicated, complete records, workers ended ---------------------------

def sweep(out: Path, *extra, boards: str = "1,2", json_out: bool = True):
    return cli("ctbench", "sweep", "--boards", boards, "--conditions", "none,prog_trading,nl_trading", "--out", out,
               "--workers", "2", *(["--json"] if json_out else []), *extra)


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


def interrupted(stdout: str) -> bool:
    """One JSON failure saying the run was interrupted (and what it stored, and how to resume)."""
    payload = json.loads(stdout)
    return payload["ok"] is False and payload["error"].startswith("interrupted") and "\n" not in payload["error"]


def test_sigterm_ends_the_sweep_and_its_workers_and_the_rerun_completes_it(tmp_path):
    """A SIGTERM, then a Ctrl-C while the first one's shutdown runs (the impatient user's second signal once
    broke the shutdown off half-way: "error: release unlocked lock"): one clean "interrupted", exit 130."""
    out = tmp_path / "s"
    boards = ",".join(str(i) for i in range(12))  # 96 games: long enough to be cut, and the rerun plays the rest
    proc, games = _sweep_under_way(out, boards)
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
    alive = [pid for pid in children if Path(f"/proc/{pid}").exists()
             and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
    assert alive == []
    done = len(games.read_text().splitlines())
    assert 0 < done < 96
    resumed = json.loads(cli("ctbench", "sweep", "--boards", boards, "--out", out, "--workers", "2", "--json").stdout)
    assert resumed["games"] == 96 and resumed["played"] == 96 - done


def test_an_unreachable_ray_cluster_is_one_line_at_once(tmp_path):
    start = time.monotonic()
    # a real process: an attempt to join a cluster leaves Ray's state behind in the process that made it
    payload = one_json_failure(no_traceback(run_process("ctbench", "sweep", "--boards", "1", "--ray", "127.0.0.1:1",
                                                        "--out", tmp_path, "--json")))
    assert "cannot reach a Ray cluster at 127.0.0.1:1" in payload["error"] and time.monotonic() - start < 30


# --- 2, 3, 14: formatting never changes numbers; empty files; every file reported ----------------

BIG = 'contract "big" {\n  game contractsim.catering\n  prices { pizza: $10000000000000000  pasta: $5  soup: $3 }\n' \
      '  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  }\n  pay {\n    weeks 1..9: $18\n    week 11: $0\n  }\n}\n'


def test_fmt_never_rewrites_a_number(tmp_path):
    path = tmp_path / "big.contract"
    path.write_text(BIG)
    proc = cli("fmt", "--write", path)
    assert proc.returncode == 1 and "E003" in proc.stderr and path.read_text() == BIG


def test_check_and_fmt_report_every_file(tmp_path):
    empty, big = tmp_path / "empty.contract", tmp_path / "big.contract"
    empty.write_text("")
    big.write_text(BIG)
    proc = cli("check", empty, tmp_path / "missing.contract", big, WORKED)
    assert proc.returncode == 1
    assert "error[E005]: the file holds no contract" in proc.stderr and "missing.contract: cannot read" in proc.stderr
    assert "E003" in proc.stderr and "worked-example-1.contract: ok" in proc.stdout
    rows = [json.loads(line) for line in cli("check", "--json", empty, tmp_path / "missing.contract", WORKED)
            .stdout.splitlines()]
    assert [r["ok"] for r in rows] == [False, False, True]
    unformatted = tmp_path / "messy.contract"
    unformatted.write_text(WORKED.read_text().replace("  game", "      game"))
    proc = cli("fmt", "--check", tmp_path / "missing.contract", unformatted, big, WORKED)
    assert proc.returncode == 1
    assert "missing.contract: cannot read" in proc.stderr and "messy.contract: not in canonical form" in proc.stderr
    assert "E003" in proc.stderr


# --- 5, 6: verify's unknowns, any legal payment path --------------------------------------------

def test_verify_at_a_tiny_time_limit_says_unknown(tmp_path):
    proc = cli("verify", EXAMPLES / "catering-env5-a.contract", "--env", "6", "--timeout-ms", "8", "--json")
    assert proc.returncode == 0
    statuses = {c["name"]: c["status"] for c in json.loads(proc.stdout)["checks"]}
    assert statuses["cashflow.best_case"] in ("unknown", "proved") and "refuted" not in statuses.values()


def test_the_rational_supplier_plays_a_customer_paying_off_schedule(tmp_path):
    proc = cli("run", WORKED, "--env", "3", "--customer", "random", "--supplier", "rc", "--seed", "14", "--json",
               cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["seed"] == 14


# --- 8, 12: strict event logs, huge and deep input, endless input ---------------------------------

@pytest.mark.parametrize("line,message", [
    ('{"type": "payment", "week": 1, "amount": true}', "amount: Input should be a valid integer"),
    ('{"type": "payment", "week": 1, "amount": "18"}', "amount: Input should be a valid integer"),
    ('{"type": "payment", "week": 1, "amount": 18.0}', "amount: Input should be a valid integer"),
    ('{"type": "payment", "week": 1, "week": 3, "amount": 18}', "the key 'week' appears twice"),
    ('{"type": "payment", "week": 1, "amount": 1' + "0" * 5000 + "}", "invalid event"),
    ('{"type": "payment", "week": 1, "amount": 100000000000000000000}', "less than or equal to"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
], ids=["bool", "string", "float", "duplicate-key", "5000-digits", "above-bound", "deep"])
def test_trace_refuses_loose_values_with_file_and_line(tmp_path, line, message):
    log = tmp_path / "events.jsonl"
    log.write_text('{"type": "payment", "week": 1, "amount": 18}\n' + line + "\n")
    proc = cli("trace", WORKED, log)
    assert proc.returncode == 1 and f"{log}:2: " in proc.stderr and message in proc.stderr


def test_trace_refuses_an_off_board_tile(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text(json.dumps({"type": "move_attempt", "player": "blue", "tile": [9, 1], "tile_colour": "red",
                               "holdings": {"red": {"red": 1}, "blue": {"blue": 1}}}) + "\n")
    payload = one_json_failure(cli("trace", SWAP, log, "--json"))
    assert payload["error"].startswith(f"{log}:1: bad move_attempt event: tile.0")


@pytest.mark.parametrize("content", ["[" * 100000 + "]" * 100000, '{"contract": ' + "1" * 5000 + "}", "[1, 2]"],
                         ids=["deep", "5000-digits", "not-an-object"])
def test_metrics_refuses_hostile_records_in_one_line(tmp_path, content):
    path = tmp_path / "runs.jsonl"
    path.write_text(content + "\n")
    assert f"{path}:1: not a run record" in one_json_failure(cli("metrics", path, "--json"))["error"]


@pytest.mark.parametrize("command, cap", [(["check"], 1), (["trace", WORKED], 64), (["metrics"], 64),
                                          (["translate"], 1), (["fmt"], 1)])
def test_endless_inputs_are_capped(tmp_path, command, cap):
    proc = cli(*command, "/dev/zero")
    assert proc.returncode == 1 and f"/dev/zero: more than {cap} MiB; not read" in proc.stderr


def test_a_pipe_is_refused_not_read(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(f"yes > {fifo}", shell=True, stderr=subprocess.DEVNULL)
    try:
        proc = cli("check", fifo, timeout=60)
    finally:
        writer.kill()
        writer.wait()
    assert proc.returncode == 1 and "is a pipe, not a file" in proc.stderr


# --- 9, 10: safe writes ---------------------------------------------------------------------------

def test_writes_refuse_symlinks_keep_modes_refuse_read_only_and_leave_no_temp_files(tmp_path):
    """Issue #49: an output is a new file renamed into place in its own folder; a link at the target is refused
    in one line, and the file it names is left alone."""
    messy = WORKED.read_text().replace("  game", "      game")
    real = tmp_path / "real.contract"
    real.write_text(messy)
    real.chmod(0o640)
    link = tmp_path / "link.contract"
    link.symlink_to(real)
    proc = cli("fmt", "--write", link)
    assert proc.returncode == 1 and f"cannot write {link}: it is a symbolic link" in proc.stderr
    assert link.is_symlink() and real.read_text() == messy
    assert cli("fmt", "--write", real).returncode == 0
    assert real.read_text() == WORKED.read_text() and stat.S_IMODE(real.stat().st_mode) == 0o640
    locked = tmp_path / "locked.contract"
    locked.write_text(messy)
    locked.chmod(0o444)
    proc = cli("fmt", "--write", locked)
    assert proc.returncode == 1 and "read-only" in proc.stderr and locked.read_text() == messy
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_events_out_names_stay_inside_the_directory(tmp_path):
    contract = tmp_path / "evil.contract"
    contract.write_text((ROOT / "tests" / "verify" / "starved.contract").read_text()
                        .replace('contract "starved"', 'contract "../../escaped"', 1))
    out = tmp_path / "events"
    proc = cli("verify", contract, "--env", "1", "--events-out", out)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written and all(name.startswith("escaped.cashflow") for name in written)
    assert not (tmp_path.parent / "escaped.cashflow.best_case.jsonl").exists()


def test_control_and_bidi_characters_in_names_are_refused_and_never_printed_raw(tmp_path):
    contract = tmp_path / "bidi.contract"
    contract.write_text(SWAP.read_text().replace('contract "board-24-swap"', 'contract "swap\u202egnp.exe"', 1))
    proc = cli("check", contract)
    assert proc.returncode == 1 and "E107" in proc.stderr and "U+202E" in proc.stderr
    assert "\u202e" not in proc.stderr


# --- 12: unwritable outputs and bad options ---------------------------------------------------------

@pytest.fixture
def not_a_dir(tmp_path) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return blocker / "sub"


@pytest.mark.parametrize("args", [
    ["run", WORKED, "--env", "1", "--supplier", "re", "--log", "{bad}/run.jsonl"],
    ["run", SWAP, "--board", "24", "--log", "{bad}/run.jsonl"],
    ["verify", ROOT / "tests" / "verify" / "starved.contract", "--env", "1", "--events-out", "{bad}/events"],
    ["ctbench", "show", "3", "--png", "{bad}/board.png"],
    ["solve", WORKED, "--env", "1", "--no-cache", "--plot", "{bad}/s.png"],
    ["translate", ROOT / "tests" / "nl" / "01-plain-lists.txt", "-o", "{bad}/out.contract", "--cache", "{tmp}/c.db"],
    ["ctbench", "sweep", "--boards", "1", "--out", "{bad}/sweep"],
    ["translate", ROOT / "tests" / "nl" / "01-plain-lists.txt", "--cache", "{bad}/c.db"],
])
def test_unwritable_outputs_are_one_line(tmp_path, not_a_dir, args):
    args = [str(a).replace("{bad}", str(not_a_dir)).replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "a-file/sub" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
    failure = one_json_failure(cli(*args, "--json", cwd=tmp_path)) if args[0] != "ctbench" or args[1] != "show" else None
    assert failure is None or "a-file/sub" in failure["error"]


@pytest.mark.parametrize("args", [
    ["run", WORKED, "--env", "1", "--seed", "-1"],
    ["ctbench", "sweep", "--boards", "1", "--seed", "-5"],
    ["ctbench", "sweep", "--boards", "1", "--workers", "-1"],
    ["ctbench", "sweep", "--boards", "1", "--workers", "0"],
    ["run", WORKED, "--env", "1", "--board", "3"],
    ["run", SWAP, "--board", "24", "--env", "1"],
    ["verify", WORKED, "--board", "3"],
    ["verify", SWAP, "--env", "1"],
    ["render", SWAP, "--setting", "hotel"],
    ["fmt", "--check", "--write", WORKED],
    ["no-such-command"],
])
def test_options_that_do_not_apply_are_usage_errors(tmp_path, args):
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    one_json_failure(cli(*args, "--json", cwd=tmp_path), code=2)


# --- 13: --json on every failure -------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["check", "{tmp}/missing.contract"],
    ["run", "{tmp}/missing.contract", "--env", "1"],
    ["run", WORKED, "--env", "9"],
    ["solve", SWAP, "--env", "1"],
    ["verify", ROOT / "tests" / "invalid" / "tile-off-board.contract"],
    ["trace", WORKED, "{tmp}/missing.jsonl"],
    ["metrics", "{tmp}/missing.jsonl"],
    ["ctbench", "sweep", "--boards", "99"],
    ["ctbench", "boards", "--no-such-option"],
])
def test_every_failure_under_json_is_one_object_on_stdout(tmp_path, args):
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli(*args, "--json", cwd=tmp_path)
    payload = one_json_failure(proc, code=proc.returncode)
    assert proc.returncode in (1, 2)
    if "tile-off-board" in args[1]:
        assert payload["diagnostics"][0]["code"] == "E601"


def test_an_interrupted_sweep_ends_the_external_agents_its_workers_started(tmp_path):
    """The parent ends its workers with SIGTERM; each worker takes its agents with it (they sat in a game that
    would never ask again, orphaned, for as long as they cared to run)."""
    pids = tmp_path / "pids"
    agent = tmp_path / "stuck"
    agent.write_text(f"#!/bin/sh\nread line\necho $$ >> {pids}\nexec sleep 300\n")
    agent.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "contractlang", "ctbench", "sweep", "--boards", "1,2", "--red",
                             f"cmd:{agent}", "--blue", "planner", "--out", str(tmp_path / "s"), "--workers", "2",
                             "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and \
                len(pids.read_text().split() if pids.exists() else []) < 2:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and interrupted(stdout)
    stuck = [int(pid) for pid in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_running(pid) for pid in stuck):
        time.sleep(0.05)
    assert len(stuck) == 2 and not any(_running(pid) for pid in stuck)


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _sweep_under_way(out: Path, boards: str, preexec_fn=None) -> tuple[subprocess.Popen, Path]:
    """A 2-worker `ctbench sweep` into `out`, returned once its first game is written."""
    proc = subprocess.Popen([sys.executable, "-m", "contractlang", "ctbench", "sweep", "--boards", boards, "--out",
                             str(out), "--workers", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, preexec_fn=preexec_fn)
    games = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (games.exists() and games.stat().st_size > 0):
        time.sleep(0.05)
    return proc, games


@pytest.mark.parametrize("inherited", [
    lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}),
    lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
], ids=["blocked", "ignored"])
def test_ctrl_c_reaches_a_run_started_with_sigint_blocked_or_ignored(tmp_path, inherited):
    """A blocked mask and an ignored SIGINT both survive exec, and Python keeps them, so a command started by
    such a process — as something in a full pytest-xdist run is — once finished its work and exited 0 after
    Ctrl-C. The CLI unblocks SIGINT and SIGTERM and restores the default Ctrl-C handler on start."""
    proc, _ = _sweep_under_way(tmp_path / "sweep", ",".join(str(i) for i in range(30)), inherited)
    assert proc.poll() is None, "the sweep should still be running"
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130 and interrupted(stdout)
