"""The LLM backend end to end: the real anthropic client against a scripted server on loopback."""

import json
import os

import pytest

from contractlang.llm import LlmSettings
from contractlang.translate import MissingApiKey, TranslationCache, translate_text
from contractlang.translate.cache import cache_key
from tests.helpers import ROOT, run_cli
from tests.llm_server import ScriptedServer, message, overloaded, prompt_of

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


def run(server, tmp_path, text=TEXT, name="deal", extra_checks=(), timeout=10.0, retries=2):
    settings = LlmSettings(base_url=server.url, model="scripted-model", timeout_seconds=timeout, max_retries=retries)
    return translate_text(
        text,
        name=name,
        backend="anthropic",
        cache=TranslationCache(tmp_path / "c.sqlite"),
        settings=settings,
        extra_checks=extra_checks,
    )


def test_correct_first_answer(key, tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as server:
        result = run(server, tmp_path)
    assert result.ok and result.attempts == 1 and result.terms["payments"]["1"] == 18
    assert len(server.requests) == 1
    request = server.requests[0]
    [system] = request["system"]  # one block, marked for prompt caching: the stable prefix of every attempt
    assert system["cache_control"] == {"type": "ephemeral"}
    assert request["model"] == "scripted-model" and "contract.lark" not in system["text"]
    assert "start: (contract | test_suite)*" in system["text"]  # the grammar is in the prompt
    assert "Contract text:" in prompt_of(request)
    auth = server.headers[0].get("x-api-key") or server.headers[0]["authorization"].removeprefix("Bearer ")
    assert auth == KEY  # the key travels in a header (its name depends on the SDK version)
    assert KEY.encode() not in (tmp_path / "c.sqlite").read_bytes()  # the key is never stored


def test_wrong_answer_repaired_after_diagnostics(key, tmp_path):
    with ScriptedServer([(200, message(BAD)), (200, message(GOOD))]) as server:
        result = run(server, tmp_path)
    assert result.ok and result.attempts == 2
    repair = prompt_of(server.requests[1])
    assert "error[E102]" in repair and "burger" in repair and "^" in repair
    assert server.requests[1]["messages"][1] == {"role": "assistant", "content": BAD}
    audit = TranslationCache(tmp_path / "c.sqlite")
    attempts = audit.attempts(cache_key("anthropic", "scripted-model", "deal\x00" + TEXT, server.url))
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
        third = translate_text(
            TEXT, name="deal", backend="anthropic", cache=TranslationCache(tmp_path / "c.sqlite"), settings=settings
        )
    assert not third.cached and len(server.requests) == 1  # a new model forces a new translation


def test_missing_key(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="--backend rules"):
        translate_text(TEXT, backend="anthropic")
    proc = run_cli(
        "translate",
        ROOT / "tests/nl/01-plain-lists.txt",
        "--backend",
        "anthropic",
        "--cache",
        tmp_path / "c.sqlite",
        env={k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"},
    )
    assert proc.returncode == 1 and "ANTHROPIC_API_KEY" in proc.stderr and "Traceback" not in proc.stderr


def translate_through(server, text, tmp_path, *extra):
    """`translate TEXT --backend anthropic` against the scripted server, with a key in the environment."""
    args = ("--backend", "anthropic", "--base-url", server.url, "--model", "scripted-model", *extra)
    return _translate_cli(tmp_path, text, *args, env_key=True)


def test_cli_end_to_end_through_loopback(tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as server:
        proc = translate_through(
            server, ROOT / "tests/nl/01-plain-lists.txt", tmp_path, "--json", "-o", tmp_path / "out.contract"
        )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] and out["attempts"] == 1 and out["cached"] is False and out["missing"] == []
    assert (tmp_path / "out.contract").read_text() == out["dsl"]
    assert KEY not in proc.stdout + proc.stderr


def test_rules_backend_is_the_offline_default(tmp_path):
    proc = run_cli("translate", ROOT / "tests/nl/i2-no-final-payment.txt", "--cache", tmp_path / "c.sqlite", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["backend"] == "rules" and out["missing"] == ["no payment for week 11"] and out["terms"] is None
    assert proc.stderr == ""  # under --json the object names its backend
    told = run_cli("translate", ROOT / "tests/nl/i2-no-final-payment.txt", "--cache", tmp_path / "c.sqlite")
    assert "rules/rules-v6 (offline: no LLM)" in told.stderr.splitlines()[0]
    unwritable = run_cli(
        "translate",
        ROOT / "tests/nl/01-plain-lists.txt",
        "--cache",
        tmp_path / "c.sqlite",
        "-o",
        "/proc/no-such-dir/out.contract",
    )
    assert unwritable.returncode == 1  # the failure is the only line: no offline notice before it
    assert unwritable.stderr.splitlines() == [
        "error: cannot write /proc/no-such-dir/out.contract: No such file or directory"
    ]


# --- honest inconsistencies: translated as written, flagged, never "repaired" (issue #19) ---------

MISMATCHED = (ROOT / "tests" / "nl" / "27-mismatched-total.txt").read_text()  # pays $20 × 5, states $90
AS_WRITTEN = """```contract
contract "mismatched-total" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $3 }
  deliver {
    weeks 2..10: pizza 1, pasta 1, soup 1
  }
  pay {
    weeks 1..9: $20
    week 11: $0
  }
  assert total pay == $90
}
```"""


def run_checked(server, tmp_path, text):
    from solver.verify import translation_checks

    return run(server, tmp_path, text=text, name="t", extra_checks=(translation_checks,), retries=0)


@pytest.mark.parametrize(
    "repair",
    [
        AS_WRITTEN.replace("weeks 1..9: $20", "weeks 1..9: $18"),  # payments bent to the stated total
        AS_WRITTEN.replace("  assert total pay == $90\n", ""),  # the stated total deleted
        AS_WRITTEN.replace("$90", "$100"),  # the stated total bent to the payments
    ],
    ids=["payments-changed", "total-dropped", "total-changed"],
)
def test_a_model_that_repairs_an_honest_inconsistency_is_not_rewarded(key, tmp_path, repair):
    with ScriptedServer([(200, message(AS_WRITTEN)), (200, message(repair))]) as server:
        result = run_checked(server, tmp_path, MISMATCHED)
    assert result.ok and result.well_formed is False and result.attempts == 2
    assert "weeks 1..9: $20" in result.dsl and "assert total pay == $90" in result.dsl
    assert {f.check for f in result.inconsistencies} == {"arithmetic.totals", "assert.0"}
    assert result.inconsistencies[0].values == {"price_total": 90, "payment_total": 100}
    assert "attempt 2 was refused" in result.notes[0]
    second = prompt_of(server.requests[1])
    assert "price × quantity total $90 differs from the payment total $100" in second
    assert "Never change a number" in second and "Fix every problem" not in second
    audit = TranslationCache(tmp_path / "c.sqlite").attempts(
        cache_key("anthropic", "scripted-model", "t\x00" + MISMATCHED, server.url)
    )
    assert [a["attempt"] for a in audit] == [1, 2]


def test_a_model_that_keeps_the_texts_numbers_gives_a_flagged_faithful_translation(key, tmp_path):
    with ScriptedServer([(200, message(AS_WRITTEN)), (200, message(AS_WRITTEN))]) as server:
        result = run_checked(server, tmp_path, MISMATCHED)
    assert result.ok and result.well_formed is False and result.attempts == 2 and result.notes == []
    assert len(server.requests) == 2  # asked to re-read once, never again


def test_a_misread_number_is_corrected_from_the_text(key, tmp_path):
    text = (ROOT / "tests" / "nl" / "07-stated-total.txt").read_text()  # pays $18 × 5, states $90
    misread = AS_WRITTEN.replace('"mismatched-total"', '"t"')
    with ScriptedServer([(200, message(misread)), (200, message(misread.replace("$20", "$18")))]) as server:
        result = run_checked(server, tmp_path, text)
    assert result.ok and result.well_formed is True and result.inconsistencies == [] and result.attempts == 2
    assert "weeks 1..9: $18" in result.dsl


def test_text_after_another_languages_block_is_never_a_contract(key, tmp_path):
    """A ```python block followed by prose: no contract, so never ok and never cached as an answer."""
    reply = "Here is some code:\n```python\nprint('hi')\n```\nand nothing else."
    with ScriptedServer([(200, message(reply))] * 3) as server:
        result = run(server, tmp_path)
    assert not result.ok and result.well_formed is False and result.error == "no checked contract after 3 attempts"
    assert "holds no contract" in prompt_of(server.requests[1])
    key = cache_key("anthropic", "scripted-model", "deal\x00" + TEXT, server.url)
    assert TranslationCache(tmp_path / "c.sqlite").get(key) is None
    assert [a["attempt"] for a in TranslationCache(tmp_path / "c.sqlite").attempts(key)] == [1, 2, 3]


def _translate_cli(tmp_path, path, *args, env_key=False):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if env_key:
        env["ANTHROPIC_API_KEY"] = KEY
    return run_cli("translate", path, "--cache", tmp_path / "c.sqlite", *args, env=env)


def test_cli_says_why_a_text_is_not_well_formed(tmp_path):
    path = ROOT / "tests" / "nl" / "27-mismatched-total.txt"
    proc = _translate_cli(tmp_path, path, "-o", str(tmp_path / "out.contract"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "not well-formed: 1 attempt(s)" in proc.stderr
    assert (
        "inconsistent: arithmetic.totals: price × quantity total $90 differs from the payment total $100 by $10"
        in proc.stderr
    )
    assert (
        "inconsistent: assert.0: `total pay == $90` is false: the left side is $100, the right side $90" in proc.stderr
    )
    assert "assert total pay == $90" in (tmp_path / "out.contract").read_text()  # the faithful DSL is written
    out = json.loads(_translate_cli(tmp_path, path, "--json").stdout)
    assert out["ok"] is True and out["well_formed"] is False and out["status"] == "not well-formed"
    assert out["cached"] is True and out["error"] is None
    assert [(f["check"], f["values"]) for f in out["inconsistencies"]] == [
        ("arithmetic.totals", {"price_total": 90, "payment_total": 100}),
        ("assert.0", {"left": 100, "right": 90}),
    ]


def test_cli_names_what_it_could_not_read_and_why(tmp_path):
    proc = _translate_cli(tmp_path, ROOT / "tests" / "nl" / "i7-half-of-unknown-total.txt", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["status"] == "parse-incomplete" and out["well_formed"] is False
    assert out["missing"] == ["no price for soup", "no payment for week 1"]
    assert out["error"] == "2 term(s) the text does not settle"
    assert out["notes"] == [
        "week 1 pays 'half of the contract total', and the contract total cannot be computed "
        "(not every price is stated); left out"
    ]
    proc = _translate_cli(tmp_path, ROOT / "tests" / "nl" / "i10-ct-vague.txt")
    assert proc.returncode == 1 and "missing: no coverage or points term could be read" in proc.stderr
    assert "parse-incomplete: 1 attempt(s)" in proc.stderr


def test_cli_gives_the_reason_for_a_failed_translation(tmp_path):
    (tmp_path / "x.txt").write_text("We will meet on Tuesday to talk about lunch.\n")
    proc = _translate_cli(tmp_path, tmp_path / "x.txt", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["status"] == "failed" and out["ok"] is False and out["diagnostics"] == []
    assert out["error"].startswith("the text names no product of Catering, Hotel Cleaning or AI Hosting")
    (tmp_path / "empty.txt").write_text("")
    out = json.loads(_translate_cli(tmp_path, tmp_path / "empty.txt", "--json").stdout)
    assert out["status"] == "failed" and "not a contract the rules backend can read" in out["error"]


# --- hostile servers and files (issue #15 items 11 and 12) --------------------------------------------


def test_an_error_body_that_echoes_the_key_is_redacted_everywhere(key, tmp_path):
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": f"bad key {KEY} refused"}}
    with ScriptedServer([(400, body), (400, body)]) as server:
        result = run(server, tmp_path)
        proc = translate_through(server, ROOT / "tests/nl/01-plain-lists.txt", tmp_path)
    assert not result.ok and "[redacted key]" in result.error and KEY not in result.error
    assert proc.returncode == 1 and KEY not in proc.stdout + proc.stderr and "[redacted key]" in proc.stderr
    assert KEY.encode() not in (tmp_path / "c.sqlite").read_bytes()
    audit = TranslationCache(tmp_path / "c.sqlite").attempts(
        cache_key("anthropic", "scripted-model", "deal\x00" + TEXT, server.url)
    )
    assert len(audit) == 1 and "API error 400" in audit[0]["error"]  # a failed run leaves its audit row


def test_retry_after_beyond_the_timeout_ends_the_call_at_once(key, tmp_path):
    import time

    start = time.monotonic()
    with ScriptedServer([(429, overloaded()[1], 0, {"retry-after": "100000"}), (200, message(GOOD))]) as server:
        result = run(server, tmp_path, timeout=120)
    assert time.monotonic() - start < 60 and len(server.requests) == 1  # at once, not at the 120 s timeout
    assert not result.ok and "asked to wait 100000 s" in result.error


def test_timeout_bounds_the_whole_call_across_retries(key, tmp_path):
    import time

    start = time.monotonic()
    with ScriptedServer([(529, overloaded()[1], 0.6, {"retry-after": "0.5"})] * 10) as server:
        result = run(server, tmp_path, timeout=2.0, retries=100)
    assert not result.ok and len(server.requests) <= 3  # 100 retries of 1.1 s each would have taken 110 s
    assert time.monotonic() - start < 60  # a guard against a hang


def test_garbage_bodies_are_one_clear_failure(key, tmp_path):
    with ScriptedServer([(200, b"<html>not json</html>"), (200, {"unexpected": True})]) as server:
        first = run(server, tmp_path)
        second = run(server, tmp_path, name="other")
    for result in (first, second):
        assert not result.ok and result.error and "Traceback" not in result.error


def test_the_endpoint_is_part_of_the_cache_key(key, tmp_path):
    with ScriptedServer([(200, message(GOOD))]) as a, ScriptedServer([(200, message(GOOD))]) as b:
        assert run(a, tmp_path).cached is False
        assert run(b, tmp_path).cached is False and len(b.requests) == 1
        assert run(a, tmp_path).cached is True


@pytest.mark.parametrize(
    "content,why",
    [(b"this is not a database at all" * 100, "not a usable translation cache"), (None, "something else")],
)
def test_corrupt_or_foreign_cache_files_are_refused_in_one_line(tmp_path, content, why):
    cache = tmp_path / "c.sqlite"
    if content is None:
        import sqlite3

        with sqlite3.connect(cache) as db:
            db.execute("CREATE TABLE invoices (id INTEGER)")
    else:
        cache.write_bytes(content)
    before = cache.read_bytes()
    proc = _translate_cli(tmp_path, ROOT / "tests/nl/01-plain-lists.txt", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["ok"] is False and why in out["error"] and "Traceback" not in proc.stderr
    assert cache.read_bytes() == before  # another program's file is never written to


@pytest.mark.parametrize(
    "args",
    [
        ["--base-url", "not a url", "--backend", "anthropic"],
        ["--base-url", "ftp://127.0.0.1/", "--backend", "anthropic"],
        ["--base-url", "http://127.0.0.1:9/"],
        ["--retries", "-1"],
        ["--timeout", "0"],
        ["--max-tokens", "0"],
        ["--backend", "gpt"],
    ],
)
def test_bad_translate_options_are_usage_errors(tmp_path, args):
    proc = _translate_cli(tmp_path, ROOT / "tests/nl/01-plain-lists.txt", "--json", *args)
    out = json.loads(proc.stdout)
    assert proc.returncode in (1, 2) and out["ok"] is False and "Traceback" not in proc.stderr
    assert proc.returncode == (1 if args[:2] == ["--backend", "gpt"] else 2)


def test_translate_cli_output_golden(tmp_path):
    """The person-facing output of a self-contradicting text: the faithful DSL, then the verdict and why."""
    from tests.helpers import compare_golden

    proc = _translate_cli(tmp_path, ROOT / "tests" / "nl" / "27-mismatched-total.txt")
    compare_golden(
        ROOT / "tests" / "golden" / "translate-mismatched.txt", proc.stdout + "--- stderr ---\n" + proc.stderr
    )


def test_a_translation_that_does_not_check_shows_each_diagnostic_with_caret_and_hint(tmp_path):
    text = tmp_path / "g.txt"
    text.write_text(
        'Hotel cleaning agreement "gran".\nPrices: conference room $150, king room $500, single room '
        "$300.\nThe provider cleans 1 conference room, 1 king room and 1 single room each delivery "
        "week.\nThe hotel pays $1,000 in weeks 1 to 9 and $0 in week 11.\n"
    )
    proc = _translate_cli(tmp_path, text)
    assert proc.returncode == 1 and proc.stderr.startswith(
        "error: translation failed: the translated contract does not check: price of conference_room $150"
    )
    assert "<translation>:3:29: error[E302]: price of conference_room $150 is not a multiple of $100" in proc.stderr
    assert "\n                                ^^^^\n" in proc.stderr and "hint: Hotel Cleaning amounts" in proc.stderr


def test_a_term_the_model_says_it_cannot_express_is_a_missing_line_through_the_cli(tmp_path):
    """The model lists what the language cannot express after its block; the verdict is parse-incomplete, not
    ok, and the term is shown."""
    term = "the next payment is reduced by $5 for every missing pizza"
    text = tmp_path / "terms.txt"
    text.write_text(TEXT + f"If a delivery falls short, {term}.\n")
    with ScriptedServer([(200, message(GOOD + f"\nmissing: {term}\n"))]) as server:
        proc = translate_through(server, text, tmp_path, "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["status"] == "parse-incomplete" and not out["ok"]
    assert out["missing"] == [f"could not express: {term}"]
    assert "`missing: <the text's own words>`" in server.requests[0]["system"][0]["text"]
