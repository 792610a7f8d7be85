"""The CLI as an attacker drives it, second round (issue #30): nothing is executed from a data file, every
reader is capped, records are held to the checker's rules, a full disk or a second run into one --out is one
line, requests are bounded, and exit 3 is left for bugs. Each case goes through the real CLI."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT, assert_each_fails_in_one_line, run_cli

EXAMPLES = ROOT / "examples"
WORKED = EXAMPLES / "worked-example-1.contract"
SWAP = EXAMPLES / "ctbench-board-24-swap.contract"
LOGS = ROOT / "tests" / "data" / "ctbench_logs"
DEEP = "[" * 100000 + "]" * 100000


def cli(*args, cwd: Path | None = None, timeout: float = 300):
    proc = run_cli(*map(str, args), cwd=cwd or ROOT, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def capped_cli(*args, cwd: Path, memory: int = 3 * 2**30, timeout: float = 120) -> subprocess.CompletedProcess:
    """`cli` in a process allowed `memory` bytes of address space: reading more than a capped input would
    fail it with a MemoryError (exit 3) instead of filling the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    proc = subprocess.run([sys.executable, "-m", "contractlang", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, preexec_fn=limit)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def agent(tmp_path: Path, name: str, body: str) -> str:
    """An external agent program (`cmd:…`) with the shell `body`."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return f"cmd:{path}"


# --- 2: every reader capped; pipes refused; deep JSON is bad input ----------------------------------

def test_endless_devices_pipes_and_deep_json_are_one_line_each(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.jsonl"
    deep.write_text(DEEP + "\n")
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "games.jsonl").symlink_to("/dev/zero")
    logs = tmp_path / "logs"
    shutil.copytree(LOGS, logs)
    event_log = next(logs.rglob("event_log_*.json"))
    event_log.unlink()
    event_log.symlink_to("/dev/zero")
    cases = [
        (("ctbench", "replay", "/dev/zero"), "/dev/zero:1: a line of more than 64 MiB; not read"),
        (("ctbench", "report", "/dev/zero"), "/dev/zero:1: a line of more than 64 MiB; not read"),
        (("ctbench", "sweep", "--boards", "1", "--out", sweep), "games.jsonl: it is a symbolic link"),
        (("ctbench", "import", logs, "--out", tmp_path / "runs.jsonl"), f"{event_log.name}: more than 64 MiB"),
        (("ctbench", "replay", fifo), f"{fifo}: is a pipe, not a file"),
        (("ctbench", "report", fifo), f"{fifo}: is a pipe, not a file"),
        (("check", fifo), f"{fifo}: is a pipe, not a file"),
        (("trace", WORKED, fifo), f"{fifo}: is a pipe, not a file"),
        (("metrics", fifo), f"{fifo}: is a pipe, not a file"),
        (("ctbench", "replay", deep), f"{deep}:1: not a JSON line"),
        (("ctbench", "report", deep), f"{deep}:1: not a JSON line"),
        (("metrics", deep), f"{deep}:1: not a run record (nested too deeply)"),
    ]
    start = time.monotonic()
    # the endless devices run in processes with capped memory; a pipe or deep JSON is refused before anything is
    # read into memory, so those rows run in this process (a start-up saved per row)
    assert_each_fails_in_one_line(lambda *args: capped_cli(*args, cwd=tmp_path), cases[:4])
    assert_each_fails_in_one_line(lambda *args: cli(*args, cwd=tmp_path, timeout=60), cases[4:])
    assert time.monotonic() - start < 300
    assert not (sweep / "games.jsonl.lock").exists()


def _crafted_cache(directory: Path, how: str) -> None:
    """Replace round 1 of the one table in `directory` by a member claiming 8 TiB (`huge`) or by 4 GiB of
    zeros that compress to under 20 MiB (`bomb`)."""
    path = next(directory.glob("*.npz"))
    with zipfile.ZipFile(path) as original:
        members = {info.filename: original.read(info) for info in original.infolist()}
    header = members["round1.npy"][: members["round1.npy"].index(b"\n") + 1]
    # level 1: 4 GiB of zeros deflate in a third of the default level's time, still to under 20 MiB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as crafted:
        for name, data in members.items():
            if name != "round1.npy":
                crafted.writestr(name, data)
            elif how == "huge":
                import io

                import numpy as np

                claim = io.BytesIO()
                np.lib.format.write_array_header_1_0(claim, {"descr": "<i2", "fortran_order": False,
                                                             "shape": (2**42,)})
                crafted.writestr(name, claim.getvalue() + data[len(header):])
            else:
                with crafted.open(name, "w", force_zip64=True) as member:
                    member.write(header)
                    for _ in range(256):
                        member.write(bytes(2**24))


@pytest.mark.slow
def test_a_crafted_dp_cache_member_is_never_allocated_or_inflated(tmp_path):
    """A cached table whose member claims an 8 TiB array (a MemoryError, exit 3, before) or inflates to 4 GiB
    (a zip bomb) is treated like any corrupt entry: solved afresh, in bounded memory."""
    cache = tmp_path / "dp"
    first = json.loads(cli("solve", WORKED, "--env", "1", "--cache-dir", cache, "--json").stdout)
    # a claim of 8 TiB can only fail at once, so it runs in this process; inflating 4 GiB takes a capped one
    for how, runner in (("huge", cli), ("bomb", capped_cli)):
        _crafted_cache(cache, how)
        proc = runner("solve", WORKED, "--env", "1", "--cache-dir", cache, "--json", cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stdout
        again = json.loads(proc.stdout)
        assert again["cached"] is False and again["p_sat"] == first["p_sat"]
    assert json.loads(cli("solve", WORKED, "--env", "1", "--cache-dir", cache, "--json").stdout)["cached"] is True


# --- 7: external agents writing garbage; workers that die ---------------------------------------------

def test_an_agent_writing_garbage_ends_its_game_in_one_line(tmp_path):
    cases = [
        (("run", SWAP, "--board", "24", "--red", agent(tmp_path, "binary", r"printf '\377\376garbage\n'; sleep 5")),
         "answer to request 1 is not UTF-8 text"),
        # the endless writer is the script's child, which outlived the killed script and filled memory before
        (("run", SWAP, "--board", "24", "--red",
          agent(tmp_path, "endless", "cat /dev/zero & echo $! >> cat.pid; wait")),
         "answer to request 1 is longer than 1 MiB"),
        (("run", SWAP, "--board", "24", "--red", agent(tmp_path, "deep", f"echo '{'[' * 5000}'; sleep 5")),
         "answer to request 1 is not JSON"),
    ]
    start = time.monotonic()
    # in this process: an answer is read at most 1 MiB at a time, so even the endless agent cannot fill memory
    assert_each_fails_in_one_line(lambda *args: cli(*args, cwd=tmp_path, timeout=60), cases)
    assert time.monotonic() - start < 60  # never the 60 s reply timeout: the pump thread no longer dies
    for pid in (tmp_path / "cat.pid").read_text().split():  # one per run of the endless case
        assert _ends_within(int(pid), 5), f"the endless agent's child {pid} is still writing"


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` is gone (or a zombie awaiting its parent) within `seconds`: a SIGKILL is not instant."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_sweep_whose_worker_dies_ends_in_one_line(tmp_path):
    killer = agent(tmp_path, "killer", "kill -9 $PPID; sleep 1")
    proc = cli("ctbench", "sweep", "--boards", "24,25", "--red", killer, "--blue", "planner", "--out",
               tmp_path / "s", "--workers", "2", timeout=60)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        "error: a worker process died in the middle of its jobs (killed, or out of memory); the finished jobs are "
        "kept, and a rerun runs the rest"]


# --- 4: a full disk -------------------------------------------------------------------------------

@pytest.fixture
def full_disk(tmp_path) -> Path:
    """A 48 KiB tmpfs: a sweep or synth into it runs out of space."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        # CI runs as root, so there the full-disk cases must run: a mount that fails is a failure, not a skip
        if os.environ.get("CI") == "true":
            pytest.fail("cannot mount a 48 KiB tmpfs for the full-disk cases (CI runs as root)")
        pytest.skip("mounting a tmpfs needs root; the full-disk cases run where it can (always under CI=true)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_sweep_on_a_full_disk_is_one_line_and_leaves_whole_lines(full_disk):
    out = full_disk / "s"
    proc = cli("ctbench", "sweep", "--boards", "1,2,3", "--out", out, "--workers", "2", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"ok": False, "error": f"cannot write {out}/games.jsonl: No space left on "
                                                             "device"}
    lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    assert lines and all(line.endswith(b"\n") and json.loads(line) for line in lines)
    assert sorted(p.name for p in out.iterdir()) == ["games.jsonl"]  # no lock, no temporary file


def test_synth_on_a_full_disk_leaves_no_empty_store(full_disk):
    (full_disk / "filler").write_bytes(bytes(40 * 1024))
    out = full_disk / "syn"
    proc = cli("synth", "--out", out, "--search-envs", "1", "--rhos", "1.0", "--starts", "1", "--workers", "1")
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: cannot write {out}/jobs/search.jsonl")
    assert [p.name for p in (out / "jobs").iterdir()] == []


# --- 5: two runs into one --out ---------------------------------------------------------------------

def test_a_second_sweep_into_the_same_out_refuses_at_once_and_a_stale_lock_is_taken_over(tmp_path):
    out = tmp_path / "s"
    first = subprocess.Popen([sys.executable, "-m", "contractlang", "ctbench", "sweep", "--boards",
                              ",".join(map(str, range(20))), "--out", str(out), "--workers", "1", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
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
            "another --out")
    finally:
        first.kill()
        first.communicate()
    assert lock.read_text() == f"{first.pid}\n"  # killed: its lock stays behind, naming a dead process
    proc = cli("ctbench", "sweep", "--boards", "1", "--out", out, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True and not lock.exists()


# --- 1, 3: run records never start a program, and are held to the checker's rules -----------------

@pytest.fixture(scope="module")
def run_record(tmp_path_factory) -> dict:
    """A real `run --json` record (RE vs RE: no DP table to solve)."""
    cwd = tmp_path_factory.mktemp("record")
    proc = cli("run", WORKED, "--env", "1", "--customer", "re", "--supplier", "re", "--json", cwd=cwd)
    return json.loads(proc.stdout)


def _records(tmp_path: Path, name: str, record: dict, **changes) -> Path:
    changed = json.loads(json.dumps(record))
    for key, value in changes.items():
        if key.startswith("ir_"):
            changed["contract_ir"][key[3:]] = value
        else:
            changed[key] = value
    path = tmp_path / f"{name}.jsonl"
    path.write_text(json.dumps(changed) + "\n")
    return path


def test_metrics_never_starts_a_program_a_record_names_unless_allowed(tmp_path, run_record):
    marker = tmp_path / "started"
    program = agent(tmp_path, "planted", f"touch {marker}")
    records = _records(tmp_path, "planted", run_record, supplier=program)
    assert_each_fails_in_one_line(cli, [(("metrics", records), f"would start the program {program!r} named in "
                                                               "them; pass --allow-commands to let it run")])
    assert not marker.exists()
    allowed = cli("metrics", records, "--allow-commands")
    assert allowed.returncode == 1 and "exited" in allowed.stderr and marker.exists()


def test_metrics_holds_records_to_the_checkers_rules(tmp_path, run_record):
    rollover = {**run_record["contract_ir"]["contingencies"], "rollover": {"max_deficit": 99}}
    cases = [
        (_records(tmp_path, "deficit", run_record, ir_contingencies=rollover),
         "(contract_ir: rollover max_deficit 99 is outside 0..2)"),
        (_records(tmp_path, "price", run_record, ir_prices=[-10, 5, 3]),
         "(contract_ir: price of pizza must not be negative)"),
        (_records(tmp_path, "huge", run_record, ir_prices=[10**12, 5, 3]), "(contract_ir: price of pizza is too large)"),
        (_records(tmp_path, "setting", run_record, ir_setting="nowhere"), "(contract_ir: setting: unknown setting"),
        (_records(tmp_path, "seed", run_record, seed=-1), "(seed: -1 is negative; seeds are 0 or more)"),
        (_records(tmp_path, "env", run_record, env=99), "(env: no environment 99; there are 1..6)"),
        (_records(tmp_path, "policy", run_record, customer="nobody"), "(customer: unknown policy 'nobody'"),
        # round 3: a record without its weeks gave the compliant utility of a game of no weeks
        (_records(tmp_path, "weeks", run_record, weeks=[]), "(weeks: a record holds weeks 1..11 in order"),
        (_records(tmp_path, "reversed", run_record, weeks=run_record["weeks"][::-1]),
         "(weeks: a record holds weeks 1..11 in order"),
        # round 4: JSON types are read as JSON has them; a lax read took `true` for seed 1 and "6" for a price
        (_records(tmp_path, "bool-seed", run_record, seed=True), "(seed: Input should be a valid integer"),
        (_records(tmp_path, "float-env", run_record, env=1.0), "(env: Input should be a valid integer"),
        (_records(tmp_path, "text-price", run_record, ir_prices=["6", 5, 3]),
         "(contract_ir: prices.0: Input should be a valid integer"),
    ]
    rows = [(("metrics", path), f"{path}:1: not a run record {message}") for path, message in cases]
    start = time.monotonic()
    # the first row once allocated 29.8 GiB, so it runs in a process with capped memory; the others are refused
    # by the same check and run in this process, which saves a start-up per row
    assert_each_fails_in_one_line(lambda *args: capped_cli(*args, cwd=tmp_path), rows[:1])
    assert_each_fails_in_one_line(lambda *args: cli(*args, cwd=tmp_path), rows[1:])
    assert time.monotonic() - start < 120  # refused before any replay


# --- 6, 8: bounded requests and empty list items are usage errors, before any work ------------------

@pytest.mark.parametrize("args", [
    ["ctbench", "sweep", "--boards", "1", "--repeats", str(10**12)],
    ["ctbench", "sweep", "--boards", ",".join(map(str, range(80))), "--repeats", "1000", "--agents",
     "planner:planner,planner:exploiter"],
    ["negotiate", "--env", "1", "--games", str(2**64)],
    ["synth", "--starts", str(10**12)],
    ["ctbench", "sweep", "--boards", "1,,2"],
    ["ctbench", "sweep", "--boards", ""],
    ["ctbench", "sweep", "--boards", "1", "--conditions", "none,"],
    ["ctbench", "sweep", "--boards", "1", "--modes", ",pfp"],
    ["negotiate", "--env", "1,,2"],
    ["synth", "--search-envs", ""],
    ["synth", "--rhos", "0.9,,0.5"],
], ids=["repeats", "games-in-all", "negotiate-games", "starts", "boards-gap", "boards-empty", "conditions-trailing",
        "modes-leading", "env-gap", "search-envs-empty", "rhos-gap"])
def test_unbounded_requests_and_empty_list_items_are_usage_errors(tmp_path, args):
    start = time.monotonic()
    proc = cli(*args, "--json", cwd=tmp_path)
    assert proc.returncode == 2 and json.loads(proc.stdout)["ok"] is False, proc.stdout
    assert time.monotonic() - start < 60 and list(tmp_path.iterdir()) == []  # nothing run, nothing written


# --- 4, 8: stdout on a full device ---------------------------------------------------------------

@pytest.mark.parametrize("args", [["check", WORKED], ["check", "--json", WORKED], ["ctbench", "boards", "--json"],
                                  ["render", WORKED], ["ctbench", "show", "3"], ["check", "--json", "missing"]],
                         ids=["check", "check-json", "boards-json", "render", "show", "failure-json"])
def test_stdout_on_a_full_device_is_one_line_exit_1(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "contractlang", *map(str, args)], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["error: cannot write the output: No space left on device"]


# --- 9: trace replays the log `run --board … --log` writes ----------------------------------------

def test_trace_replays_a_ctbench_run_log_and_names_a_game_log(tmp_path):
    log = tmp_path / "run.jsonl"
    assert cli("run", SWAP, "--board", "24", "--log", log).returncode == 0
    traced = json.loads(cli("trace", SWAP, log, "--json").stdout)
    assert traced["finished"] == ["red", "blue"] and traced["steps"][-1]["event"] == {"type": "game_end"}
    game_log = tmp_path / "game.jsonl"
    game_log.write_text(json.dumps({"type": "move_attempt", "round": 1, "player": "red", "tile": [0, 1],
                                    "tile_colour": "red", "holdings": {"red": {"red": 14}, "blue": {"blue": 14}}})
                        + "\n")
    assert_each_fails_in_one_line(cli, [(("trace", SWAP, game_log), f"{game_log}:1: a move_attempt with fields "
                                                                    "beyond the event's (round): a line of a game's "
                                                                    "own log")])


# --- 11: check decides closed asserts; verify --strict ----------------------------------------------

def test_check_refutes_a_false_closed_assert_and_verify_strict_exits_1(tmp_path):
    false = tmp_path / "false.contract"
    false.write_text(WORKED.read_text().replace("pizza 1,", "pizza 2,"))
    proc = cli("check", false)
    assert proc.returncode == 1 and "error[E703]: `total pay == total value` is false: the left side is $90, the " \
                                    "right side $140" in proc.stderr
    assert cli("check", WORKED).returncode == 0
    mismatch = ROOT / "tests" / "verify" / "mismatch.contract"
    assert cli("verify", mismatch).returncode == 0
    strict = cli("verify", mismatch, "--strict", "--json")
    assert strict.returncode == 1
    assert "refuted" in {c["status"] for c in json.loads(strict.stdout)["checks"]}
    assert cli("verify", WORKED, "--strict").returncode == 0
