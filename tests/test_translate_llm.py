"""The LLM backend end to end: the real anthropic client against a scripted server on loopback."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from contractlang.translate import MissingApiKey, TranslationCache, translate_text
from contractlang.translate.llm import LlmSettings
from llm_server import ScriptedServer, message, overloaded

TEXT = (ROOT / "tests" / "nl" / "01-plain-lists.txt").read_text()
GOOD = """```contract
contract "deal" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $3 }
  deliver {
    weeks 2..10: pizza 1, pasta 1, soup 1
  }
  pay {
    weeks 1..9: $18
    week 11: $0
  }
}
```"""
BAD = GOOD.replace("soup: $3", "burger: $3")
KEY = "sk-test-not-a-real-key"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def run(server, tmp_path, **kw):
    settings = LlmSettings(base_url=server.url, model="scripted-model", timeout_seconds=kw.pop("timeout", 10),
                           max_retries=kw.pop("retries", 2))
    return translate_text(TEXT, name="deal", backend="anthropic", cache=TranslationCache(tmp_path / "c.sqlite"),
                          settings=settings)


def test_correct_first_answer(key, tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as server:
        result = run(server, tmp_path)
    assert result.ok and result.attempts == 1 and result.terms["payments"]["1"] == 18
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request["model"] == "scripted-model" and "contract.lark" not in request["system"]
    assert "start: contract*" in request["system"]  # the grammar is in the prompt
    assert "Contract text:" in request["messages"][0]["content"]
    auth = server.headers[0].get("x-api-key") or server.headers[0]["authorization"].removeprefix("Bearer ")
    assert auth == KEY  # the key travels in a header (its name depends on the SDK version)
    assert KEY.encode() not in (tmp_path / "c.sqlite").read_bytes()  # the key is never stored


def test_wrong_answer_repaired_after_diagnostics(key, tmp_path):
    with ScriptedServer([(200, message(BAD)), (200, message(GOOD))]) as server:
        result = run(server, tmp_path)
    assert result.ok and result.attempts == 2
    repair = server.requests[1]["messages"][-1]["content"]
    assert "error[E102]" in repair and "burger" in repair and "^" in repair
    assert server.requests[1]["messages"][1] == {"role": "assistant", "content": BAD}
    audit = TranslationCache(tmp_path / "c.sqlite")
    from contractlang.translate.cache import cache_key

    attempts = audit.attempts(cache_key("anthropic", "scripted-model", "deal\x00" + TEXT))
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert any("E102" in d for d in attempts[0]["diagnostics"]) and attempts[1]["diagnostics"] == []
    assert attempts[0]["input_tokens"] == 100


def test_three_bad_answers_fail(key, tmp_path):
    with ScriptedServer([(200, message(BAD))] * 3) as server:
        result = run(server, tmp_path)
    assert not result.ok and result.attempts == 3 and len(server.requests) == 3
    assert "no checked contract after 3 attempts" in result.error


def test_overloaded_then_success(key, tmp_path):
    with ScriptedServer([overloaded(), (200, message(GOOD))]) as server:
        result = run(server, tmp_path)
    assert result.ok and result.attempts == 1 and len(server.requests) == 2  # the SDK retried the 529


def test_timeout_is_reported(key, tmp_path):
    with ScriptedServer([(200, message(GOOD), 3.0)]) as server:
        result = run(server, tmp_path, timeout=0.5, retries=0)
    assert not result.ok and "did not answer within 0.5 s" in result.error
    assert TranslationCache(tmp_path / "c.sqlite").get("anything") is None


def test_cache_answers_without_any_request(key, tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as server:
        first = run(server, tmp_path)
        second = run(server, tmp_path)
    assert first.ok and not first.cached and second.cached and second.dsl == first.dsl
    assert len(server.requests) == 1
    with ScriptedServer([(200, message(GOOD))]) as server:
        settings = LlmSettings(base_url=server.url, model="another-model")
        third = translate_text(TEXT, name="deal", backend="anthropic", cache=TranslationCache(tmp_path / "c.sqlite"),
                               settings=settings)
    assert not third.cached and len(server.requests) == 1  # a new model forces a new translation


def test_missing_key(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="--backend rules"):
        translate_text(TEXT, backend="anthropic")
    proc = subprocess.run([sys.executable, "-m", "contractlang", "translate", str(ROOT / "tests/nl/01-plain-lists.txt"),
                           "--backend", "anthropic", "--cache", str(tmp_path / "c.sqlite")], capture_output=True,
                          text=True, env={k: v for k, v in __import__("os").environ.items() if k != "ANTHROPIC_API_KEY"})
    assert proc.returncode == 1 and "ANTHROPIC_API_KEY" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_end_to_end_through_loopback(tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as server:
        env = {**__import__("os").environ, "ANTHROPIC_API_KEY": KEY}
        proc = subprocess.run([sys.executable, "-m", "contractlang", "translate", str(ROOT / "tests/nl/01-plain-lists.txt"),
                               "--backend", "anthropic", "--base-url", server.url, "--model", "scripted-model",
                               "--cache", str(tmp_path / "c.sqlite"), "--json", "-o", str(tmp_path / "out.contract")],
                              capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] and out["attempts"] == 1 and out["cached"] is False and out["missing"] == []
    assert (tmp_path / "out.contract").read_text() == out["dsl"]
    assert KEY not in proc.stdout + proc.stderr


def test_rules_backend_is_the_offline_default(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "contractlang", "translate", str(ROOT / "tests/nl/i2-no-final-payment.txt"),
                           "--cache", str(tmp_path / "c.sqlite"), "--json"], capture_output=True, text=True)
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["backend"] == "rules" and out["missing"] == ["no payment for week 11"] and out["terms"] is None
    assert "offline" in proc.stderr
