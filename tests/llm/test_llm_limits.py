"""LLM runs at scale (issue #47): the per-model rate limiter (halved on 429/529, slow start back, pauses the
server names), retries within a budget, run and game limits, stopping with calls in flight, recordings keyed
without the endpoint, and one client shared by many threads — the real `anthropic` and `openai` clients against
scripted servers on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from contractlang.cli.errors import InputError, UsageProblem
from contractlang.cli.llm_options import LlmFlags, llm_settings
from contractlang.files import FileError
from contractlang.llm import (
    ESTIMATE_INPUT_TOKENS,
    MAX_OUTPUT_TOKENS,
    CallFailed,
    GameLimitReached,
    GameLimits,
    LlmClient,
    LlmModel,
    LlmSettings,
    LlmUnavailable,
    LlmUsage,
    RateLimiter,
    Recordings,
    RunLimitReached,
    RunLimits,
    RunStopped,
    cost_of,
    estimate_cost,
)
from contractlang.llm.ratelimit import reset_in
from tests.helpers import run_cli
from tests.llm_server import ScriptedServer, chat_completion, message, overloaded

pytestmark = pytest.mark.e2e  # the real LLM clients against scripted servers on 127.0.0.1

KEY = "sk-test-limits"
ASK = [{"role": "user", "content": "go"}]


def settings(url: str, **update) -> LlmSettings:
    """Small bounds, so every retry and failure here takes a fraction of a second."""
    return LlmSettings(
        **{
            "base_url": url,
            "model": "scripted-model",
            "timeout_seconds": 5,
            "backoff_seconds": 0.02,
            "retry_seconds": 3,
            **update,
        }
    )


def client_of(url: str, provider: str = "anthropic", **update) -> LlmClient:
    return LlmClient(settings(url, provider=provider, **update), KEY)


def rate_limited(status: int = 429) -> tuple:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    return (status, body, 0.02, {"retry-after-ms": "30"}) if status == 429 else (*overloaded(), 0.02, {})


class Outage:
    """A server's answers: `failure` for `seconds` from the first request on, then `success`."""

    def __init__(self, seconds: float, failure: tuple, success: tuple):
        self.seconds, self.failure, self.success = seconds, failure, success
        self.start: float | None = None
        self.lock = threading.Lock()

    def __call__(self, body) -> tuple:
        with self.lock:
            self.start = self.start or time.monotonic()
        return self.failure if time.monotonic() - self.start < self.seconds else self.success


def in_threads(count: int, work) -> list:
    """`work(i)` in `count` threads at once; what each returned or raised, in order."""
    results: list = [None] * count

    def run(i):
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001 - the test looks at what each thread met
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


# --- the rate limiter ----------------------------------------------------------------------------------


def _answer(limiter: RateLimiter, status: int, times: int = 1) -> int:
    """`times` requests sent now, each answered with `status`; the limit after them."""
    for _ in range(times):
        limiter.release(limiter.acquire().sent_at, status)
    return limiter.limit


def test_the_limit_halves_once_per_round_trip_and_doubles_back_per_round_trip_to_the_level_that_worked():
    limiter = RateLimiter(16)
    early = [limiter.acquire().sent_at for _ in range(3)]
    limiter.release(early[0], 429)
    assert limiter.limit == 8
    limiter.release(early[1], 429)  # sent before the decrease: the same congestion, not a new one
    assert limiter.limit == 8
    assert _answer(limiter, 529, 2) == 2  # each sent after the last decrease
    limiter.release(early[2], 200)  # sent before the decreases: says nothing about the lowered limit
    assert limiter.limit == 2 and limiter.in_flight == 0
    assert _answer(limiter, 200) == 3  # slow start: one more per success, twice the limit per round trip
    assert _answer(limiter, 200, 13) == 16  # back to the 16 that worked before the faults, in 4 round trips
    assert _answer(limiter, 200, 20) == 16  # never past --max-connections
    history = [(c.limit, c.reason) for c in limiter.history]
    assert history[:5] == [(16, "start"), (8, "HTTP 429"), (4, "HTTP 529"), (2, "HTTP 529"), (3, "success")]
    assert history[5:] == [(n, "success") for n in range(4, 17)]


def test_a_fault_during_slow_start_comes_back_to_half_the_limit_then_one_per_round_trip():
    limiter = RateLimiter(16)
    assert _answer(limiter, 429) == 8  # after a working spell at 16: come back to 16
    assert _answer(limiter, 200) == 9
    assert _answer(limiter, 429) == 4  # 9 was too many: come back to half of it, 4, then probe
    assert _answer(limiter, 200, 3) == 4 and _answer(limiter, 200) == 5  # one per limit's worth of successes
    assert _answer(limiter, 200, 5) == 6
    assert _answer(limiter, 429, 5) == 1  # the floor


def test_a_place_is_waited_for_and_a_pause_holds_new_requests():
    limiter = RateLimiter(1)
    held = limiter.acquire()
    threading.Timer(0.2, lambda: limiter.release(held.sent_at, 200)).start()
    waited = limiter.acquire(until=time.monotonic() + 0.05)  # a place is waited for past `until`: queueing
    assert waited.queued >= 0.15 and waited.sent_at - held.sent_at >= 0.15
    limiter.release(waited.sent_at, 429, {"retry-after": "3"})
    start = time.monotonic()
    assert limiter.acquire(until=start + 0.1) is None  # the pause outlasts `until`: no wait at all
    assert time.monotonic() - start < 2  # well short of the 3 s pause it would otherwise have waited out
    resumed = limiter.acquire()
    assert resumed.sent_at - start >= 2.9 and resumed.queued == 0  # a pause is not queueing


@pytest.mark.parametrize(
    "value, seconds", [("6m0s", 360.0), ("20ms", 0.02), ("1.5s", 1.5), ("1h2m", 3720.0), ("soon", None), ("5", None)]
)
def test_the_reset_durations_openai_sends_are_read(value, seconds):
    assert reset_in(value) == (pytest.approx(seconds) if seconds is not None else None)


# --- bursts, outages and permanent failures through the real clients -----------------------------------


def test_a_429_burst_halves_the_limit_then_it_recovers():
    """Eight threads, 80 calls, a 0.3 s burst of 429s: every call answered, the limit lowered then raised back to
    max_connections, its history kept."""
    with ScriptedServer(Outage(0.3, rate_limited(), (200, message("ok"), 0.01, {}))) as server:
        client = client_of(server.url, max_connections=8)
        results = in_threads(8, lambda i: [client.for_game(f"g{i}").complete("test", "S", ASK) for _ in range(10)])
    assert results == [["ok"] * 10] * 8
    [history] = client.history().values()
    limits = [c.limit for c in history]
    assert limits[0] == 8 and min(limits) < 8 and limits[-1] == 8 and client.totals().limits == {"scripted-model": 8}
    assert {c.reason for c in history} >= {"HTTP 429", "success"}
    assert history == sorted(history, key=lambda c: c.t)
    totals = client.totals()
    assert totals.calls == 80 and totals.failed == 0 and totals.retries == len(server.requests) - 80 > 0
    assert totals.in_flight == 0 and "limit 8/8" in totals.line


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_529_outage_shorter_than_the_retry_budget_is_survived(provider):
    with ScriptedServer(Outage(0.5, rate_limited(529), (200, message("back")))) as server:
        client = client_of(server.url, provider, max_retries=50)
        assert client.complete("test", "S", ASK) == "back"
    assert len(server.requests) > 2 and client.totals().retries == len(server.requests) - 1


def test_a_permanently_failing_model_fails_the_call_after_bounded_retries_quickly():
    with ScriptedServer(lambda body: rate_limited(529)) as server:
        client = client_of(server.url, max_retries=3)
        start = time.monotonic()
        with pytest.raises(CallFailed, match=r"API error 529: .*Overloaded.* \(after 3 retries in [\d.]+ s\)"):
            client.complete("test", "S", ASK)
        assert len(server.requests) == 4 and time.monotonic() - start < 60  # bounded: a guard against a hang
        budget = client_of(server.url, max_retries=1000, retry_seconds=0.5)
        start = time.monotonic()
        with pytest.raises(CallFailed, match=r"API error 529: .*left of the 0.5 s retry budget"):
            budget.complete("test", "S", ASK)
        assert time.monotonic() - start < 60  # the budget, not the 1,000 retries, ended it: a guard against a hang
    assert client.usage.failed == 1 and client.totals().failed == 1


@pytest.mark.parametrize(
    "provider, headers",
    [
        (
            "anthropic",
            lambda: {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": (datetime.now(UTC) + timedelta(seconds=0.6)).isoformat(),
            },
        ),
        ("openai", lambda: {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "600ms"}),
    ],
)
def test_a_spent_rate_limit_budget_pauses_new_requests_until_its_reset(provider, headers):
    with ScriptedServer(lambda body: (200, message("ok"), 0, headers())) as server:
        client = client_of(server.url, provider)
        client.complete("test", "S", ASK)
        client.for_game("other").complete("test", "S", ASK)  # another game of the same model waits too
    assert server.arrivals[1] - server.arrivals[0] >= 0.5


def test_retry_after_is_honoured():
    replies = [
        (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "wait"}}, 0, {"retry-after": "0.5"}),
        (200, message("ok")),
    ]
    with ScriptedServer(replies) as server:
        assert client_of(server.url).complete("test", "S", ASK) == "ok"
    assert server.arrivals[1] - server.arrivals[0] >= 0.5


# --- run and game limits ----------------------------------------------------------------------------------


def test_the_run_s_cost_and_token_limits_stop_every_game_and_resume_when_raised(tmp_path):
    """claude-haiku-4-5: 100 input and 50 output tokens a call cost $0.00035."""
    per_call = cost_of("claude-haiku-4-5", 100, 50)
    with ScriptedServer(lambda body: (200, message("ok"))) as server:
        run = client_of(
            server.url,
            model="claude-haiku-4-5",
            recordings=tmp_path / "r.sqlite",
            run_limits=RunLimits(cost_usd=per_call * 2.5),
        )
        for game in ("a", "b", "c"):
            run.for_game(game).complete("test", "S", ASK)
        with pytest.raises(RunLimitReached, match=r"cost limit \(\$0.00\) is reached.*--cost-limit"):
            run.for_game("d").complete("test", "S", ASK)
        assert run.totals().cost_usd == pytest.approx(3 * per_call) and len(server.requests) == 3
        raised = client_of(
            server.url,
            model="claude-haiku-4-5",
            recordings=tmp_path / "r.sqlite",
            run_limits=RunLimits(cost_usd=per_call * 4.5),
        )
        for game in ("a", "b", "c", "d", "e"):  # three replayed, two paid
            raised.for_game(game).complete("test", "S", ASK)
        assert len(server.requests) == 5 and raised.totals().replayed == 3
        tokens = client_of(server.url, run_limits=RunLimits(tokens=400))
        tokens.count_earlier(LlmUsage(calls=1, input_tokens=100, output_tokens=50))  # a game an earlier process played
        tokens.for_game("x").complete("test", "S", ASK)
        tokens.for_game("y").complete("test", "S", ASK)
        with pytest.raises(RunLimitReached, match=r"token limit \(400\) is reached: 450 tokens"):
            tokens.for_game("z").complete("test", "S", ASK)
    with pytest.raises(LlmUnavailable, match="--cost-limit cannot be kept for scripted-model: no price"):
        client_of(server.url, run_limits=RunLimits(cost_usd=1))


@pytest.mark.parametrize(
    "limits, calls, kind",
    [
        (GameLimits(messages=2), 2, "messages"),
        (GameLimits(tokens=200), 2, "tokens"),
        (GameLimits(seconds=0.3), 1, "seconds"),
    ],
)
def test_each_game_limit_ends_that_game_only(limits, calls, kind):
    with ScriptedServer(lambda body: (200, message("ok"), 0.2 if kind == "seconds" else 0)) as server:
        client = client_of(server.url)
        game = client.for_game("g", limits=limits)
        for _ in range(calls):
            game.complete("test", "S", ASK)
        if kind == "seconds":
            time.sleep(0.15)
        with pytest.raises(GameLimitReached) as reached:
            game.complete("test", "S", ASK)
        assert (reached.value.kind, reached.value.limit) == (kind, getattr(limits, kind))
        assert not isinstance(reached.value, CallFailed)  # passes the agents: the runner sees it, not an AgentError
        assert pickle.loads(pickle.dumps(reached.value)).kind == kind  # it crosses from a worker process whole
        assert game.limit_reached is not None and game.limit_reached.kind == kind  # the runner records "limited"
        assert game.with_model(LlmModel(model="other")).limit_reached is game.limit_reached
        assert len(game.calls) == calls  # the refused call was never made
        assert client.for_game("h").complete("test", "S", ASK) == "ok" and client.for_game("h").limit_reached is None
        defaulted = LlmClient(settings(server.url, game_limits=limits), KEY).for_game("i")
        for _ in range(calls):
            defaulted.complete("test", "S", ASK)
        if kind == "seconds":
            time.sleep(0.15)
        with pytest.raises(GameLimitReached):  # the settings' game limits apply to every game
            defaulted.complete("test", "S", ASK)


# --- stop and close -------------------------------------------------------------------------------------


def test_stop_lets_calls_in_flight_finish_and_records_them(tmp_path):
    """Two calls in flight (max_connections 2) and two waiting when the run stops: the two finish, are recorded
    and replay in the next run without being paid again; the waiting ones and every later call raise RunStopped."""
    with ScriptedServer(lambda body: (200, message("slow"), 0.5)) as server:
        client = client_of(server.url, max_connections=2, recordings=tmp_path / "r.sqlite")
        stopper = threading.Timer(0.2, lambda: stopped.append(client.stop(grace_seconds=2)))
        stopped: list[int] = []
        stopper.start()
        results = in_threads(4, lambda i: client.for_game(f"g{i}").complete("test", "S", ASK))
        stopper.join()
        assert stopped == [0] and len(server.requests) == 2
        assert sorted(type(r).__name__ for r in results) == ["RunStopped", "RunStopped", "str", "str"]
        with pytest.raises(RunStopped):
            client.for_game("later").complete("test", "S", ASK)
        client.close()
        assert Recordings(tmp_path / "r.sqlite").count() == 2
        resumed = client_of(server.url, max_connections=2, recordings=tmp_path / "r.sqlite")
        answered = [i for i, r in enumerate(results) if r == "slow"]
        for i in range(4):
            resumed.for_game(f"g{i}").complete("test", "S", ASK)
        resumed.close()
    assert len(server.requests) == 4 and resumed.totals().replayed == len(answered) == 2


# --- recordings without the endpoint in their key -------------------------------------------------------


def test_recordings_made_under_the_old_key_with_the_endpoint_still_replay(tmp_path):
    """Recordings written before the endpoint left the key hashed it in: they are read under that key too."""
    with ScriptedServer([(200, message("fresh"))]) as server:
        s = settings(server.url, recordings=tmp_path / "r.sqlite", model="claude-haiku-4-5")
        old = {
            "provider": "anthropic",
            "endpoint": server.url,
            "model": s.model,
            "max_tokens": s.max_tokens,
            "effort": None,
            "thinking": False,
            "system": "S",
            "messages": ASK,
        }
        key = hashlib.sha256(json.dumps(["g", old], sort_keys=True).encode()).hexdigest()
        Recordings(tmp_path / "r.sqlite").put(
            key,
            0,
            "g",
            "test",
            s.model,
            old,
            "recorded",
            {"input_tokens": 7, "output_tokens": 3, "cache_read_tokens": 0, "cache_write_tokens": 0},
            LlmClient(s, KEY).connection.keys,
        )
        game = LlmClient(s, KEY).for_game("g")
        assert game.complete("test", "S", ASK) == "recorded" and game.usage.replayed == 1
        assert game.complete("test", "S", ASK) == "fresh"  # the second identical request was never recorded
        proxied = LlmClient(
            settings("http://127.0.0.1:9/elsewhere", recordings=tmp_path / "r.sqlite", model="claude-haiku-4-5"), KEY
        ).for_game("g")
        assert [proxied.complete("test", "S", ASK) for _ in range(2)] == ["recorded", "fresh"]  # no endpoint asked
    assert len(server.requests) == 1


# --- one client shared by many threads ------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_32_threads_sharing_one_client_keep_at_most_the_limit_in_flight(provider):
    peaks: list[int] = []

    def reply(body):
        return 200, message("ok"), 0.05

    with ScriptedServer(reply) as server:
        client = client_of(server.url, provider, max_connections=5)

        def work(i):
            game = client.for_game(f"g{i}")
            for _ in range(3):
                game.complete("test", "S", ASK)
                peaks.append(client.totals().in_flight)
            return len(game.calls)

        assert in_threads(32, work) == [3] * 32
        client.close()
    assert 4 <= server.peak_in_flight <= 5 and max(peaks) <= 5
    totals = client.totals()
    assert totals.calls == 96 and totals.in_flight == 0 and totals.input_tokens == 9600


# --- estimates and the command-line flags -----------------------------------------------------------------


def test_estimates_come_from_recorded_averages_else_a_stated_default(tmp_path):
    haiku = LlmModel(model="claude-haiku-4-5")
    none = estimate_cost(haiku, 10, None)
    assert none.input_tokens == 10 * ESTIMATE_INPUT_TOKENS and "assumed" in none.source
    assert none.cost_usd == pytest.approx(cost_of("claude-haiku-4-5", none.input_tokens, none.output_tokens))
    replies = [(200, message("a", 1000, 100)), (200, message("b", 3000, 300)), (200, chat_completion("c", 10, 10))]
    with ScriptedServer(replies) as server:
        client = client_of(server.url, model="claude-haiku-4-5", recordings=tmp_path / "r.sqlite")
        client.complete("customer performance", "S", ASK)
        client.complete("judge", "S", [{"role": "user", "content": "other"}])
        other = client_of(server.url, "openai", model="claude-haiku-4-5", recordings=tmp_path / "r.sqlite")
        other.complete("customer performance", "S", ASK)  # the same name through another provider: not counted
    recorded = estimate_cost(haiku, 100, Recordings(tmp_path / "r.sqlite"))
    assert (recorded.input_tokens, recorded.output_tokens) == (
        200_000,
        20_000,
    ) and "2 recorded calls" in recorded.source
    assert recorded.cost_usd == pytest.approx(cost_of("claude-haiku-4-5", 200_000, 20_000))
    purpose = estimate_cost(haiku, 100, Recordings(tmp_path / "r.sqlite"), "judge")
    assert purpose.input_tokens == 300_000 and "1 recorded judge calls" in purpose.source
    assert estimate_cost(LlmModel(provider="openai", model="unknown"), 5, None).cost_usd is None


def test_the_flags_reach_the_settings(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    flags = LlmFlags(
        max_tokens=100,
        llm_timeout=30,
        max_connections=64,
        cost_limit=2.5,
        token_limit=10**6,
        game_token_limit=5000,
        game_time_limit=90,
        game_message_limit=12,
    )
    s = llm_settings(["llm:claude-haiku-4-5"], flags)
    assert s.max_connections == 64 and s.timeout_seconds == 30
    assert s.run_limits == RunLimits(cost_usd=2.5, tokens=10**6)
    assert s.game_limits == GameLimits(tokens=5000, seconds=90, messages=12)
    with pytest.raises(UsageProblem, match="--cost-limit applies to LLM agents"):
        llm_settings(["rational"], LlmFlags(max_tokens=100, llm_timeout=30, cost_limit=1.0))
    with pytest.raises(UsageProblem, match="--max-connections applies to LLM agents"):
        llm_settings(["rational"], LlmFlags(max_tokens=100, llm_timeout=30, max_connections=3))
    assert llm_settings(["rational"], LlmFlags(max_tokens=100, llm_timeout=30)) is None
    with pytest.raises(InputError, match="--cost-limit cannot be kept for claude-unknown: no price"):  # any agent's
        llm_settings(["llm:claude-haiku-4-5", "llm:claude-unknown"], flags)


def test_a_user_agent_s_refused_call_ends_the_game_as_refused_not_as_its_error():
    """A Python agent that calls the model when the run stops or its game's limit is reached: the refusal passes
    the guard that turns what a user's agent raises into an AgentError, so the runner records what happened."""
    from games.agents import AgentError, Guarded
    from games.confined import Confined

    class Asks:
        def __init__(self, error):
            self.error = error

        def act(self, observation):
            raise self.error

    with pytest.raises(RunStopped):
        Guarded(Asks(RunStopped("stopping")), "py:asks", "customer", "contractsim", Confined("py:asks")).act(None)
    with pytest.raises(GameLimitReached):
        Guarded(Asks(GameLimitReached("messages", 3)), "py:asks", "customer", "contractsim", Confined("py:asks")).act(
            None
        )
    with pytest.raises(AgentError, match="raised CallFailed"):
        Guarded(Asks(CallFailed("API error 400")), "py:asks", "customer", "contractsim", Confined("py:asks")).act(None)


def test_the_commands_refuse_limits_they_cannot_keep_in_one_line(tmp_path):
    from tests.helpers import ROOT, run_cli

    env = {"ANTHROPIC_API_KEY": KEY, "PATH": "/usr/bin:/bin"}
    worked = ROOT / "examples" / "worked-example-1.contract"
    unpriced = run_cli(
        "run",
        worked,
        "--env",
        "5",
        "--customer",
        "llm:claude-unknown",
        "--cost-limit",
        "1",
        "--recordings",
        tmp_path / "r.sqlite",
        cwd=tmp_path,
        env=env,
    )
    assert unpriced.returncode == 1 and unpriced.stderr.strip().splitlines() == [
        "error: --cost-limit cannot be kept for claude-unknown: no price is known for it; set --token-limit instead"
    ]
    for bad in (
        ["--max-connections", "0"],
        ["--max-connections", "1001"],
        ["--cost-limit", "nan"],
        ["--game-time-limit", "inf"],
    ):
        proc = run_cli("run", worked, "--env", "5", "--customer", "llm:claude-haiku-4-5", *bad, cwd=tmp_path, env=env)
        assert proc.returncode == 2 and bad[0] in proc.stderr and "Traceback" not in proc.stderr, (bad, proc.stderr)


# --- a provider whose rate-limit headers lie --------------------------------------------------------------


FOREVER = {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "9999-12-31T23:59:59Z"}


@pytest.mark.parametrize(
    "reply",
    [
        (200, message("ok"), 0, FOREVER),  # a success that says no request may follow until the year 9999
        (200, message("ok"), 0, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "99999999h"}),
    ],
)
def test_a_server_given_wait_is_capped(reply):
    provider = "openai" if "x-ratelimit-reset-requests" in reply[3] else "anthropic"
    with ScriptedServer([reply, (200, message("ok"))]) as server:
        client = client_of(server.url, provider, max_server_wait=0.5, retry_seconds=30)
        started = time.monotonic()
        texts = [client.complete("test", "S", ASK) for _ in range(2 if reply[0] == 200 else 1)]
        took = time.monotonic() - started
    assert texts[-1] == "ok" and len(server.requests) == 2
    assert 0.45 <= server.arrivals[1] - server.arrivals[0] and took < 10  # the cap, not the server's word


def test_a_retry_after_beyond_the_budget_ends_the_call_at_once():
    """A 429 asking for more than the retry budget left will not be answered within it: the call fails now,
    naming the wait, instead of sleeping the budget away."""
    refused = (
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "wait"}},
        0,
        {"retry-after": "1e12"},
    )
    with ScriptedServer([refused, (200, message("ok"))]) as server:
        client = client_of(server.url, "anthropic", max_server_wait=0.5, retry_seconds=30)
        started = time.monotonic()
        with pytest.raises(CallFailed, match="asked to wait 1e[+]12 s"):
            client.complete("test", "S", ASK)
        assert time.monotonic() - started < 10  # a guard against sleeping the budget
    assert len(server.requests) == 1


def test_the_game_time_limit_cuts_a_server_pause():
    with ScriptedServer(lambda body: (200, message("ok"), 0, FOREVER)) as server:
        game = client_of(server.url).for_game("g", GameLimits(seconds=1))
        game.complete("test", "S", ASK)
        started = time.monotonic()
        with pytest.raises(GameLimitReached, match="seconds limit"):
            game.complete("test", "S", ASK)  # paused for a minute by the server: the game's second ends it
        assert time.monotonic() - started < 5 and game.limit_reached is not None
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -18_000_000_000, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0},
        {"input_tokens": 10**12, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0},
        {"input_tokens": 1.5, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0},
        {"input_tokens": 100},
    ],
)
def test_an_estimate_refuses_recorded_token_counts_that_are_not_counts(tmp_path, usage):
    recordings = Recordings(tmp_path / "r.sqlite")
    keys = LlmClient(settings("http://127.0.0.1:9"), KEY).connection.keys
    for n, row in enumerate(({**usage, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0}, usage)):
        request = {"provider": "anthropic", "model": "claude-haiku-4-5", "n": n}
        recordings.put(f"k{n}", 0, "g", "test", "claude-haiku-4-5", request, "ok", row, keys)
    with pytest.raises(FileError, match="token counts are unreadable"):
        estimate_cost("claude-haiku-4-5", 10, recordings)


def test_a_huge_output_limit_is_refused():
    with pytest.raises(ValueError, match="max_tokens"):
        LlmSettings(max_tokens=MAX_OUTPUT_TOKENS + 1)
    done = run_cli("translate", "examples/worked-example-1.txt", "--max-tokens", str(MAX_OUTPUT_TOKENS + 1))
    assert done.returncode == 2 and "--max-tokens" in done.stderr and "Traceback" not in done.stderr
