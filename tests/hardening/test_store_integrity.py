"""Issues #48 and #49: job stores and outputs through the real CLI — never written through a link, wrong kinds of
path as one line, every stored line checked on read, the same bytes from two workers as from one, and workers
that die with their parent."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import time
from operator import attrgetter
from pathlib import Path

import pytest

from contractlang.files import sealed_lines
from games.experiments.synth import SHIPPED, read_manifest
from tests.hardening.hostile import ended, stuck_agents_sweep
from tests.helpers import run_cli, run_process

pytestmark = pytest.mark.e2e  # stores written by workers in real processes, and SIGKILL


def sweep(out: Path, boards: str = "1", workers: int = 1):
    return run_cli("ctbench", "sweep", "--boards", boards, "--out", out, "--workers", workers, "--json")


def fails_in_one_line(proc, *parts: str) -> str:
    """The one error line of a failed command (exit 1), which must contain every part."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    error = json.loads(proc.stdout)["error"] if proc.stdout.strip() else lines[-1].removeprefix("error: ")
    assert "Traceback" not in proc.stderr and all(p in error for p in parts), error
    return error


def shipped_copy(tmp_path: Path, rational: bool = True) -> Path:
    """The shipped set's contracts and manifest, and its rational games' store (so nothing is played)."""
    copy = tmp_path / "set"
    shutil.copytree(SHIPPED / "contracts", copy / "contracts")
    shutil.copy(SHIPPED / "manifest.json", copy / "manifest.json")
    (copy / "jobs").mkdir()
    if rational:
        shutil.copy(SHIPPED / "jobs" / "rational.jsonl", copy / "jobs" / "rational.jsonl")
    return copy


# --- writes never through links ------------------------------------------------------------------------------


def test_no_output_store_or_database_is_written_through_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b'{"only line, without its end"')  # once "repaired" as a cut last line
    cases = {}
    for name in ("games.jsonl", "summary.json", "games.jsonl.lock"):
        out = tmp_path / name.replace(".", "-")
        out.mkdir()
        (out / name).symlink_to(victim)
        cases[name] = sweep(out)
    for name, proc in cases.items():
        fails_in_one_line(proc, name, "symbolic link")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere)
    fails_in_one_line(sweep(tmp_path / "linked"), "linked: it is a symbolic link")
    recordings = tmp_path / "llm.sqlite"
    recordings.symlink_to(victim)
    proc = run_cli(
        "experiment",
        "performance",
        shipped_copy(tmp_path),
        "--agent",
        "llm:anthropic/claude-haiku-4-5",
        "--recordings",
        recordings,
        env={**os.environ, "ANTHROPIC_API_KEY": "sk-ant-" + "x" * 40},
    )
    fails_in_one_line(proc, "llm.sqlite: it is a symbolic link")
    report = shipped_copy(tmp_path / "report")
    (report / "performance").mkdir()
    (report / "performance" / "figure4.png").symlink_to(victim)
    fails_in_one_line(
        run_cli("experiment", "performance", report, "--agent", "rcc", "--json"), "figure4.png: it is a symbolic link"
    )
    assert not (report / "jobs" / "performance.jsonl").exists()  # refused before any game
    assert victim.read_bytes() == b'{"only line, without its end"' and list(elsewhere.iterdir()) == []


def test_a_read_only_output_is_left_as_it_is_and_a_writable_one_keeps_its_mode(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "summary.json").write_text("[]\n")
    (locked / "summary.json").chmod(0o444)
    fails_in_one_line(sweep(locked), "summary.json: the file is read-only")
    assert (locked / "summary.json").read_text() == "[]\n"
    assert stat.S_IMODE((locked / "summary.json").stat().st_mode) == 0o444
    assert not (locked / "games.jsonl").exists()  # refused before any game
    kept = tmp_path / "kept"
    assert sweep(kept).returncode == 0
    summary = (kept / "summary.json").read_bytes()
    (kept / "summary.json").chmod(0o640)
    assert json.loads(sweep(kept).stdout)["played"] == 0
    assert stat.S_IMODE((kept / "summary.json").stat().st_mode) == 0o640
    assert (kept / "summary.json").read_bytes() == summary and not [p for p in kept.iterdir() if ".tmp" in p.name]


# --- wrong kinds of path -------------------------------------------------------------------------------------


def test_a_file_where_a_folder_belongs_and_a_folder_where_a_file_belongs_are_one_line(tmp_path):
    for folder in ("rational", "performance"):
        copy = shipped_copy(tmp_path / folder)
        (copy / folder).write_text("")
        args = ("experiment", folder, copy, "--json", *(("--agent", "rcc") if folder == "performance" else ()))
        fails_in_one_line(run_cli(*args), f"{copy / folder}: it is a file, not a folder")
    negotiation = tmp_path / "negotiate"
    negotiation.mkdir()
    (negotiation / "negotiation").write_text("")
    fails_in_one_line(
        run_cli("negotiate", "--env", "1", "--games", "1", "--out", negotiation, "--json"),
        "negotiation: it is a file, not a folder",
    )
    summary = tmp_path / "sweep"
    (summary / "summary.json").mkdir(parents=True)
    fails_in_one_line(sweep(summary), "summary.json: it is a directory, not a file")


def test_a_lock_that_is_a_directory_is_one_line_and_never_blamed_on_the_dp_cache(tmp_path):
    copy = shipped_copy(tmp_path)
    (copy / "jobs" / "performance.jsonl.lock").mkdir()
    fails_in_one_line(
        run_cli("experiment", "performance", copy, "--agent", "rcc", "--json"),
        "performance.jsonl.lock: the lock is a directory",
    )
    out = tmp_path / "negotiate"
    (out / "jobs" / "negotiations.jsonl.lock").mkdir(parents=True)
    error = fails_in_one_line(
        run_cli("negotiate", "--env", "1", "--games", "1", "--out", out, "--json"),
        "negotiations.jsonl.lock: the lock is a directory",
    )
    assert "DP" not in error


# --- every stored line checked -------------------------------------------------------------------------------


def test_an_edited_repeated_swapped_or_removed_line_is_named_and_an_old_store_must_be_sealed(tmp_path):
    out = tmp_path / "sweep"
    assert sweep(out).returncode == 0
    games = out / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    assert len(lines) == 8 and all(len(json.loads(line)["sha256"]) == 16 for line in lines)
    flipped = lines[2].replace(b'"rounds": ', b'"rounds": 1', 1)
    assert flipped != lines[2]
    unsealed = [
        json.dumps({k: v for k, v in json.loads(line).items() if k != "sha256"}).encode() + b"\n" for line in lines
    ]
    for tampered, where, why in (
        ([*lines[:2], flipped, *lines[3:]], 3, "does not match its check"),
        ([lines[0], lines[2], lines[1], *lines[3:]], 2, "does not match its check"),
        ([*lines[:2], lines[1], *lines[2:]], 3, "does not match its check"),
        ([lines[0], *lines[2:]], 2, "does not match its check"),
        (unsealed, 1, "without its check"),
    ):
        games.write_bytes(b"".join(tampered))
        fails_in_one_line(sweep(out), f"games.jsonl:{where}: ", why)
        assert games.read_bytes() == b"".join(tampered)  # never rewritten
        if why != "without its check":  # the same store read as a runs file
            fails_in_one_line(run_cli("ctbench", "report", games, "--json"), f"games.jsonl:{where}: ", why)
    games.write_bytes(b"".join(unsealed))
    sealed = run_cli("seal", games, "--json")
    assert sealed.returncode == 0 and json.loads(sealed.stdout)["sealed"] == {str(games): 8}
    assert games.read_bytes() == b"".join(lines)
    assert json.loads(sweep(out).stdout)["played"] == 0


def test_a_flipped_number_in_the_shipped_rational_store_is_named(tmp_path):
    copy = shipped_copy(tmp_path)
    store = copy / "jobs" / "rational.jsonl"
    lines = store.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4].replace(b'"u_customer": ', b'"u_customer": 9', 1)
    store.write_bytes(b"".join(lines))
    fails_in_one_line(
        run_cli("experiment", "rational", copy, "--json"), "rational.jsonl:5: ", "does not match its check"
    )


# --- the same bytes from any number of workers ---------------------------------------------------------------


def test_two_workers_write_the_bytes_one_worker_and_a_resumed_run_write(tmp_path):
    runs = {}
    for name, workers in (("one", 1), ("two", 2), ("again", 2)):
        assert sweep(tmp_path / name, "1,2,3", workers).returncode == 0
        runs[name] = {f: (tmp_path / name / f).read_bytes() for f in ("games.jsonl", "summary.json")}
    assert runs["one"] == runs["two"] == runs["again"]
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    lines = runs["one"]["games.jsonl"].splitlines(keepends=True)
    (resumed / "games.jsonl").write_bytes(b"".join(lines[:7]) + lines[7][:50])  # interrupted in line 8
    assert json.loads(sweep(resumed, "1,2,3", 2).stdout)["played"] == len(lines) - 7
    assert (resumed / "games.jsonl").read_bytes() == runs["one"]["games.jsonl"]


def test_a_resumed_experiment_with_two_workers_writes_its_store_in_job_order(tmp_path):
    """The rational store without two Env 1 games, played now by two workers: the store is rewritten in the
    manifest's order whichever ends first, and the tables are the shipped ones byte for byte."""
    shipped = [json.loads(line) for line in (SHIPPED / "jobs" / "rational.jsonl").read_bytes().splitlines()]
    for record in shipped:
        del record["sha256"]
    env1 = [i for i, r in enumerate(shipped) if r["job"]["env"] == 1][:2]
    stores = []
    for name in ("first", "second"):
        copy = shipped_copy(tmp_path / name, rational=False)
        store = copy / "jobs" / "rational.jsonl"
        store.write_bytes(sealed_lines(r for i, r in enumerate(shipped) if i not in env1)[0])
        # a real process: forking workers from a test process whose compiled kernels started OpenMP threads aborts
        done = run_process("experiment", "rational", copy, "--workers", "2", "--json")
        assert done.returncode == 0 and json.loads(done.stdout)["played_now"] == 2, done.stderr
        assert (copy / "rational" / "tables.md").read_bytes() == (SHIPPED / "rational" / "tables.md").read_bytes()
        stores.append(store.read_bytes())
    assert stores[0] == stores[1]
    names = [json.loads(line)["job"]["contract"]["name"] for line in stores[0].splitlines()]
    assert names == [entry.name for entry in read_manifest(SHIPPED).contracts]


# --- workers die with their parent ---------------------------------------------------------------------------


def test_sigkill_of_the_main_process_ends_its_workers_and_their_agents(tmp_path):
    proc, pids = stuck_agents_sweep(tmp_path)
    workers: list[int] = []
    try:
        workers = [
            int(p)
            for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        ]
        agents = [int(p) for p in pids.read_text().split()]
        assert len(workers) == 2 and len(agents) == 2
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(ended(p) for p in [*workers, *agents]):
            time.sleep(0.05)
        left = [p for p in [*workers, *agents] if not ended(p)]
    finally:
        proc.kill()
        for pid in [*workers, *([int(p) for p in pids.read_text().split()] if pids.exists() else [])]:
            if not ended(pid):
                os.kill(pid, signal.SIGKILL)
    assert left == []


def test_a_store_keeps_its_records_as_text_and_gives_back_equal_records_in_its_order(tmp_path):
    """`JobStore.records` holds each record as its JSON (a run holds every record it stored): what it gives back
    equals what was stored, in the store's order, after a rewrite in another order and when read again."""
    from games.experiments.rational import RationalRecord
    from games.runner import JobStore, stored_records

    shipped = stored_records(SHIPPED / "jobs" / "rational.jsonl", RationalRecord, attrgetter("job"), "rational")
    records = list(shipped.values())[:6]

    def opened() -> JobStore:
        return JobStore(tmp_path / "s.jsonl", RationalRecord, attrgetter("job"), "rational")

    store = opened()
    try:
        for record in records:
            store.add(record)
        assert list(store.records) == [r.job for r in records] and len(store.records) == 6
        assert [store.records[r.job] for r in records] == records
        store.put_in_order([r.job for r in reversed(records)])
        assert [store.records[j] for j in store.records] == records[::-1]
    finally:
        store.close()
    again = opened()
    try:
        assert [again.records[j] for j in again.records] == records[::-1]
    finally:
        again.close()
