"""Every reader is capped (issues #15, #30 and #49): endless devices, pipes, deep JSON, contracts of megabytes or of
twenty thousand errors, a crafted DP cache member, a live directory tree and an agent writing garbage each give
one line, in bounded memory and time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tests.hardening.hostile import LOGS, SWAP, WORKED, agent, capped_cli, cli, ended
from tests.helpers import assert_each_fails_in_one_line, run_cli

pytestmark = pytest.mark.e2e  # commands in memory-capped processes, on devices, pipes and live trees


@pytest.mark.parametrize(
    "command, cap", [(["check"], 1), (["trace", WORKED], 64), (["metrics"], 64), (["translate"], 1), (["fmt"], 1)]
)
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


DEEP = "[" * 100000 + "]" * 100000


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
        # a store that is a link is refused before a byte of it is read (not "more than 64 MiB")
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
                np.lib.format.write_array_header_1_0(claim, {"descr": "<i2", "fortran_order": False, "shape": (2**42,)})
                crafted.writestr(name, claim.getvalue() + data[len(header) :])
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


def test_an_agent_writing_garbage_ends_its_game_in_one_line(tmp_path):
    cases = [
        (
            ("run", SWAP, "--board", "24", "--red", agent(tmp_path, "binary", r"printf '\377\376garbage\n'; sleep 5")),
            "answer to request 1 is not UTF-8 text",
        ),
        # the endless writer is the script's child, which outlived the killed script and filled memory before
        (
            (
                "run",
                SWAP,
                "--board",
                "24",
                "--red",
                agent(tmp_path, "endless", "cat /dev/zero & echo $! >> cat.pid; wait"),
            ),
            "answer to request 1 is longer than 1 MiB",
        ),
        (
            ("run", SWAP, "--board", "24", "--red", agent(tmp_path, "deep", f"echo '{'[' * 5000}'; sleep 5")),
            "answer to request 1 is not JSON",
        ),
    ]
    start = time.monotonic()
    # in this process: an answer is read at most 1 MiB at a time, so even the endless agent cannot fill memory
    assert_each_fails_in_one_line(lambda *args: cli(*args, cwd=tmp_path, timeout=60), cases)
    assert time.monotonic() - start < 60  # never the 60 s reply timeout: the pump thread no longer dies
    for pid in (tmp_path / "cat.pid").read_text().split():  # one per run of the endless case
        assert ended(int(pid), 5), f"the endless agent's child {pid} is still writing"


def test_twenty_thousand_errors_print_in_linear_time(tmp_path):
    """Each diagnostic split the whole source again to show its line: 20,000 errors in a 480 KB file took
    seven minutes to print."""
    many = tmp_path / "many.contract"
    many.write_text(WORKED.read_text().replace("on breach", "  prices { pizza: $10 }\n" * 20000 + "on breach"))
    proc = run_cli("check", many, timeout=120)
    assert proc.returncode == 1 and proc.stderr.count("error[E104]") == 20000 and "Traceback" not in proc.stderr


def test_a_contract_of_megabytes_is_refused_at_once(tmp_path):
    """The parser reads about 60 KB a second: a 5 MB contract kept every command busy for minutes."""
    big = tmp_path / "big.contract"
    big.write_text(WORKED.read_text().replace("on breach", "  assert total pay == $90\n" * 200000 + "on breach"))
    prose = tmp_path / "prose.txt"
    prose.write_text("The caterer delivers 1 pizza in week 2. " * 50000)
    start = time.monotonic()
    assert_each_fails_in_one_line(
        run_cli,
        [
            (("check", big), f"{big}: more than 1 MiB; not read"),
            (("fmt", big), f"{big}: more than 1 MiB; not read"),
            (("run", big, "--env", "1"), f"{big}: more than 1 MiB; not read"),
            (("negotiate", "--env", "1", "--candidates", big), f"{big}: more than 1 MiB; not read"),
            (("translate", prose), f"{prose}: more than 1 MiB; not read"),
        ],
    )
    assert time.monotonic() - start < 60


def test_import_of_a_live_tree_is_one_line():
    """/proc changes while it is walked: a process directory that vanished was an exit 3 (FileNotFoundError)."""
    proc = run_cli("ctbench", "import", "/proc", "--out", "/nonexistent/runs.jsonl", timeout=300)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: ")
    assert "internal error" not in proc.stderr
