"""The second provider: the real `openai` client against a scripted Chat Completions server on 127.0.0.1 (the same
server speaks the Messages API, so one game can mix providers), and prompt caching as the Messages API receives it."""

import json
import os
import subprocess
import sys

import pytest

from contractlang.cli.render import usage_line
from contractlang.llm import (
    ApiKeys,
    CallFailed,
    LlmClient,
    LlmModel,
    LlmSettings,
    MissingApiKey,
    MissingSdk,
    Recordings,
    agent_model,
    cost_of,
)
from tests.helpers import ROOT, run_cli
from tests.llm_server import ScriptedServer, chat_completion, message, prompt_of

pytestmark = pytest.mark.e2e  # the real openai client against a scripted server on 127.0.0.1

KEY = "sk-openai-test-not-a-real-key"
ANTHROPIC_KEY = "sk-ant-test-not-a-real-key"


def settings(url: str, tmp_path, **update) -> LlmSettings:
    return LlmSettings(
        **{
            "provider": "openai",
            "base_url": url,
            "model": "scripted-model",
            "timeout_seconds": 10,
            "max_retries": 2,
            "recordings": tmp_path / "llm.sqlite",
            **update,
        }
    )


def ask(client: LlmClient, text: str = "same") -> str:
    return client.complete("test", "SYSTEM", [{"role": "user", "content": text}])


def test_agent_names_say_the_provider():
    assert agent_model("llm") == LlmModel(provider="anthropic", model="claude-sonnet-5-5")
    assert agent_model("llm:claude-opus-5") == LlmModel(provider="anthropic", model="claude-opus-5")
    assert agent_model("llm:anthropic/claude-opus-5") == LlmModel(provider="anthropic", model="claude-opus-5")
    assert agent_model("llm:openai/gpt-5") == LlmModel(provider="openai", model="gpt-5")
    assert agent_model("llm:openai/google/gemma-3") == LlmModel(provider="openai", model="google/gemma-3")
    assert agent_model("llm:openai/gpt-5").label == "openai/gpt-5"
    for name in ("llm:mistral/large", "llm:openai/", "llm:openai", "planner", "cmd:x"):
        assert agent_model(name) is None, name


def test_chat_completions_record_and_replay_offline(tmp_path):
    with ScriptedServer(
        [(200, chat_completion("first", 70, 20, cached_tokens=30)), (200, chat_completion("second"))]
    ) as server:
        client = LlmClient(settings(server.url, tmp_path, effort="max"), KEY).for_game("g1")
        answers = [ask(client) for _ in range(2)]
    assert answers == ["first", "second"] and server.paths == ["/chat/completions"] * 2
    body = server.requests[0]
    assert body["messages"] == [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "same"}]
    assert body["model"] == "scripted-model" and body["max_completion_tokens"] == 4096
    assert body["reasoning_effort"] == "xhigh"  # `max` is the Chat Completions API's highest level
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    first = client.calls[0]
    assert (first.provider, first.input_tokens, first.cache_read_tokens, first.output_tokens) == ("openai", 70, 30, 20)
    assert client.usage.cache_read_tokens == 30 and client.usage.cost_usd is None  # no price for this model
    replay = LlmClient(settings(server.url, tmp_path, effort="max", replay=True)).for_game("g1")
    assert [ask(replay) for _ in range(2)] == answers and replay.usage.replayed == 2
    assert replay.usage.model_dump(exclude={"replayed"}) == client.usage.model_dump(exclude={"replayed"})
    assert KEY not in (tmp_path / "llm.sqlite").read_bytes().decode("latin-1")


def test_the_provider_is_part_of_the_recording_key_and_the_endpoint_is_not(tmp_path):
    """The same provider and model through another endpoint (a proxy, a mirror) replays: it is paid once."""
    replies = [(200, chat_completion("openai")), (200, chat_completion("other"))]
    with ScriptedServer(replies) as a, ScriptedServer([(200, chat_completion("b"))]) as b:
        assert ask(LlmClient(settings(a.url, tmp_path), KEY)) == "openai"
        assert ask(LlmClient(settings(b.url, tmp_path), KEY)) == "openai" and b.requests == []  # served
        assert ask(LlmClient(settings(a.url, tmp_path, model="other-model"), KEY)) == "other"  # another model: asked
        assert len(a.requests) == 2
    anthropic = LlmClient(settings(a.url, tmp_path, provider="anthropic", replay=True))
    with pytest.raises(CallFailed, match="no recorded response"):  # the same request to the other provider
        ask(anthropic)
    assert Recordings(tmp_path / "llm.sqlite").count() == 2


def test_transient_chat_errors_are_retried_and_others_fail_in_one_line(tmp_path):
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    with ScriptedServer([(429, error), (500, error), (200, chat_completion("ok"))]) as server:
        client = LlmClient(settings(server.url, tmp_path, recordings=None), KEY)
        assert ask(client) == "ok" and len(server.requests) == 3 and client.usage.calls == 1
    with ScriptedServer(
        [(400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"key {KEY} refused"}})]
    ) as server:
        client = LlmClient(settings(server.url, tmp_path, recordings=None), KEY)
        with pytest.raises(CallFailed, match="API error 400") as failed:
            ask(client)
    assert KEY not in str(failed.value) and "[redacted key]" in str(failed.value)
    with ScriptedServer([(200, b"<html>not json</html>"), (200, {"unexpected": True})]) as server:
        client = LlmClient(settings(server.url, tmp_path, recordings=None), KEY)
        for text in ("a", "b"):
            with pytest.raises(CallFailed, match="not a message"):
                ask(client, text)


def test_cost_is_known_for_listed_models_only():
    assert cost_of("gpt-5", 1_000_000, 1_000_000, provider="openai") == pytest.approx(11.25)
    assert cost_of("gpt-5", 0, 0, cache_read=1_000_000, provider="openai") == pytest.approx(0.125)
    assert cost_of("gpt-5", 1, 1) is None  # an Anthropic model of that name has no price
    assert cost_of("gemini-2.5-flash", 1, 1, provider="openai") is None


def test_a_missing_key_or_sdk_says_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(MissingApiKey, match="export OPENAI_API_KEY="):
        LlmClient(LlmSettings(provider="openai", model="gpt-5"))
    import anthropic  # noqa: F401 - loaded before `openai` goes (the anthropic SDK's models look it up)

    monkeypatch.setitem(sys.modules, "openai", None)  # what `import openai` meets without the extra
    with pytest.raises(MissingSdk, match=r"pip install -e '\.\[openai\]'"):
        LlmClient(LlmSettings(provider="openai", model="gpt-5"), KEY)
    client = LlmClient(LlmSettings(), ApiKeys(anthropic=ANTHROPIC_KEY, openai=KEY))
    with pytest.raises(MissingSdk, match="needs the openai package"):  # a second provider in the same run
        client.with_model(LlmModel(provider="openai", model="gpt-5"))


def test_without_the_extra_an_openai_agent_names_the_install_command(tmp_path):
    """A real interpreter whose `import openai` fails, as it does where the extra is not installed."""
    (tmp_path / "openai.py").write_text("raise ImportError(\"No module named 'openai'\")\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "OPENAI_API_KEY": KEY}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "contractlang",
            "run",
            "examples/ctbench-board-24-swap.contract",
            "--board",
            "24",
            "--red",
            "llm:openai/gpt-5",
            "--recordings",
            str(tmp_path / "r.sqlite"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "pip install -e '.[openai]'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# --- prompt caching that can take effect ---------------------------------------------------------------


def test_the_system_block_and_the_newest_message_are_marked_for_caching(tmp_path):
    """An append-only conversation: each request marks its newest message, so the next request (which repeats
    every message up to it) reads the prefix the one before wrote; the cache tokens reach the ledger totals."""
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 1500,
    }
    with ScriptedServer([(200, {**message("a"), "usage": usage}), (200, {**message("b"), "usage": usage})]) as server:
        client = LlmClient(settings(server.url, tmp_path, provider="anthropic", recordings=None), ANTHROPIC_KEY)
        conversation = [{"role": "user", "content": "first"}]
        conversation.append({"role": "assistant", "content": client.complete("t", "SYSTEM", conversation)})
        conversation.append({"role": "user", "content": "second"})
        client.complete("t", "SYSTEM", conversation)
    mark = {"type": "ephemeral"}
    for body in server.requests:
        assert body["system"] == [{"type": "text", "text": "SYSTEM", "cache_control": mark}]
        *stable, newest = body["messages"]
        assert newest["content"] == [{"type": "text", "text": prompt_of(body), "cache_control": mark}]
        assert all(isinstance(m["content"], str) for m in stable)  # one mark per request besides the system's
    assert [len(b["messages"]) for b in server.requests] == [1, 3]
    assert server.requests[1]["messages"][:2] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "a"},
    ]
    assert (client.usage.cache_write_tokens, client.usage.cache_read_tokens) == (4000, 3000)
    assert usage_line(client.usage).endswith("; prompt cache 3,000 tokens read, 4,000 written")


# --- one game, two providers --------------------------------------------------------------------------


def test_a_game_mixes_providers(tmp_path):
    """An Anthropic Customer against an OpenAI-compatible Supplier, each through its own SDK, on one ledger."""
    from contractlang import check_source
    from games.contractsim.environments import environment
    from games.contractsim.play import play

    def script(body):
        prompt = prompt_of(body)
        if "payment week" in prompt:
            return 200, message('{"payment": 20}')
        keys = [k for k in prompt.split('"') if k.startswith(("buy_", "produce_"))]
        return 200, message(json.dumps({k: int(k.startswith("buy_")) for k in keys}))

    [checked] = check_source((ROOT / "examples/worked-example-1.contract").read_text(), "w").contracts
    keys = ApiKeys(anthropic=ANTHROPIC_KEY, openai=KEY)
    with ScriptedServer(script) as server:
        client = LlmClient(settings(server.url, tmp_path, provider="anthropic"), keys)
        record = play(checked.ir, environment(1), "llm", "llm:openai/scripted-model", seed=1, llm=client)
    calls = [c.provider for c in record.llm_calls]
    assert calls.count("anthropic") == 6 and calls.count("openai") == 10  # 6 payment weeks; 5 × (order, produce)
    assert server.paths == ["/v1/messages" if c == "anthropic" else "/chat/completions" for c in calls]
    auth = [h.get("x-api-key") or h["authorization"].removeprefix("Bearer ") for h in server.headers]
    assert auth == [ANTHROPIC_KEY if p == "/v1/messages" else KEY for p in server.paths]
    replay = LlmClient(settings(server.url, tmp_path, provider="anthropic", replay=True))
    again = play(checked.ir, environment(1), "llm", "llm:openai/scripted-model", seed=1, llm=replay)
    assert again.model_dump(exclude={"llm_calls"}) == record.model_dump(exclude={"llm_calls"})
    assert again.llm_usage.replayed == 16


# --- the CLI --------------------------------------------------------------------------------------------


def openai_cli(*args, key: str | None = KEY):
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return run_cli(*args, cwd=ROOT, env={**env, **({"OPENAI_API_KEY": key} if key else {})})


@pytest.mark.parametrize(
    "args",
    [
        ("run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--red", "llm:openai/gpt-5"),
        ("negotiate", "--env", "1", "--supplier", "llm:openai/gpt-5"),
        ("ctbench", "sweep", "--boards", "0", "--agents", "planner vs llm:openai/gpt-5"),
        ("translate", "tests/nl/01-plain-lists.txt", "--backend", "openai", "--model", "gpt-5"),
    ],
)
def test_an_openai_agent_without_its_key_says_how_to_set_it(args, tmp_path):
    args = (*args, "--out", str(tmp_path / "o")) if "sweep" in args else args
    proc = openai_cli(*args, key=None)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "export OPENAI_API_KEY=" in proc.stderr and not (tmp_path / "o").exists()


def test_a_sweep_of_openai_players_prints_its_llm_total_and_replays(tmp_path):
    from tests.llm.test_llm_agents import BOARD, CTBenchScript

    args = [
        "ctbench",
        "sweep",
        "--boards",
        str(BOARD.id),
        "--condition",
        "none",
        "--mode",
        "pfp",
        "--red",
        "llm:openai/scripted-model",
        "--blue",
        "planner",
        "--workers",
        "1",
    ]
    with ScriptedServer(CTBenchScript()) as server:
        first = openai_cli(
            *args, "--out", str(tmp_path / "a"), "--base-url", server.url, "--recordings", str(tmp_path / "r.sqlite")
        )
    assert first.returncode == 0, first.stderr
    calls = len(server.requests)
    assert set(server.paths) == {"/chat/completions"}
    assert (
        f"LLM: {calls} call(s) (0 replayed, 0 failed), {100 * calls:,} input and {50 * calls:,} output tokens, "
        "cost unknown for this model; prompt cache 0 tokens read, 0 written"
    ) in first.stdout
    again = openai_cli(
        *args,
        "--out",
        str(tmp_path / "b"),
        "--base-url",
        server.url,
        "--recordings",
        str(tmp_path / "r.sqlite"),
        "--replay",
        key=None,
    )
    assert again.returncode == 0 and f"({calls} replayed, 0 failed)" in again.stdout
    assert again.stdout.split("LLM:")[0] == first.stdout.split("LLM:")[0]


def test_translate_with_the_openai_backend(tmp_path):
    from contractlang.translate import translate_text

    dsl = translate_text((ROOT / "tests/nl/01-plain-lists.txt").read_text(), name="deal").dsl
    args = [
        "translate",
        "tests/nl/01-plain-lists.txt",
        "--backend",
        "openai",
        "--model",
        "scripted-model",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--json",
    ]
    with ScriptedServer([(200, message(f"```contract\n{dsl}```"))]) as server:
        first = openai_cli(*args, "--base-url", server.url)
    out = json.loads(first.stdout)
    assert first.returncode == 0 and out["ok"] and out["backend"] == "openai" and server.paths == ["/chat/completions"]
    again = json.loads(openai_cli(*args, "--base-url", server.url, key=None).stdout)  # from the cache, no key
    assert again["cached"] and again["dsl"] == out["dsl"]
    no_model = openai_cli("translate", "tests/nl/01-plain-lists.txt", "--backend", "openai")
    assert no_model.returncode == 2 and "--backend openai needs --model" in no_model.stderr


def test_negotiate_with_openai_agents_records_and_replays_offline(tmp_path):
    """Both negotiators and the performing Customer through the Chat Completions API (a 529 on the way is retried),
    then the same command replays from the recordings with no key and no server, to the same negotiation, game
    and metrics."""
    from tests.llm.test_llm_agents import CONTRACTSIM_SCRIPT

    model = "llm:openai/scripted-model"
    with ScriptedServer(CONTRACTSIM_SCRIPT) as server:
        args = [
            "negotiate",
            "--env",
            "1",
            "--customer",
            model,
            "--supplier",
            model,
            "--perform-customer",
            model,
            "--base-url",
            server.url,
            "--recordings",
            str(tmp_path / "r.sqlite"),
            "--json",
        ]
        first = openai_cli(*args)
    assert first.returncode == 0, first.stdout + first.stderr
    assert set(server.paths) == {"/chat/completions"} and len(server.requests) == 13
    again = openai_cli(*args, "--replay", key=None)
    assert again.returncode == 0, again.stdout + again.stderr
    [played], [replayed] = json.loads(first.stdout)["runs"], json.loads(again.stdout)["runs"]
    assert played["negotiation"]["outcome"] == "agreed"
    [game] = played["performances"]
    assert [w["paid"] for w in game["weeks"] if w["role"] == "customer"] == [20, 0, 20, 20, 20, 10]
    assert {c["provider"] for c in game["llm_calls"]} == {"openai"}

    def without_replay_marks(value):
        """The run minus what a replay may change: each call's `replayed` mark and its seconds."""
        if isinstance(value, dict):
            return {k: without_replay_marks(v) for k, v in value.items() if k not in ("replayed", "seconds")}
        return [without_replay_marks(v) for v in value] if isinstance(value, list) else value

    assert all(c["replayed"] for c in replayed["performances"][0]["llm_calls"])
    assert without_replay_marks(replayed["negotiation"]) == without_replay_marks(played["negotiation"])
    assert (replayed["metrics"], replayed["performances"][0]["weeks"]) == (played["metrics"], game["weeks"])
