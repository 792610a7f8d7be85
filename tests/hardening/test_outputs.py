"""Outputs are written safely (issues #15, #30 and #49): never through a link, modes kept, read-only files and
unwritable folders refused in one line, names kept inside the directory, and a full disk or device one line
that leaves only whole lines behind."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hardening.hostile import SWAP, WORKED, cli, one_json_failure
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e  # whole commands onto full disks and devices, in real processes


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
    contract.write_text(
        (ROOT / "tests" / "verify" / "starved.contract")
        .read_text()
        .replace('contract "starved"', 'contract "../../escaped"', 1)
    )
    out = tmp_path / "events"
    proc = cli("verify", contract, "--env", "1", "--events-out", out)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written and all(name.startswith("escaped.cashflow") for name in written)
    assert not (tmp_path.parent / "escaped.cashflow.best_case.jsonl").exists()


@pytest.fixture
def not_a_dir(tmp_path) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return blocker / "sub"


@pytest.mark.parametrize(
    "args",
    [
        ["run", WORKED, "--env", "1", "--supplier", "re", "--log", "{bad}/run.jsonl"],
        ["run", SWAP, "--board", "24", "--log", "{bad}/run.jsonl"],
        ["verify", ROOT / "tests" / "verify" / "starved.contract", "--env", "1", "--events-out", "{bad}/events"],
        ["ctbench", "show", "3", "--png", "{bad}/board.png"],
        ["solve", WORKED, "--env", "1", "--no-cache", "--plot", "{bad}/s.png"],
        [
            "translate",
            ROOT / "tests" / "nl" / "01-plain-lists.txt",
            "-o",
            "{bad}/out.contract",
            "--cache",
            "{tmp}/c.db",
        ],
        ["ctbench", "sweep", "--boards", "1", "--out", "{bad}/sweep"],
        ["translate", ROOT / "tests" / "nl" / "01-plain-lists.txt", "--cache", "{bad}/c.db"],
    ],
)
def test_unwritable_outputs_are_one_line(tmp_path, not_a_dir, args):
    args = [str(a).replace("{bad}", str(not_a_dir)).replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "a-file/sub" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
    failure = (
        one_json_failure(cli(*args, "--json", cwd=tmp_path)) if args[0] != "ctbench" or args[1] != "show" else None
    )
    assert failure is None or "a-file/sub" in failure["error"]


@pytest.fixture
def full_disk(tmp_path) -> Path:
    """A 48 KiB tmpfs: a sweep or synth into it runs out of space."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(mount)], capture_output=True).returncode
        != 0
    ):
        # only a real full file system gives ENOSPC at the point under test; the suite runs as root, as CI does
        pytest.fail("cannot mount a 48 KiB tmpfs for the full-disk cases: the whole suite runs as root (.ci/run does)")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_sweep_on_a_full_disk_is_one_line_and_leaves_whole_lines(full_disk):
    out = full_disk / "s"
    proc = cli("ctbench", "sweep", "--boards", "1,2,3", "--out", out, "--workers", "2", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"ok": False, "error": f"cannot write {out}/games.jsonl: No space left on device"}
    lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    assert lines and all(line.endswith(b"\n") and json.loads(line) for line in lines)
    assert sorted(p.name for p in out.iterdir()) == ["games.jsonl"]  # no lock, no temporary file


def test_synth_on_a_full_disk_leaves_no_empty_store(full_disk):
    (full_disk / "filler").write_bytes(bytes(40 * 1024))
    out = full_disk / "syn"
    proc = cli("synth", "--out", out, "--search-envs", "1", "--rhos", "1.0", "--starts", "1", "--workers", "1")
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: cannot write {out}/jobs/search.jsonl")
    assert [p.name for p in (out / "jobs").iterdir()] == []


@pytest.mark.parametrize(
    "args",
    [
        ["check", WORKED],
        ["check", "--json", WORKED],
        ["ctbench", "boards", "--json"],
        ["render", WORKED],
        ["ctbench", "show", "3"],
        ["check", "--json", "missing"],
    ],
    ids=["check", "check-json", "boards-json", "render", "show", "failure-json"],
)
def test_stdout_on_a_full_device_is_one_line_exit_1(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "contractlang", *map(str, args)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["error: cannot write the output: No space left on device"]


def test_a_closed_stdout_is_one_line_and_what_agents_write_there_reaches_no_file(tmp_path):
    """Started with stdout closed (`>&-`): a traceback at start; and the next file a run opens takes descriptor
    1, so what an agent writes to its stdout landed in that file (a game log, a job store)."""
    (tmp_path / "talk.py").write_text(
        "import os\n\n"
        "class Customer:\n"
        "    name = 'talk'\n\n"
        "    def act(self, observation):\n"
        "        os.write(1, b'the agent talks\\n')\n"
        "        return {'kind': 'pay', 'amount': min(observation.payment_due, observation.remaining_budget)}\n"
    )
    log = tmp_path / "game.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "contractlang", "run", str(WORKED), "--env", "1"]
        + ["--customer", "py:talk.py:Customer", "--log", str(log)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1] == "error: cannot write the output: Bad file descriptor"
    assert "the agent talks" in proc.stderr and "the agent talks" not in log.read_text()
