"""Regression tests for the defects an independent Messages API server found (issue #33), and for recordings and
translation caches that cannot be read (issue #30, item 3): the real clients against scripted servers on
127.0.0.1, and the real CLI."""

import json
import re
import shutil
import sqlite3

import pytest

from conftest import ROOT
from contractlang import check_source
from contractlang.llm import REPLY_CAP, CallFailed, LlmClient, LlmSettings
from contractlang.translate import TranslationCache, translate_text
from helpers import run_cli
from llm_server import ScriptedServer, message, prompt_of
from test_llm_agents import KEY, CTBenchScript, closed_port_url, env_without_key, path_tiles, play

TEXT = (ROOT / "tests" / "nl" / "01-plain-lists.txt").read_text()
SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "internal error"}}


def cli(*args, key: str | None = KEY):
    return run_cli(*args, cwd=ROOT, env=env_without_key(**({"ANTHROPIC_API_KEY": key} if key else {})))


def one_line_error(proc, *needles) -> None:
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


# --- retries report their cause ------------------------------------------------------------------------

def test_a_retry_the_retry_budget_cuts_short_reports_the_error_that_caused_it():
    """No retry-after: the client's own backoff is not 'the API asked to wait'; the HTTP 500 is the news."""
    with ScriptedServer([(500, SERVER_ERROR, 0, {})] * 30) as server:
        client = LlmClient(LlmSettings(base_url=server.url, model="m", retry_seconds=1.2, max_retries=30), KEY)
        with pytest.raises(CallFailed) as failed:
            client.complete("test", "S", [{"role": "user", "content": "x"}])
    assert "API error 500" in str(failed.value) and "internal error" in str(failed.value)
    assert "asked" not in str(failed.value)
    assert re.search(r"the next retry would wait [\d.]+ s, more than the [\d.]+ s left of the 1.2 s retry budget",
                     str(failed.value)), str(failed.value)
    client = LlmClient(LlmSettings(base_url=closed_port_url(), model="m", retry_seconds=1.2, max_retries=5), KEY)
    with pytest.raises(CallFailed, match="connection error") as failed:
        client.complete("test", "S", [{"role": "user", "content": "x"}])
    assert "asked" not in str(failed.value)


# --- the outermost JSON object, feedback in plain words; coverage without a colour; the confirm context --

class ProseJudge(CTBenchScript):
    """A judge that answers its summary after a sentence of prose, once with entries that are not objects,
    with its coverage entries' colours left open."""

    def __init__(self):
        super().__init__()
        self.summaries = 0

    def judge(self, prompt: str) -> str:
        if "Summarise the agreed terms" not in prompt:
            return super().judge(prompt)
        self.summaries += 1
        if self.summaries == 1:
            return 'Sure: {"(0,1)": "P-Red pays"}'
        entries = json.loads(super().judge(prompt))
        return "Sure, here is the summary: " + json.dumps({k: {**v, "color": "unknown"} for k, v in entries.items()})


def test_a_judge_summary_after_prose_is_read_whole_and_its_feedback_is_plain_words(tmp_path):
    with ScriptedServer(ProseJudge()) as server:
        record = play("prog_trading", server.url, tmp_path)
    summaries = [c for c in record.llm_calls if c.purpose == "judge summary"]
    assert len(summaries) == 2 and record.negotiation.contract is not None and record.contract_active
    feedback = summaries[1].prompt
    assert feedback.startswith("That summary cannot be used") and "string indices" not in feedback
    assert "is not an object with giver, receiver and color" in feedback
    coverage = record.contract_terms["coverage"]
    assert len(coverage) == len(path_tiles("red", "blue") + path_tiles("blue", "red"))
    assert all(c["color"] is None for c in coverage)
    prompts = [c.prompt for c in record.llm_calls]
    assert not any("None chip" in p for p in prompts)
    assert any("with a chip of the tile's colour; if" in p for p in prompts)
    [confirm, _] = [c.prompt for c in record.llm_calls if c.purpose == "ctbench confirm"]
    assert "Board (R red, B blue, G green)" in confirm and "Your best path to the goal" in confirm  # game context
    assert "P-Blue's best path" in confirm


def test_a_performance_prompt_states_the_contract_in_words():
    from games.contractsim.environments import environment
    from games.contractsim.llm_agents import LlmPerformer

    [checked] = check_source((ROOT / "examples/worked-example-1.contract").read_text(), "w").contracts
    assert checked.ir.asserts  # `total pay == total value` and `total pay == $90`
    performer = LlmPerformer("customer", LlmClient(LlmSettings(), KEY), checked.ir, environment(1))
    system = performer.conversation.system
    assert "==" not in system and "total_" not in system
    assert "Stated: the total payment equals the total value." in system \
        and "Stated: the total payment equals $90." in system


# --- translate ------------------------------------------------------------------------------------------

def test_translate_without_a_key_does_not_suggest_replay(tmp_path):
    proc = cli("translate", "tests/nl/01-plain-lists.txt", "--backend", "anthropic", "--cache",
               str(tmp_path / "c.sqlite"), key=None)
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
            result = translate_text(good, name="deal", backend="anthropic", cache=cache,
                                    settings=LlmSettings(model="scripted-model", max_retries=0))
            assert result.ok
        assert len(a.requests) == 1 and len(b.requests) == 1  # b's answer was asked of b, then a's served again
    assert result.cached


def test_replies_are_capped_where_they_are_kept_and_sent_back(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    huge = "x" * 2_000_000
    with ScriptedServer([(200, message(huge))] * 3) as server:
        result = translate_text(TEXT, name="deal", backend="anthropic", cache=TranslationCache(tmp_path / "c.sqlite"),
                                settings=LlmSettings(base_url=server.url, model="scripted-model", max_retries=0))
    assert not result.ok and len(server.requests) == 3
    sent_back = server.requests[1]["messages"][1]["content"]
    assert len(sent_back) < REPLY_CAP + 100 and sent_back.endswith(f"[reply cut at {REPLY_CAP:,} characters]")
    assert (tmp_path / "c.sqlite").stat().st_size < 1_000_000  # three 2 MB replies are not kept whole


# --- negotiate: the output limits of the scaffold --------------------------------------------------------

def test_negotiate_sends_the_translator_and_performance_limits_of_translate_and_run(tmp_path):
    from contractlang.translate.rules import translate as rules_translate
    from games.contractsim.environments import environment
    from games.contractsim.session import negotiate_and_perform
    from solver.dp import TableCache

    def script(body):
        if body["system"][0]["text"].startswith("You convert"):
            text = prompt_of(body).split("Contract text:\n", 1)[1]
            return 200, message("```contract\n" + rules_translate(text, "proposal").dsl + "```")
        return 200, message('{"payment": 0}')

    offers = [c.ir for f in sorted((ROOT / "examples").glob("catering*.contract"))
              for c in check_source(f.read_text(), str(f)).contracts]
    with ScriptedServer(script) as server:
        client = LlmClient(LlmSettings(base_url=server.url, model="scripted-model", max_tokens=16384), KEY)
        run = negotiate_and_perform(environment(1), "scripted", "scripted", offers, TableCache(), "llm",
                                    ("llm", "rc"), (42,), client)
    assert run.metrics.agreed and run.performances
    limits = {("translation" if b["system"][0]["text"].startswith("You convert") else "performance", b["max_tokens"])
              for b in server.requests}
    assert limits == {("translation", 4096), ("performance", 8192)}


# --- record/replay files --------------------------------------------------------------------------------

def test_replay_from_a_missing_recordings_file_creates_nothing(tmp_path):
    missing = tmp_path / "none.sqlite"
    proc = cli("run", "examples/worked-example-1.contract", "--env", "5", "--customer", "llm", "--replay",
               "--recordings", str(missing), key=None)
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
            db.execute("UPDATE llm_recordings_v1 SET usage_json = '{not json' " if damage == "usage-garbage"
                       else "UPDATE llm_recordings_v1 SET reply = NULL")
    proc = cli(*args, "--base-url", server.url, "--recordings", str(damaged), "--replay", key=None)
    one_line_error(proc, str(damaged), "the recordings file is damaged")


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
