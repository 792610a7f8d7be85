"""The LLM transport against misbehaving servers (issues #48 and #49), through the real CLI and the real `anthropic`
and `openai` clients on 127.0.0.1: placeholder keys, replies of the wrong types, trickling servers, endless and
compressed bodies, deep JSON, redirects to a thief; every failure one `error:` line, exit 1."""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import time

import pytest

from contractlang.llm import TOKEN_COUNT_LIMIT, Recordings
from contractlang.llm.transport import MAX_RESPONSE_BYTES
from contractlang.translate import translate_text
from tests.helpers import ROOT, run_cli
from tests.llm_server import RawServer, ScriptedServer, chat_completion, head, message, prompt_of

pytestmark = pytest.mark.e2e  # the real CLI and LLM clients against misbehaving servers on 127.0.0.1

LONG_KEY = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz"  # the length of a real key: redacted wherever written
WORKED = ROOT / "examples" / "worked-example-1.contract"
PROSE = ROOT / "tests" / "nl" / "01-plain-lists.txt"
DSL = translate_text(PROSE.read_text(), name="deal").dsl  # the rules backend's reading: an answer that checks
TOO_LARGE = f"the API's response is larger than {MAX_RESPONSE_BYTES // 2**20} MiB; not read"


def environment(**keys) -> dict:
    """This process's environment with exactly the API keys given."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return {**env, **keys}


def one_error_line(proc, *needles) -> str:
    """The command failed as every command does: exit 1, one `error:` line on stderr naming `needles`."""
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def translate(url: str, tmp_path, provider: str = "openai", key: str = LONG_KEY, *extra):
    """`translate` of the plain-lists prose through `provider` at `url`, `key` its only key."""
    variable = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    return run_cli(
        "translate",
        PROSE,
        "--backend",
        provider,
        "--model",
        "scripted-model",
        "--base-url",
        url,
        "--retries",
        "0",
        "--cache",
        tmp_path / "t.sqlite",
        *extra,
        cwd=tmp_path,
        env=environment(**{variable: key}),
    )


def payer(body):
    """A Customer that pays $18 each payment week (what is left of the budget at most); every reply also carries
    the key the request was sent with, as a server that echoes it would."""
    left = int(re.search(r"\$([\d,]+) of your budget remains", prompt_of(body)).group(1).replace(",", ""))
    return 200, message(json.dumps({"payment": min(18, left), "note": f"thanks for {LONG_KEY}"}))


def play(url: str, tmp_path, key_variable: str, key: str, *extra):
    return run_cli(
        "run",
        WORKED,
        "--env",
        "5",
        "--customer",
        "llm:openai/scripted-model",
        "--base-url",
        url,
        "--recordings",
        tmp_path / "r.sqlite",
        *extra,
        cwd=tmp_path,
        env=environment(**{key_variable: key}),
    )


# --- #49: a placeholder key is no secret, and never rewrites a reply -----------------------------------------


def test_a_placeholder_key_plays_the_same_game_as_a_real_key(tmp_path):
    """With OPENAI_API_KEY=a the redaction rewrote `{"payment": 18}` into `{"p[redacted key]yment": 18}`: every
    payment fell back to 0 and the game scored (200, 0), exit 0."""
    games = {}
    for key in (LONG_KEY, "a", "x", "EMPTY"):
        where = tmp_path / key
        where.mkdir()
        with ScriptedServer(payer) as server:
            proc = play(server.url, where, "OPENAI_API_KEY", key, "--json")
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["llm_defaults"] == {"customer": 0}, key
        games[key] = (out["u_customer"], out["u_supplier"], out["trajectory"])
        payments = [e["amount"] for e in out["trajectory"] if e["type"] == "payment"]
        assert payments[:5] == [18] * 5, (key, payments)
        assert server.headers[0]["authorization"] == f"Bearer {key}"
    assert games["a"] == games["x"] == games["EMPTY"] == games[LONG_KEY]


@pytest.mark.parametrize("key", ["a", "x", "EMPTY"])
def test_translate_works_with_a_placeholder_key(tmp_path, key):
    with ScriptedServer([(200, message(f"Here it is, with a and x:\n```contract\n{DSL}```"))]) as server:
        proc = translate(server.url, tmp_path, "openai", key, "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["status"] == "ok" and out["dsl"] == DSL, proc.stdout + proc.stderr


def test_a_real_key_echoed_by_the_server_is_never_written_or_shown(tmp_path):
    """The reply the game reads keeps the key (it is data); every place text is written or shown has it
    redacted: stdout, stderr, the run log, the recordings, the translation cache and its output file."""
    with ScriptedServer(payer) as server:
        game = play(server.url, tmp_path, "OPENAI_API_KEY", LONG_KEY, "--json", "--log", tmp_path / "events.jsonl")
    assert game.returncode == 0 and json.loads(game.stdout)["llm_defaults"] == {"customer": 0}, game.stderr
    assert "[redacted key]" in game.stdout
    echo = f"Contract for {LONG_KEY}:\n```contract\n{DSL}```"
    with ScriptedServer([(200, message(echo))]) as server:
        text = translate(server.url, tmp_path, "anthropic", LONG_KEY, "-o", tmp_path / "out.contract")
    assert text.returncode == 0, text.stderr
    written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 4  # events, recordings, translation cache, output contract
    for shown in [game.stdout, game.stderr, text.stdout, text.stderr, *written]:
        assert LONG_KEY.encode() not in (shown if isinstance(shown, bytes) else shown.encode())
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        [response] = db.execute("SELECT response_text FROM audit_v2").fetchone()
    assert response.startswith("Contract for [redacted key]:")


def test_an_echoed_key_in_what_agents_say_is_never_written_or_shown(tmp_path):
    """What an LLM player says in a CT-Bench negotiation, and a ContractSim negotiator's reply, are shown to the
    other side and logged: a key in them is redacted there (the actions the game reads are untouched)."""
    from tests.llm.test_llm_agents import BOARD, CONTRACTSIM_SCRIPT, CTBenchScript

    class Echo(CTBenchScript):
        def __call__(self, body):
            status, reply = super().__call__(body)
            said = reply["content"][0]["text"]
            return status, message(f"{said} ({LONG_KEY})" if said == "agree" else said)

    env = environment(ANTHROPIC_API_KEY=LONG_KEY)
    with ScriptedServer(Echo()) as server:
        ctbench = run_cli(
            "ctbench",
            "sweep",
            "--boards",
            BOARD.id,
            "--condition",
            "nl_trading",
            "--mode",
            "pfp",
            "--red",
            "llm",
            "--blue",
            "llm",
            "--judge",
            "llm",
            "--workers",
            "1",
            "--out",
            tmp_path / "sweep",
            "--base-url",
            server.url,
            "--recordings",
            tmp_path / "r.sqlite",
            "--json",
            cwd=tmp_path,
            env=env,
        )
    assert ctbench.returncode == 0, ctbench.stderr
    assert b"agree ([redacted key])" in (tmp_path / "sweep" / "games.jsonl").read_bytes()
    echoed = [
        (s, message(json.dumps({**json.loads(r["content"][0]["text"]), "response": f"{LONG_KEY} says hi"})))
        if i < 3
        else (s, r)
        for i, (s, r, *_) in enumerate(CONTRACTSIM_SCRIPT)
    ]
    with ScriptedServer(echoed) as server:
        negotiation = run_cli(
            "negotiate",
            "--env",
            "1",
            "--customer",
            "llm",
            "--supplier",
            "llm:claude-opus-5",
            "--perform-customer",
            "llm",
            "--base-url",
            server.url,
            "--recordings",
            tmp_path / "n.sqlite",
            "--json",
            cwd=tmp_path,
            env=env,
        )
    assert negotiation.returncode == 0 and json.loads(negotiation.stdout)["runs"][0]["metrics"]["agreed"], (
        negotiation.stderr
    )
    assert "[redacted key] says hi" in negotiation.stdout
    written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    for shown in [ctbench.stdout, ctbench.stderr, negotiation.stdout, negotiation.stderr]:
        assert LONG_KEY not in shown
    assert not any(LONG_KEY.encode() in data for data in written)


# --- #49: replies of the wrong types are not messages: one line, the recordings intact ---------------------

USAGE = {"input_tokens": 100, "output_tokens": 50}
WRONG = {
    "a text that is a number": (
        b'{"type": "message", "content": [{"type": "text", "text": 42}], "usage": '
        b'{"input_tokens": 1, "output_tokens": 1}}',
        "content.0.text",
    ),
    "NaN tokens": (
        b'{"type": "message", "content": [{"type": "text", "text": "{}"}], "usage": '
        b'{"input_tokens": NaN, "output_tokens": 1}}',
        "usage.input_tokens",
    ),
    "fractional tokens": (json.dumps(message("{}", 1.5)).encode(), "usage.input_tokens"),
    "negative tokens": (json.dumps(message("{}", 5, -3)).encode(), "usage.output_tokens"),
    "10**400 tokens": (json.dumps(message("{}", 10**400)).encode(), "usage.input_tokens"),
    "a token count past the limit": (json.dumps(message("{}", TOKEN_COUNT_LIMIT + 1)).encode(), "usage.input_tokens"),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_a_reply_of_the_wrong_types_is_one_line_and_the_recordings_stay_intact(tmp_path, case):
    """A priced model (claude-sonnet-5-5) with 10**400 tokens was an OverflowError, exit 3, and a recording the
    replay then called damaged; a number for a text a TypeError."""
    body, field = WRONG[case]
    good = (200, message('{"payment": 18}'))
    args = ("run", WORKED, "--env", "5", "--customer", "llm:claude-sonnet-5-5", "--recordings", tmp_path / "r.sqlite")
    env = environment(ANTHROPIC_API_KEY=LONG_KEY)
    with ScriptedServer([good, (200, body)]) as server:
        proc = run_cli(*args, "--base-url", server.url, cwd=tmp_path, env=env)
    one_error_line(proc, "customer performance: the API answered with something that is not a message", field)
    assert Recordings(tmp_path / "r.sqlite").count() == 1  # the good reply; the bad one is never recorded
    replay = run_cli(*args, "--base-url", server.url, "--replay", cwd=tmp_path, env=env)
    one_error_line(replay, "no recorded response for this customer performance request")
    with ScriptedServer([(200, body)]) as server:
        text = translate(server.url, tmp_path, "anthropic")
    one_error_line(text, "error: translation failed: the API answered with something that is not a message", field)


@pytest.mark.parametrize(
    "reply, field",
    [
        (chat_completion("{}") | {"choices": [{"message": {"content": 42}}]}, "choices.0.message.content"),
        (chat_completion("{}") | {"choices": []}, "choices"),
        (chat_completion("{}", 10**400), "usage.prompt_tokens"),
        (chat_completion("{}", 1, 1, cached_tokens=-1), "usage.prompt_tokens_details.cached_tokens"),
    ],
)
def test_a_chat_completion_of_the_wrong_types_is_one_line(tmp_path, reply, field):
    with ScriptedServer([(200, json.dumps(reply).encode())]) as server:
        proc = translate(server.url, tmp_path, "openai", "EMPTY", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["ok"] is False and proc.stderr == ""
    assert out["error"].startswith("the API answered with something that is not a message") and field in out["error"]


# --- #48: --llm-timeout and --timeout are deadlines for the whole call -------------------------------------


def endless_reply(first: bytes, drip: bytes):
    """A raw handler that sends `first`, then `drip` every 0.2 s for ever: each read gets bytes, the reply never
    ends."""

    def handler(out, body):
        out.write(first)
        while True:
            out.write(drip)
            out.flush()
            time.sleep(0.2)

    return handler


trickled_headers = endless_reply(b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a")
trickled_body = endless_reply(head(200, "content-type: application/json", "content-length: 1000000"), b" ")
trickled_chunks = endless_reply(
    head(200, "content-type: application/json", "transfer-encoding: chunked"), b"1\r\n \r\n"
)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("trickle", [trickled_headers, trickled_body, trickled_chunks])
def test_a_trickling_server_is_cut_at_the_deadline(tmp_path, trickle, provider):
    """A byte every 0.2 s kept each read under its timeout: a call lived 60 s and more past --llm-timeout 5."""
    with RawServer(trickle) as server:
        proc = translate(server.url, tmp_path, provider, LONG_KEY, "--timeout", "2")
        took = time.monotonic() - server.arrivals[0]  # the deadline runs from before the request was sent
    one_error_line(proc, "translation failed: the model did not answer within 2 s")
    assert len(server.requests) == 1 and took < 30, took  # cut, not left trickling (60 s and more): a hang guard


def test_llm_timeout_is_a_deadline_for_a_game_s_call(tmp_path):
    with RawServer(trickled_body) as server:
        proc = play(server.url, tmp_path, "OPENAI_API_KEY", "EMPTY", "--llm-timeout", "2")
        took = time.monotonic() - server.arrivals[0]  # from the request's arrival: the game's start is not the call
    one_error_line(proc, "customer performance: the model did not answer within 2 s")
    assert len(server.requests) == 1 and took < 30, took  # a hang guard: the trickle never ends by itself


# --- #48: the decoded response is capped -----------------------------------------------------------------


def gzip_bomb(out, body):
    """4 GiB of spaces in 64 gzip members of 64 MiB: 4 MB on the wire."""
    member = gzip.compress(b" " * 2**26, compresslevel=9)
    out.write(
        head(200, "content-type: application/json", "content-encoding: gzip", f"content-length: {len(member) * 64}")
    )
    for _ in range(64):
        out.write(member)


def endless_chunks(out, body):
    out.write(head(200, "content-type: application/json", "transfer-encoding: chunked"))
    chunk = b"[" * 2**16
    while True:
        out.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def endless_events(out, body):
    out.write(head(200, "content-type: text/event-stream", "transfer-encoding: chunked"))
    event = b'data: {"type": "ping"}\n\n' * 2000
    while True:
        out.write(b"%x\r\n%s\r\n" % (len(event), event))


def announced_2gb(out, body):
    out.write(head(200, "content-type: application/json", f"content-length: {2 * 10**9}"))
    block = b" " * 2**16
    while True:
        out.write(block)


def capped_process(*args, env, memory: int = 3 * 2**30) -> subprocess.CompletedProcess:
    """The CLI in a process allowed `memory` bytes of address space: a body held whole would fail it with a
    MemoryError (exit 3) instead of filling the machine."""
    return subprocess.run(
        [sys.executable, "-m", "contractlang", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory)),
    )


@pytest.mark.parametrize("body", [gzip_bomb, endless_chunks, endless_events, announced_2gb])
def test_an_endless_or_huge_body_is_refused_at_the_cap(tmp_path, body):
    """A gzip bomb, an endless chunked body, an endless event stream and a 2 GB body were MemoryError, exit 3, at
    3-3.8 GB: each is cut at MAX_RESPONSE_BYTES of decoded body, in a process that could not hold them."""
    with RawServer(body) as server:
        proc = capped_process(
            "translate",
            PROSE,
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            server.url,
            "--timeout",
            "60",
            "--cache",
            tmp_path / "t.sqlite",
            env=environment(OPENAI_API_KEY="EMPTY"),
        )
    one_error_line(proc, f"translation failed: {TOO_LARGE}")
    assert len(server.requests) == 1  # refused, not retried: the server would send the same


def test_a_response_just_under_the_cap_is_read():
    """The cap is on the decoded body, and a body under it passes whole (gzip-encoded here)."""
    from contractlang.llm import LlmClient, LlmSettings

    text = "x" * (MAX_RESPONSE_BYTES - 10_000)

    def compressed(out, body):
        data = gzip.compress(json.dumps(chat_completion(text)).encode())
        out.write(
            head(200, "content-type: application/json", "content-encoding: gzip", f"content-length: {len(data)}") + data
        )

    with RawServer(compressed) as server:
        client = LlmClient(LlmSettings(provider="openai", base_url=server.url, model="m", max_retries=0), "EMPTY")
        reply = client.complete("test", "S", [{"role": "user", "content": "x"}])
    assert reply.startswith("x" * 1000) and reply.endswith("characters]")  # whole, then cut at REPLY_CAP to keep


# --- #48: JSON nested 100,000 deep -------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 400, 500])
def test_json_nested_100000_deep_is_one_line(tmp_path, status):
    deep = b"[" * 100_000 + b"]" * 100_000
    with ScriptedServer([(status, deep, 0, {})] * 2) as server:
        proc = translate(server.url, tmp_path, "anthropic", LONG_KEY, "--timeout", "5")
    line = one_error_line(proc, "translation failed:")
    assert ("not a message" if status == 200 else f"API error {status}") in line


# --- #48: a redirect is never followed, so neither the key nor the prompt reaches another server ----------


@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_redirect_to_a_thief_is_refused(tmp_path, status, provider):
    with ScriptedServer([(200, message(f"```contract\n{DSL}```"))] * 3) as thief:

        def redirect(out, body):
            path = "/v1/messages" if provider == "anthropic" else "/chat/completions"
            out.write(head(status, f"location: {thief.url}{path}", "content-length: 0"))

        with RawServer(redirect) as server:
            proc = translate(server.url, tmp_path, provider)
        line = one_error_line(proc, f"answered {status}, a redirect to {thief.url}; redirects are not followed")
        assert len(server.requests) == 1 and thief.requests == []
    assert "Bearer" not in line and LONG_KEY not in line


def test_a_same_origin_redirect_is_refused_too(tmp_path):
    """Redirects are refused to any address: the server named is the only one asked, and asked once."""

    def redirect(out, body):
        out.write(head(308, "location: /elsewhere/chat/completions", "content-length: 0"))

    with RawServer(redirect) as server:
        proc = translate(server.url, tmp_path, "openai", LONG_KEY, "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["ok"] is False and server.paths == ["/chat/completions"]
    assert f"answered 308, a redirect to {server.url}" in out["error"]


# --- the environment's proxy is applied by the transport, so its rules hold through the proxy -------------


def test_the_environment_s_proxy_carries_the_call_under_the_same_rules(tmp_path):
    """An http:// API through HTTP_PROXY: the proxy receives the request in absolute form, and a proxy that trickles
    is cut at the deadline; a socks5:// proxy is refused in one line."""
    with ScriptedServer([(200, message(f"```contract\n{DSL}```"))]) as proxy:
        proc = run_cli(
            "translate",
            PROSE,
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://llm.example.invalid/v1",
            "--cache",
            tmp_path / "t.sqlite",
            "--json",
            cwd=tmp_path,
            env=environment(OPENAI_API_KEY="EMPTY", HTTP_PROXY=proxy.url, NO_PROXY="localhost"),
        )
    assert proc.returncode == 0 and json.loads(proc.stdout)["dsl"] == DSL, proc.stdout
    assert proxy.paths == ["http://llm.example.invalid/v1/chat/completions"]
    with RawServer(trickled_body) as trickling:
        proc = run_cli(
            "translate",
            PROSE,
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://llm.example.invalid/v1",
            "--timeout",
            "2",
            "--cache",
            tmp_path / "slow.sqlite",
            cwd=tmp_path,
            env=environment(OPENAI_API_KEY="EMPTY", HTTP_PROXY=trickling.url),
        )
        took = time.monotonic() - trickling.arrivals[0]
    one_error_line(proc, "the model did not answer within 2 s")
    assert took < 30 and len(trickling.requests) == 1  # a hang guard: the trickle never ends by itself
    socks = run_cli(
        "translate",
        PROSE,
        "--backend",
        "openai",
        "--model",
        "m",
        "--base-url",
        "http://llm.example.invalid/v1",
        "--cache",
        tmp_path / "socks.sqlite",
        cwd=tmp_path,
        env=environment(OPENAI_API_KEY="EMPTY", HTTP_PROXY="socks5://127.0.0.1:1"),
    )
    one_error_line(socks, "the proxy the environment names (socks5://127.0.0.1:1) is not an http:// or https:// proxy")
