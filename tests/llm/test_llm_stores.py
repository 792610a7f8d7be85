"""What the LLM layer keeps on disk (issues #30 item 3 and #33): recordings replayed offline and the translation
cache. A missing or damaged file is one line naming it, the cache keys on the endpoint, replies are capped where
they are kept and sent back, and a missing key never suggests a replay the command does not have."""

import json
import shutil
import sqlite3
import subprocess
import sys
import threading

import pytest

from contractlang.llm import REPLY_CAP, LlmSettings
from contractlang.translate import TranslationCache, translate_text
from tests.helpers import ROOT, run_cli
from tests.llm.test_llm_agents import KEY, CTBenchScript, env_without_key
from tests.llm_server import ScriptedServer, message

pytestmark = pytest.mark.e2e  # recordings and caches written by runs against scripted servers on 127.0.0.1


TEXT = (ROOT / "tests" / "nl" / "01-plain-lists.txt").read_text()


def cli(*args, key: str | None = KEY):
    return run_cli(*args, cwd=ROOT, env=env_without_key(**({"ANTHROPIC_API_KEY": key} if key else {})))


def one_line_error(proc, *needles) -> None:
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_translate_without_a_key_does_not_suggest_replay(tmp_path):
    proc = cli(
        "translate",
        "tests/nl/01-plain-lists.txt",
        "--backend",
        "anthropic",
        "--cache",
        str(tmp_path / "c.sqlite"),
        key=None,
    )
    one_line_error(proc, "export ANTHROPIC_API_KEY=", "--backend rules")
    assert "--replay" not in proc.stderr  # translate has no --replay


def test_the_translation_cache_keys_on_the_endpoint_from_the_environment(tmp_path, monkeypatch):
    good = (ROOT / "tests/nl/01-plain-lists.txt").read_text()
    dsl = translate_text(good, name="deal").dsl  # the rules backend's reading: an answer that checks
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    cache = TranslationCache(tmp_path / "c.sqlite")
    reply = (200, message(f"```contract\n{dsl}```"))
    with ScriptedServer([reply]) as a, ScriptedServer([reply]) as b:
        for server in (a, b, a):
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            result = translate_text(
                good,
                name="deal",
                backend="anthropic",
                cache=cache,
                settings=LlmSettings(model="scripted-model", max_retries=0),
            )
            assert result.ok
        assert len(a.requests) == 1 and len(b.requests) == 1  # b's answer was asked of b, then a's served again
    assert result.cached


def test_replies_are_capped_where_they_are_kept_and_sent_back(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    huge = "x" * 2_000_000
    with ScriptedServer([(200, message(huge))] * 3) as server:
        result = translate_text(
            TEXT,
            name="deal",
            backend="anthropic",
            cache=TranslationCache(tmp_path / "c.sqlite"),
            settings=LlmSettings(base_url=server.url, model="scripted-model", max_retries=0),
        )
    assert not result.ok and len(server.requests) == 3
    sent_back = server.requests[1]["messages"][1]["content"]
    assert len(sent_back) < REPLY_CAP + 100 and sent_back.endswith(f"[reply cut at {REPLY_CAP:,} characters]")
    assert (tmp_path / "c.sqlite").stat().st_size < 1_000_000  # three 2 MB replies are not kept whole


def test_replay_from_a_missing_recordings_file_creates_nothing(tmp_path):
    missing = tmp_path / "none.sqlite"
    proc = cli(
        "run",
        "examples/worked-example-1.contract",
        "--env",
        "5",
        "--customer",
        "llm",
        "--replay",
        "--recordings",
        str(missing),
        key=None,
    )
    one_line_error(proc, str(missing), "no such recordings file")
    assert not missing.exists()


def _corrupt_pages(path) -> None:
    data = bytearray(path.read_bytes())
    assert len(data) > 8192  # the tables live on pages after the first (the schema)
    data[4096:] = b"\xff" * (len(data) - 4096)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["usage-garbage", "null-reply", "corrupt-page"])
def test_a_damaged_recording_ends_the_replay_in_one_line_naming_the_file(tmp_path, damage):
    args = ["run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--red", "llm"]
    recordings = tmp_path / "r.sqlite"
    with ScriptedServer(CTBenchScript()) as server:
        assert cli(*args, "--base-url", server.url, "--recordings", str(recordings)).returncode == 0
    damaged = tmp_path / f"{damage}.sqlite"
    shutil.copy(recordings, damaged)
    if damage == "corrupt-page":
        _corrupt_pages(damaged)
    else:
        with sqlite3.connect(damaged) as db:
            db.execute(
                "UPDATE llm_recordings_v1 SET usage_json = '{not json' "
                if damage == "usage-garbage"
                else "UPDATE llm_recordings_v1 SET reply = NULL"
            )
    proc = cli(*args, "--base-url", server.url, "--recordings", str(damaged), "--replay", key=None)
    one_line_error(proc, str(damaged), "the recordings file of LLM responses is damaged")


def test_a_translation_cache_with_a_corrupt_page_is_one_line(tmp_path):
    cache = tmp_path / "c.sqlite"
    texts = sorted((ROOT / "tests/nl").glob("*.txt"))[:12]
    for text in texts:  # enough rows to fill pages beyond the schema's
        run_cli("translate", str(text), "--cache", str(cache), cwd=ROOT)
    _corrupt_pages(cache)
    proc = run_cli("translate", str(texts[0]), "--cache", str(cache), "--json", cwd=ROOT)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert str(cache) in error and "the translation cache is damaged" in error


USAGE = {"input_tokens": 3, "output_tokens": 2, "cache_read_tokens": 0, "cache_write_tokens": 0}


def _record(recordings, key: str) -> None:
    from contractlang.llm import ApiKeys

    recordings.put(key, 0, "test", "perform", "m", {"messages": key}, f"reply {key}", USAGE, ApiKeys())


def test_hundreds_of_threads_record_through_one_connection_and_every_reply_is_kept(tmp_path, monkeypatch):
    """256 games recording at once (a run at --max-connections 256) share the process's one connection, taking
    turns, instead of 256 connections waiting on the file's lock (which ended such a run as 'damaged')."""
    import contractlang.files as files
    from contractlang.llm import Recordings

    opened = []
    connect = sqlite3.connect
    monkeypatch.setattr(files.sqlite3, "connect", lambda *a, **k: opened.append(a) or connect(*a, **k))
    recordings = Recordings(tmp_path / "r.sqlite")
    errors = []

    def game(g: int) -> None:
        try:
            for call in range(4):
                _record(recordings, f"{g}-{call}")
                assert recordings.get(f"{g}-{call}", 0) == (f"reply {g}-{call}", USAGE)
        except Exception as exc:  # reported below, with the game that saw it
            errors.append((g, exc))

    threads = [threading.Thread(target=game, args=(g,)) for g in range(256)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and recordings.count() == 1024
    assert len(opened) == 1  # the file is opened once, to create it, and kept open
    recordings.close()


def test_a_recordings_file_another_process_keeps_locked_is_said_to_be_locked_not_damaged(tmp_path):
    from contractlang.files import FileError, SqliteFile
    from contractlang.llm import Recordings

    path = tmp_path / "r.sqlite"
    Recordings(path).close()
    file = SqliteFile(path, {"llm_recordings_v1"}, "", "recordings file", "--recordings", busy_timeout=0.2)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "db.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FileError) as raised:
            with file.session() as db:
                db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone()
        assert str(raised.value) == (
            f"{path}: the recordings file stayed locked by another process for 0.2 s; let it finish or pass "
            "--recordings with another file"
        )
    finally:
        holder.communicate("\n", timeout=10)
    with file.session() as db:  # the lock released, the same file object is usable again
        assert db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone() == (0,)
    file.close()


def test_a_forked_child_and_an_unpickled_copy_record_through_connections_of_their_own(tmp_path):
    import multiprocessing
    import pickle

    from contractlang.llm import Recordings

    recordings = Recordings(tmp_path / "r.sqlite")
    _record(recordings, "parent, before the fork")  # the parent's connection is open when it forks
    child = multiprocessing.get_context("fork").Process(target=_record, args=(recordings, "child"))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    _record(recordings, "parent, after the fork")
    _record(pickle.loads(pickle.dumps(recordings)), "copy")
    assert recordings.count() == 4
    assert recordings.get("child", 0) == ("reply child", USAGE)
    recordings.close()
