"""What `contractlang view` (and `trace`, `cl.load`, `cl.check`) read, as an attacker lays it out: pipes, endless or
huge sparse files as stores, tables and a log header's contract; records with numbers no JSON reader takes or of the
wrong type; games played from Python; a bundle over a folder that is not one. Each is one line (or one line on the
page), the rest loads, and nothing hangs."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

import contractlang as cl
from contractlang.api.view.site import MARKER, Viewer, bundle
from contractlang.files import FileError
from tests.hardening.hostile import WORKED, cli
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e  # whole games and commands

HUGE = 12 * 2**30  # a sparse file: no disk used, and reading it would take minutes and gigabytes


@pytest.fixture(scope="module")
def record() -> dict:
    done = run_cli("run", WORKED, "--env", "5", "--customer", "random", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


def sparse(path: Path) -> Path:
    with path.open("wb") as handle:
        handle.truncate(HUGE)
    return path


def strict(text: str):
    """JSON as a browser reads it: NaN and Infinity are no JSON."""

    def refuse(constant):
        raise AssertionError(f"{constant} in the site's JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_pipe_or_a_huge_file_as_the_viewed_path_is_one_line(tmp_path, fifo):
    cases = [
        (fifo, f"{fifo}: is a pipe, not a file"),
        (sparse(tmp_path / "big.jsonl"), "more than 1024 MiB; not read"),
        (Path("/dev/zero"), "no games, tables or figures found"),
    ]
    for path, message in cases:
        done = cli("view", path, "--bundle", tmp_path / "site", timeout=60)
        assert done.returncode == 1 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1, path
    assert not (tmp_path / "site").exists()


def test_pipes_and_huge_files_in_a_folder_are_listed_as_not_read_and_the_rest_loads(tmp_path, record):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "good.jsonl").write_text(json.dumps(record) + "\n")
    for name in ("runs.jsonl", "tables.md", "summary.json"):
        os.mkfifo(folder / name)
    sparse(folder / "store.jsonl")
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    done = cli("view", folder, "--bundle", tmp_path / "site", "--workers", "1", timeout=120)
    assert done.returncode == 0, done.stderr
    index = strict((tmp_path / "site" / "data" / "index.json").read_text())
    assert index["games"] == 1 and index["root"] == "out"
    assert index["problems"] == [
        "runs.jsonl: is a pipe, not a file; not read (save what it carries to a file first)",
        "store.jsonl: more than 1024 MiB; not read (is it the file you meant?)",
        "summary.json: is a pipe, not a file; not read (save what it carries to a file first)",
        "tables.md: is a pipe, not a file; not read (save what it carries to a file first)",
        "zero.jsonl: a link to a file outside the viewed folder; not read",
    ]


@pytest.mark.parametrize("kind", ["pipe", "huge", "device"])
def test_a_log_headers_contract_that_is_no_file_to_read_is_one_line_in_trace_and_view(tmp_path, kind):
    target = {"pipe": tmp_path / "c.contract", "huge": tmp_path / "c.contract", "device": Path("/dev/zero")}[kind]
    if kind == "pipe":
        os.mkfifo(target)
    elif kind == "huge":
        sparse(target)
    log = tmp_path / "g.jsonl"
    assert run_cli("run", WORKED, "--env", "5", "--customer", "random", "--log", log).returncode == 0
    lines = log.read_text().splitlines(keepends=True)
    header = {k: v for k, v in json.loads(lines[0]).items() if k != "source"}
    log.write_text(json.dumps({**header, "contract": str(target)}) + "\n" + "".join(lines[1:]))
    why = "is a pipe, not a file" if kind == "pipe" else "more than 1 MiB; not read"
    for args in (("trace", log), ("view", log, "--bundle", tmp_path / "site")):
        done = cli(*args, timeout=60)
        assert done.returncode == 1 and f"the header's contract {target} cannot be read" in done.stderr, args
        assert why in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_cl_load_and_check_refuse_pipes_devices_and_huge_files_at_once(tmp_path, fifo):
    huge = sparse(tmp_path / "big.contract")
    for path, why in ((fifo, "is a pipe"), (huge, "more than 1 MiB"), (Path("/dev/zero"), "more than 1 MiB")):
        for call in (cl.load, lambda p: cl.check(Path(p))):
            result: list[BaseException] = []
            worker = threading.Thread(target=_capture, args=(result, call, path), daemon=True)
            worker.start()
            worker.join(60)
            assert not worker.is_alive(), path  # never waits on a pipe nor reads gigabytes
            assert isinstance(result[0], FileError) and why in str(result[0]), (path, result)


def _capture(result: list, call, path) -> None:
    try:
        call(path)
    except BaseException as exc:  # the test asserts which
        result.append(exc)
    else:
        result.append(None)


def test_bad_records_are_listed_as_bad_with_why_and_the_rest_load(tmp_path, record):
    """NaN and Infinity are what Python's json writes for float('nan') and float('inf'); a browser's JSON.parse
    refuses them, and with them the whole file."""
    bad = {
        "NaN utility": ({**record, "u_customer": float("nan")}, "u_customer: NaN is not a finite number"),
        "Infinity utility": ({**record, "u_supplier": float("inf")}, "u_supplier: Infinity is not a finite number"),
        "infinite seed": ({**record, "seed": float("-inf")}, "seed: -Infinity is not an integer"),
        "non-integer seed": ({**record, "seed": 1.5}, "seed: 1.5 is not an integer"),
        "string utility": ({**record, "u_customer": "a lot"}, 'u_customer: "a lot" is not a finite number'),
        "no env": ({**record, "env": None}, "env: null is not an integer"),
        "string env": ({**record, "env": "5"}, 'env: "5" is not an integer'),
    }
    store = tmp_path / "out" / "runs.jsonl"
    store.parent.mkdir()
    store.write_text("".join(json.dumps(r) + "\n" for r in [record, *(r for r, _ in bad.values()), record]))
    site = tmp_path / "site"
    done = cli("view", store.parent, "--bundle", site, "--workers", "1", timeout=300)
    assert done.returncode == 0, done.stderr
    index = strict((site / "data" / "index.json").read_text())
    assert index["games"] == 2
    problems = index["problems"]
    assert len(problems) == len(bad)
    for line, (_, why) in enumerate(bad.values(), start=2):
        assert f"runs.jsonl:{line}: not listed: {why}" in problems
    for path in site.rglob("*.json"):
        strict(path.read_text())


def test_a_nan_inside_a_listed_game_makes_its_page_say_so_not_the_site_fail(tmp_path, record):
    weeks = [dict(w) for w in record["weeks"]]
    weeks[0]["value"] = float("nan")
    store = tmp_path / "runs.jsonl"
    store.write_text(json.dumps({**record, "weeks": weeks}) + "\n")
    viewer = Viewer(tmp_path, live=False)
    page = viewer.game(viewer.index.rows[0].id)
    from contractlang.api.view.site import site_json

    strict(site_json(page))


def python_played(record: dict) -> dict:
    """A job-store line of a game played from Python (`cl.experiments.performance(agent=Skimper)`): the store
    names the agent by its class's name, which no spec resolves, and keeps no events."""
    run = {k: v for k, v in record.items() if k != "trajectory"}
    job = {
        "contract": record["contract_ir"],
        "env": record["env"],
        "seed": record["seed"],
        "role": "supplier",
        "counterparty": "random",
        "agent": "skimper",
        "setting": None,
    }
    return {"job": job, "run": {**run, "supplier": "skimper", "log": []}}


def test_a_game_played_from_python_opens_with_a_plain_line_and_the_bundle_finishes(tmp_path, record):
    store = tmp_path / "out" / "jobs" / "performance.jsonl"
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps(python_played(record)) + "\n" + json.dumps(record) + "\n")
    site = tmp_path / "site"
    done = cli("view", tmp_path / "out", "--bundle", site, "--workers", "1", timeout=300)
    assert done.returncode == 0 and "1 game(s) could not be shown" in done.stdout, done.stdout + done.stderr
    page = strict((site / "data" / "game" / "g0-1.json").read_text())
    assert page["error"] == (
        "the record keeps no events and the game cannot be rebuilt here: unknown supplier policy 'skimper' (an "
        "agent played from Python is known only to the program that played it; a `py:` spec can be rebuilt)"
    )
    row = strict((site / "data" / "list" / "0.json").read_text())[0]
    assert (row["agent"], row["outcome"], row["first_breach"]) == ("skimper", "breach", "customer")
    assert row["utility"] == record["u_supplier"] and "kind" in strict(
        (site / "data" / "game" / "g0-2.json").read_text()
    )


def test_a_bundle_replaces_only_a_folder_it_wrote(tmp_path, record):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "g.jsonl").write_text(json.dumps(record) + "\n")
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "data" / "index.json").write_text("{}")
    (project / "IMPORTANT-NOTES.txt").write_text("keep me")
    (project / "src" / "main.py").write_text("print('keep me')")
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    done = cli("view", tmp_path / "runs", "--bundle", project, "--workers", "1")
    assert done.returncode == 1 and "it exists and is not a viewer bundle" in done.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before
    site = tmp_path / "site"
    viewer = Viewer(tmp_path / "runs", live=False)
    bundle(viewer, site, workers=1)
    assert (site / MARKER).is_file()
    (site / "stale.txt").write_text("from the last bundle")
    bundle(viewer, site, workers=1)
    assert not (site / "stale.txt").exists() and (site / "data" / "game" / "g0-1.json").is_file()
    (site / MARKER).unlink()
    (site / MARKER).symlink_to(project / "IMPORTANT-NOTES.txt")  # a marker must be the viewer's own file
    with pytest.raises(FileError, match="not a viewer bundle"):
        bundle(viewer, site, workers=1)


def test_the_shipped_set_named_by_its_folder_is_never_written_into():
    from contractlang.api.experiments import DEFAULT_OUT, output_dir
    from games.experiments.synth import SHIPPED

    assert output_dir(None, SHIPPED, "rational") == DEFAULT_OUT / "rational"
    assert output_dir(None, str(SHIPPED) + "/", "performance") == DEFAULT_OUT / "performance"
    assert output_dir(None, "mine", "rational") == Path("mine")
