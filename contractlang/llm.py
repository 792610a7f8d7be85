"""One LLM client for translation, judges and agents, on two providers' official SDKs: the Anthropic Messages
API (`anthropic`) and any OpenAI-compatible Chat Completions API (`openai`, the optional `[openai]` extra:
OpenAI's models, Gemini's OpenAI-compatible endpoint, local servers such as vLLM, Ollama or llama.cpp's).

- Retries: transient errors (408, 409, 429, 5xx, 529, connection) are retried with the server's
  retry-after (else exponential backoff with full jitter from the connection's seeded generator) up to
  `max_retries` times, all starting within `retry_seconds` of the first attempt; anything else, and a
  transient error past that budget, fails the call in one line that names the cause. `timeout_seconds` bounds
  one attempt; an attempt that runs out of it is not retried (the provider may still bill it).
- Rate limits: one `RateLimiter` per provider and model for the whole connection (every game and thread of
  a process): an in-flight limit that halves on 429/529 at most once per round trip and grows back by one
  per limit's worth of successes up to `max_connections`, and a pause of new requests until the reset the
  server names (retry-after, or its remaining-requests headers at zero).
- Limits: `RunLimits` (cost, tokens) are checked before every call of the connection (`RunLimitReached`);
  `GameLimits` (tokens, seconds, messages) before every call of one game's view (`GameLimitReached`);
  `stop()` makes every later call raise `RunStopped` while calls in flight finish and are recorded.
- Prompt caching: the system prompt and the newest message (the end of the append-only prefix the next
  request repeats) are marked for caching where the API takes marks (Anthropic); OpenAI caches prefixes itself.
- A ledger per game: every call with its purpose, provider, prompt, reply, tokens (cache reads and writes
  apart), cost and time (the run's transcript).
- Record/replay: every provider response is stored in SQLite under a hash of the request (provider and
  model included, the endpoint not: the same model through a proxy replays), the game it belongs to and how many identical requests that game made before it; a
  rerun serves the stored responses, and `replay=True` never calls the provider, so any recorded run replays
  offline exactly.
- Transport: both SDKs send through `contractlang.llm_transport` (a deadline for the whole call, a cap on the
  decoded response, no redirects); every reply and its usage block are validated before anything reads them.
- Caps: a reply is kept, recorded and sent back in the conversation up to REPLY_CAP characters.

API keys are never stored or printed: requests are recorded as the messages sent, and a key is redacted where
text is written or shown (recordings, the ledger, errors), never in the reply the game reads; a key shorter than
MIN_REDACTED_KEY is a placeholder (a local server's `EMPTY`) and is never redacted.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Annotated, Literal, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from contractlang.files import FileError, SqliteFile
from contractlang.vocab import Frozen

DEFAULT_MODEL = "claude-sonnet-5-5"  # claude-sonnet-4-5 reached end of life on 2026-11-30
DEFAULT_RECORDINGS = Path(".contractlang-cache") / "llm.sqlite"
REPLY_CAP = 16_384  # characters: every answer the prompts ask for (an action, a message, a contract) fits many times
# The shortest hosted provider key is Google's (39 characters; OpenAI's are 51+, Anthropic's 100+): any key of 20 or
# more is redacted, while a placeholder for a local server (`a`, `EMPTY`) is no secret and would only corrupt text.
MIN_REDACTED_KEY = 20
TOKEN_COUNT_LIMIT = 10**9  # tokens one reply can report: far above any context window; more is not a count
MAX_BACKOFF_SECONDS = 30.0  # the longest a retry waits of its own accord (a server may ask for longer)
OVERLOADED = (429, 503, 529)  # statuses that say "fewer requests": the in-flight limit is lowered on them
# A call of unknown size, for estimates when no recordings say better: a performance decision's prompt (rules,
# contract, history) is a few thousand tokens, its JSON answer a few hundred.
ESTIMATE_INPUT_TOKENS = 4000
ESTIMATE_OUTPUT_TOKENS = 400
Effort = Literal["low", "medium", "high", "xhigh", "max"]
Provider = Literal["anthropic", "openai"]


class ProviderInfo(Frozen):
    """What a person needs to reach one provider: its key and endpoint variables and how to install its SDK."""

    name: Provider
    title: str
    package: str
    key_variable: str
    key_example: str
    key_source: str
    base_url_variable: str
    default_base_url: str
    install: str | None = None  # the command that installs the SDK; None for a core dependency


PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        name="anthropic",
        title="the Anthropic API",
        package="anthropic",
        key_variable="ANTHROPIC_API_KEY",
        key_example="sk-ant-...",
        key_source="https://console.anthropic.com",
        base_url_variable="ANTHROPIC_BASE_URL",
        default_base_url="https://api.anthropic.com",
    ),
    "openai": ProviderInfo(
        name="openai",
        title="an OpenAI-compatible API",
        package="openai",
        key_variable="OPENAI_API_KEY",
        key_example="sk-...",
        key_source="https://platform.openai.com/api-keys, or any value for a local server",
        base_url_variable="OPENAI_BASE_URL",
        default_base_url="https://api.openai.com/v1",
        install="pip install 'contractlang[openai]' (in a checkout: pip install -e '.[openai]')",
    ),
}


class Price(NamedTuple):
    """USD per million tokens: uncached input, output, cache reads, cache writes."""

    input: float
    output: float
    cache_read: float
    cache_write: float


def _anthropic_price(per_in: float, per_out: float) -> Price:
    return Price(per_in, per_out, per_in * 0.1, per_in * 1.25)  # cache reads 0.1x input, 5-minute writes 1.25x


# List prices (Anthropic's as of 2026-12; OpenAI's as published for these families); a model missing here is
# costed as unknown, never as free. OpenAI bills no cache writes: a cached prefix is written at the input price.
PRICES_PER_MTOK: dict[tuple[str, str], Price] = {
    ("anthropic", "claude-fable-5-1"): _anthropic_price(10.0, 50.0),
    ("anthropic", "claude-opus-5-5"): _anthropic_price(4.0, 20.0),
    ("anthropic", "claude-opus-5"): _anthropic_price(5.0, 25.0),
    ("anthropic", "claude-opus-4-5"): _anthropic_price(5.0, 25.0),
    ("anthropic", "claude-sonnet-5-5"): _anthropic_price(2.0, 10.0),
    ("anthropic", "claude-sonnet-5"): _anthropic_price(2.0, 10.0),
    ("anthropic", "claude-sonnet-4-5"): _anthropic_price(3.0, 15.0),
    ("anthropic", "claude-haiku-4-5"): _anthropic_price(1.0, 5.0),
    ("openai", "gpt-5"): Price(1.25, 10.0, 0.125, 1.25),
    ("openai", "gpt-5-mini"): Price(0.25, 2.0, 0.025, 0.25),
    ("openai", "gpt-5-nano"): Price(0.05, 0.40, 0.005, 0.05),
    ("openai", "gpt-4.1"): Price(2.0, 8.0, 0.5, 2.0),
    ("openai", "gpt-4.1-mini"): Price(0.40, 1.60, 0.10, 0.40),
    ("openai", "gpt-4o"): Price(2.50, 10.0, 1.25, 2.50),
    ("openai", "gpt-4o-mini"): Price(0.15, 0.60, 0.075, 0.15),
}


class LlmUnavailable(Exception):
    """An LLM that cannot be called: the message says what to do (set a key, install the SDK)."""


class MissingApiKey(LlmUnavailable):
    """An LLM option without its provider's key (and not replaying): the message says how to set one."""


class MissingSdk(LlmUnavailable):
    """An LLM of a provider whose SDK is not installed: the message names the command that installs it."""


class CallFailed(Exception):
    """A model call that gave no usable reply in the time allowed: one line, the key never in it. The game's
    agents end the game on it (as an `AgentError`); the runner records the game as errored."""


class CallRefused(Exception):
    """A call refused before it starts, by a limit or a stop: not a CallFailed, so it passes the agents untouched
    and ends the game, and its type tells the runner how to record the game."""


class GameLimitReached(CallRefused):
    """A call one game's view would start after that game's limit (`GameLimits`) is reached: the game ends and
    the runner records it as limited (not errored). The view's `limit_reached` holds it too."""

    def __init__(self, kind: Literal["tokens", "seconds", "messages"], limit: float):
        super().__init__(kind, limit)  # the arguments, so it pickles across worker processes
        self.kind, self.limit = kind, limit

    def __str__(self) -> str:
        return f"the game's {self.kind} limit ({self.limit:g}) is reached"


class RunInterrupted(CallRefused):
    """A call refused because the whole run must stop: the game ends unfinished (neither errored nor limited),
    and rerunning the command resumes it."""


class RunLimitReached(RunInterrupted):
    """The run's cost or token limit (`RunLimits`) is reached: no call starts after it; a rerun with a higher
    limit resumes (recorded replies replay free)."""


class RunStopped(RunInterrupted):
    """The connection was stopped (`LlmClient.stop`, Ctrl-C): no call starts after it."""


def key_hint(provider: str, can_replay: bool = True) -> str:
    """How to set the provider's key (and, where recordings exist to replay, that --replay needs none)."""
    p = PROVIDERS[provider]
    return f"{p.key_variable} is not set: export {p.key_variable}={p.key_example} (a key from {p.key_source})" + (
        ", or pass --replay to serve recorded responses offline" if can_replay else ""
    )


KEY_HINT = key_hint("anthropic")


def endpoint(provider: str, base_url: str | None) -> str:
    """The base URL a call of `provider` goes to: `base_url`, else the SDK's environment variable, else its
    default — the one the request is sent to, so it is also the one records and caches are keyed on."""
    p = PROVIDERS[provider]
    return (base_url or os.environ.get(p.base_url_variable) or p.default_base_url).rstrip("/")


class LlmModel(Frozen):
    """The model of an LLM agent name, with its provider."""

    provider: Provider = "anthropic"
    model: str = DEFAULT_MODEL

    @property
    def label(self) -> str:
        """`MODEL` for Anthropic (as the names always read), `PROVIDER/MODEL` otherwise."""
        return self.model if self.provider == "anthropic" else f"{self.provider}/{self.model}"


def agent_model(name: str) -> LlmModel | None:
    """The model of an `llm`, `llm:MODEL` (Anthropic) or `llm:PROVIDER/MODEL` agent name; None for other names
    (a provider this client does not speak included)."""
    if name == "llm":
        return LlmModel()
    if not name.startswith("llm:"):
        return None
    spec = name[4:].strip()
    provider, slash, model = spec.partition("/")
    if not slash:
        provider, model = "anthropic", spec
    model = model.strip()
    if provider not in PROVIDERS or not model or (not slash and model in PROVIDERS):
        return None
    return LlmModel(provider=provider, model=model)


class ApiKeys(Frozen):
    """The key of each provider, read once where the run starts; never stored or printed."""

    anthropic: str | None = None
    openai: str | None = None

    @classmethod
    def from_environment(cls) -> ApiKeys:
        return cls(**{name: os.environ.get(p.key_variable) or None for name, p in PROVIDERS.items()})

    def of(self, provider: str) -> str | None:
        return getattr(self, provider)


class RunLimits(Frozen):
    """Limits of a whole run (every game of one connection), checked before each call starts: calls already in
    flight finish, so the total can pass a limit by what they cost. None: no limit."""

    cost_usd: float | None = Field(None, ge=0)  # the run's calls' cost (replayed ones and `count_earlier` included)
    tokens: int | None = Field(None, ge=0)  # input (cached or not) plus output tokens, counted the same way


class GameLimits(Frozen):
    """Limits of one game (its view's ledger), checked before each of its calls starts. None: no limit."""

    tokens: int | None = Field(None, ge=0)  # input (cached or not) plus output tokens of the game's calls
    seconds: float | None = Field(None, ge=0)  # since the game's view was made (`for_game`)
    messages: int | None = Field(None, ge=0)  # calls the game has made (each one request to the model)


class LlmSettings(Frozen):
    provider: Provider = "anthropic"
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    effort: Effort | None = None  # Anthropic output_config.effort / OpenAI reasoning_effort, for models that take it
    thinking: bool = False  # adaptive thinking (Anthropic)
    timeout_seconds: float = 60.0  # one attempt, a deadline (translation: its whole loop of attempts)
    # Transient errors retried, every retry starting within retry_seconds of the call's first attempt: the
    # defaults outlast a 30 s burst of 429s and a 60 s outage of 529s (backoffs of up to 1, 2, 4, ... 30 s).
    max_retries: int = Field(20, ge=0)
    retry_seconds: float = Field(300.0, ge=0)
    backoff_seconds: float = Field(1.0, gt=0)  # the first retry's backoff ceiling; doubled per retry
    base_url: str | None = None  # every provider's; None: each SDK's environment variable, else its default
    max_connections: int = Field(10, ge=1, le=1000)  # requests in flight per provider and model, at most
    run_limits: RunLimits = RunLimits()
    game_limits: GameLimits = GameLimits()  # every game's, unless `for_game` is given others
    jitter_seed: int = 0  # the seed of the connection's backoff jitter generator
    recordings: Path | None = None  # the SQLite file responses are recorded in and replayed from
    replay: bool = False  # serve recorded responses only; never call the provider

    @property
    def llm_model(self) -> LlmModel:
        return LlmModel(provider=self.provider, model=self.model)


class LlmCall(Frozen):
    """One exchange with the model, as the ledger and the run log keep it."""

    purpose: str  # e.g. "customer performance", "judge summary", "translation"
    provider: Provider = "anthropic"
    model: str
    prompt: str  # the newest user message (the conversation before it is earlier calls' prompts and replies)
    reply: str
    input_tokens: int = 0  # uncached input
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # None for a model without a known price
    seconds: float = 0.0
    replayed: bool = False
    error: str | None = None


class LlmUsage(Frozen):
    """Totals over a ledger: the token and cost account of one game."""

    calls: int = 0
    failed: int = 0
    replayed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = 0.0

    @classmethod
    def of(cls, calls) -> LlmUsage:
        calls = list(calls)
        costs = [c.cost_usd for c in calls if c.error is None]
        return cls(
            calls=len(calls),
            failed=sum(c.error is not None for c in calls),
            replayed=sum(c.replayed for c in calls),
            **{name: sum(getattr(c, name) for c in calls) for name in _USAGE_FIELDS},
            cost_usd=None if any(c is None for c in costs) else round(sum(costs), 6),
        )

    @property
    def tokens(self) -> int:
        """Input (cached or not) plus output tokens: what the token limits count."""
        return sum(getattr(self, name) for name in _USAGE_FIELDS)


_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def cost_of(
    model: str,
    input_tokens: int,
    output_tokens: int,
    cache_read: int = 0,
    cache_write: int = 0,
    provider: str = "anthropic",
) -> float | None:
    price = PRICES_PER_MTOK.get((provider, model))
    if price is None:
        return None
    return (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read * price.cache_read
        + cache_write * price.cache_write
    ) / 1e6


def priced(model: LlmModel) -> bool:
    """Whether the prices table knows `model` (a cost limit can be kept only for such models)."""
    return (model.provider, model.model) in PRICES_PER_MTOK


def unpriced_for_cost_limit(model: LlmModel) -> str:
    return f"--cost-limit cannot be kept for {model.label}: no price is known for it; set --token-limit instead"


def redact(text: str, keys: ApiKeys) -> str:
    """`text` as it may be written or shown: every key of MIN_REDACTED_KEY characters or more replaced."""
    for key in (keys.anthropic, keys.openai):
        if key and len(key) >= MIN_REDACTED_KEY:
            text = text.replace(key, "[redacted key]")
    return text


def capped(reply: str) -> str:
    """A reply as it is kept and sent back: at most REPLY_CAP characters, a cut one saying so."""
    if len(reply) <= REPLY_CAP:
        return reply
    return reply[:REPLY_CAP] + f"\n[reply cut at {REPLY_CAP:,} characters]"


def _sdk_module(provider: str, who: str | None = None):
    p = PROVIDERS[provider]
    try:
        return importlib.import_module(p.package)
    except ImportError:
        raise MissingSdk(
            f"{who or f'llm:{provider}/MODEL'} needs the {p.package} package, which is not installed: {p.install}"
        ) from None


def check_providers(names: list[str], keys: ApiKeys, replay: bool = False) -> None:
    """Every provider the LLM agents among `names` will call can be called: its key is set and its SDK is
    installed (a replay calls none). Raises LlmUnavailable naming the first agent that cannot."""
    if replay:
        return
    for name in names:
        model = agent_model(name)
        if model is None:
            continue
        if not keys.of(model.provider):
            raise MissingApiKey(f"{name} needs {PROVIDERS[model.provider].title}: {key_hint(model.provider)}")
        _sdk_module(model.provider, name)


def _cause(exc, errors) -> str:
    """The error in one line, its HTTP status first."""
    status = getattr(exc, "status_code", None)
    if status is not None:
        return f"API error {status}: {str(exc)[:300]}"
    if isinstance(exc, errors.APIConnectionError):
        return f"connection error: {str(exc)[:300]}"
    return f"API error: {str(exc)[:300]}"


def _transient(exc, errors) -> bool:
    if isinstance(exc, errors.APIConnectionError):
        return True
    return isinstance(exc, errors.APIStatusError) and (exc.status_code in (408, 409, 429) or exc.status_code >= 500)


class LimitChange(Frozen):
    """One change of a rate limiter's in-flight limit: when (seconds since the limiter was made), to what, why."""

    t: float
    limit: int
    reason: str


class Ticket(NamedTuple):
    """A place under a rate limiter: when its request went out, and how long it waited for the place (pauses apart)."""

    sent_at: float
    queued: float


class RateLimiter:
    """The in-flight limit of one provider and model across every game and thread of a connection, adapted the
    way TCP adapts its window, starting at `max_connections`. An overloaded answer (429, 503, 529) halves the
    limit (floor 1), at most once per round trip: only a request sent after the last decrease lowers it again.
    The first decrease after a working spell notes the limit that worked as the level to come back to. Only a
    request sent after the last decrease raises the limit again (and ends the spell of faults): below that
    level each such success adds 1 (slow start: the limit doubles per round trip), above it 1/limit (one per
    limit's worth of successes), up to `max_connections`. A decrease during slow start notes half the limit
    instead: the doubling overshot. A server that names when to come back (retry-after, or its remaining-requests
    headers at zero) pauses every new request until then. Thread-safe."""

    def __init__(self, max_connections: int, longest_pause: float = 300.0):
        self.max_connections = max_connections
        self.longest_pause = longest_pause
        self._limit = max_connections
        self._come_back_to = max_connections
        self._faulting = False
        self._in_flight = 0
        self._credit = 0.0
        self._paused_until = 0.0
        self._last_decrease = -math.inf
        self._stopped = False
        self._start = time.monotonic()
        self._history = [LimitChange(t=0.0, limit=max_connections, reason="start")]
        self._ready = threading.Condition()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def history(self) -> list[LimitChange]:
        with self._ready:
            return list(self._history)

    def acquire(self, until: float | None = None) -> Ticket | None:
        """Wait for the end of any pause and a free place under the limit; the request's ticket, whose send time
        goes back to `release`. None when a pause lasts past `until` (time.monotonic()): a place is waited for
        however long it takes. RunStopped after `stop`."""
        queued = 0.0
        with self._ready:
            while True:
                if self._stopped:
                    raise RunStopped("the run is stopping: no new LLM call starts")
                now = time.monotonic()
                paused = self._paused_until > now
                if not paused and self._in_flight < self._limit:
                    self._in_flight += 1
                    return Ticket(sent_at=now, queued=queued)
                if paused and until is not None and self._paused_until > until:
                    return None
                self._ready.wait(min(self._paused_until - now, 1.0) if paused else 1.0)
                if not paused:
                    queued += time.monotonic() - now

    def release(self, sent_at: float, status: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        """The request sent at `sent_at` is answered with `status` (None: no answer) and `headers`: the limit
        and the pause follow what the server said."""
        headers = headers or {}
        with self._ready:
            self._in_flight -= 1
            now = time.monotonic()
            if status in OVERLOADED and sent_at >= self._last_decrease:
                self._last_decrease = now
                if not self._faulting:
                    self._faulting = True
                    slow_start = self._limit < self._come_back_to
                    self._come_back_to = max(1, self._limit // 2) if slow_start else self._limit
                if self._limit > 1:
                    self._change(max(1, self._limit // 2), f"HTTP {status}", now)
            elif status is not None and 200 <= status < 300 and sent_at >= self._last_decrease:
                self._faulting = False  # a request sent at the lowered limit went through
                if self._limit < self._come_back_to:
                    self._change(self._limit + 1, "success", now)
                elif self._limit < self.max_connections:
                    self._credit += 1 / self._limit
                    if self._credit >= 1:
                        self._change(self._limit + 1, "success", now)
            resume = _resume_at(headers, status, now)
            if resume is not None:
                self._paused_until = max(self._paused_until, min(resume, now + self.longest_pause))
            self._ready.notify_all()

    def stop(self) -> None:
        """Every request waiting for a place, and every later one, raises RunStopped."""
        with self._ready:
            self._stopped = True
            self._ready.notify_all()

    def _change(self, limit: int, reason: str, now: float) -> None:
        self._limit = limit
        self._credit = 0.0
        self._history.append(LimitChange(t=round(now - self._start, 3), limit=limit, reason=reason))


def _asked_wait(headers: Mapping[str, str]) -> float | None:
    """The seconds the server asked to wait before retrying (retry-after-ms, else retry-after in seconds or as an
    HTTP date); None when it did not ask."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            try:
                seconds = parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


# The providers' rate-limit headers: (remaining, reset) pairs, each a budget that pauses new requests when spent.
_ANTHROPIC_BUDGETS = tuple(
    (f"anthropic-ratelimit-{kind}-remaining", f"anthropic-ratelimit-{kind}-reset")
    for kind in ("requests", "tokens", "input-tokens", "output-tokens")
)
_OPENAI_BUDGETS = tuple(
    (f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}") for kind in ("requests", "tokens")
)
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _reset_in(value: str) -> float | None:
    """Seconds until a rate-limit reset: an RFC 3339 time (Anthropic's) or a duration such as `6m0s` or `20ms`
    (OpenAI's); None for anything else."""
    try:
        return datetime.fromisoformat(value.strip()).timestamp() - time.time()
    except ValueError:
        pass
    total, number = 0.0, ""
    rest = value.strip()
    while rest:
        if rest[0].isdigit() or rest[0] == ".":
            number, rest = number + rest[0], rest[1:]
            continue
        unit = "ms" if rest.startswith("ms") else rest[0]
        if unit not in _DURATION_UNITS or not number:
            return None
        try:
            total += float(number) * _DURATION_UNITS[unit]
        except ValueError:
            return None
        number, rest = "", rest[len(unit) :]
    return total if not number else None


def _resume_at(headers: Mapping[str, str], status: int | None, now: float) -> float | None:
    """When (time.monotonic()) new requests may go again by what the server said: its retry-after on an
    overloaded answer, else the latest reset of a rate-limit budget it reports spent; None: no pause."""
    asked = _asked_wait(headers) if status in OVERLOADED else None
    resets = [asked] if asked is not None else []
    for remaining, reset in (*_ANTHROPIC_BUDGETS, *_OPENAI_BUDGETS):
        if headers.get(remaining, "").strip() == "0" and headers.get(reset) is not None:
            seconds = _reset_in(headers[reset])
            if seconds is not None and math.isfinite(seconds):
                resets.append(max(0.0, seconds))
    return now + max(resets) if resets else None


def _not_a_message(detail: str = "") -> CallFailed:
    return CallFailed(
        "the API answered with something that is not a message" + (f" ({detail[:120]})" if detail else "")
    )


TokenCount = Annotated[int, Field(ge=0, le=TOKEN_COUNT_LIMIT)]


class _Wire(BaseModel):
    """A reply as it comes over the wire, read strictly (no NaN, no 1.5 tokens, no number for a text): fields this
    client does not read are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)


class _MessagesBlock(_Wire):
    type: str
    text: str | None = None  # a text block's; other blocks (thinking, tool use) are not read

    @model_validator(mode="after")
    def _text_block_has_text(self):
        if self.type == "text" and self.text is None:
            raise ValueError("a text block without text")
        return self


class _MessagesUsage(_Wire):
    input_tokens: TokenCount | None = None
    output_tokens: TokenCount | None = None
    cache_read_input_tokens: TokenCount | None = None
    cache_creation_input_tokens: TokenCount | None = None


class _MessagesReply(_Wire):
    content: list[_MessagesBlock]
    usage: _MessagesUsage


class _ChatMessage(_Wire):
    content: str | None = None


class _ChatChoice(_Wire):
    message: _ChatMessage


class _PromptDetails(_Wire):
    cached_tokens: TokenCount | None = None


class _ChatUsage(_Wire):
    prompt_tokens: TokenCount | None = None
    completion_tokens: TokenCount | None = None
    prompt_tokens_details: _PromptDetails | None = None


class _ChatReply(_Wire):
    choices: list[_ChatChoice] = Field(min_length=1)
    usage: _ChatUsage


class _RecordedUsage(Frozen):
    """The token counts a recording keeps (and a reply's usage block becomes)."""

    input_tokens: TokenCount
    output_tokens: TokenCount
    cache_read_tokens: TokenCount
    cache_write_tokens: TokenCount


def _validated(model: type[_Wire], body: bytes):
    """The reply `body` read as `model`; CallFailed naming the first field that is wrong."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise _not_a_message(f"{where}: {first['msg']}" if where else first["msg"]) from None


class _AnthropicWire:
    """The Messages API: the system prompt and the newest message marked for prompt caching."""

    @staticmethod
    def client(sdk, key: str, base_url: str, http_client):
        return sdk.Anthropic(api_key=key, base_url=base_url, max_retries=0, http_client=http_client)

    @staticmethod
    def send(client, s: LlmSettings, system: str, messages: list[dict], timeout: float):
        extra: dict = {}
        if s.effort is not None:
            extra["output_config"] = {"effort": s.effort}
        if s.thinking:
            extra["thinking"] = {"type": "adaptive"}
        mark = {"type": "ephemeral"}
        blocks = [{"type": "text", "text": system, "cache_control": mark}] if system else []
        marked = list(messages)
        if marked:
            last = marked[-1]
            content = last["content"]
            content = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            marked[-1] = {**last, "content": [*content[:-1], {**content[-1], "cache_control": mark}]}
        return client.messages.with_raw_response.create(
            model=s.model, max_tokens=s.max_tokens, timeout=timeout, system=blocks, messages=marked, **extra
        )

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_MessagesReply, body)
        u = reply.usage
        return "".join(b.text for b in reply.content if b.type == "text"), {
            "input_tokens": u.input_tokens or 0,
            "output_tokens": u.output_tokens or 0,
            "cache_read_tokens": u.cache_read_input_tokens or 0,
            "cache_write_tokens": u.cache_creation_input_tokens or 0,
        }


class _ChatCompletionsWire:
    """The Chat Completions API: the system prompt as the first message; `--effort` as reasoning_effort (its
    highest level is xhigh, which `max` maps to). The server caches prefixes itself and reports the reads."""

    @staticmethod
    def client(sdk, key: str, base_url: str, http_client):
        return sdk.OpenAI(api_key=key, base_url=base_url, max_retries=0, http_client=http_client)

    @staticmethod
    def send(client, s: LlmSettings, system: str, messages: list[dict], timeout: float):
        extra = {"reasoning_effort": "xhigh" if s.effort == "max" else s.effort} if s.effort is not None else {}
        wire = ([{"role": "system", "content": system}] if system else []) + list(messages)
        return client.chat.completions.with_raw_response.create(
            model=s.model, max_completion_tokens=s.max_tokens, timeout=timeout, messages=wire, **extra
        )

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_ChatReply, body)
        u = reply.usage
        prompt, cached = u.prompt_tokens or 0, (u.prompt_tokens_details and u.prompt_tokens_details.cached_tokens) or 0
        return reply.choices[0].message.content or "", {
            "input_tokens": max(prompt - cached, 0),
            "output_tokens": u.completion_tokens or 0,
            "cache_read_tokens": cached,
            "cache_write_tokens": 0,
        }


_WIRES = {"anthropic": _AnthropicWire, "openai": _ChatCompletionsWire}


class Recordings:
    """The record/replay store: one row per provider response, keyed by request hash and occurrence. A row
    that cannot be read (a corrupt page, a NULL reply, usage that is not token counts) is a FileError: one line
    naming the file."""

    _DDL = """CREATE TABLE IF NOT EXISTS llm_recordings_v1 (
      key TEXT, occurrence INTEGER, namespace TEXT, purpose TEXT, model TEXT, created_at REAL,
      request_json TEXT, reply TEXT, usage_json TEXT, PRIMARY KEY (key, occurrence));"""

    def __init__(self, path: Path, replay: bool = False):
        self.path = Path(path)
        if replay and not self.path.exists():
            raise FileError(
                f"{self.path}: no such recordings file to replay from; record the run first (without "
                "--replay) or pass --recordings with the file it was recorded in"
            )
        self._file = SqliteFile(
            self.path, {"llm_recordings_v1"}, self._DDL, "recordings file of LLM responses", "--recordings"
        )

    def _db(self):
        return self._file.session()

    def close(self) -> None:
        self._file.close()

    def _unusable(self, why: str) -> FileError:
        return self._file.damaged(why)

    def get(self, key: str, occurrence: int) -> tuple[str, dict] | None:
        with self._db() as db:
            row = db.execute(
                "SELECT reply, usage_json FROM llm_recordings_v1 WHERE key = ? AND occurrence = ?", (key, occurrence)
            ).fetchone()
        if row is None:
            return None
        reply, usage_json = row
        if not isinstance(reply, str):
            raise self._unusable(f"a recorded reply is {'NULL' if reply is None else type(reply).__name__}, not text")
        try:
            usage = _RecordedUsage.model_validate_json(usage_json, strict=True)
        except (TypeError, ValidationError):
            raise self._unusable("a recorded response's token counts are unreadable") from None
        return capped(reply), usage.model_dump()

    def put(
        self,
        key: str,
        occurrence: int,
        namespace: str,
        purpose: str,
        model: str,
        request: dict,
        reply: str,
        usage: dict,
        keys: ApiKeys,
    ) -> None:
        """Record one response; the request and reply are written with `keys` redacted."""
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO llm_recordings_v1 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    occurrence,
                    namespace,
                    purpose,
                    model,
                    time.time(),
                    redact(json.dumps(request), keys),
                    redact(reply, keys),
                    json.dumps(usage),
                ),
            )

    def count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone()[0]

    def averages(self, model: LlmModel, purpose: str | None = None) -> tuple[int, dict] | None:
        """How many calls of `model` (of `purpose`, when given) are recorded and their mean token counts; None
        when there are none."""
        fields = ", ".join(f"AVG(json_extract(usage_json, '$.{name}'))" for name in _USAGE_FIELDS)
        query = (
            f"SELECT COUNT(*), {fields} FROM llm_recordings_v1 WHERE model = ? AND "
            "COALESCE(json_extract(request_json, '$.provider'), 'anthropic') = ?"
        )
        args: tuple = (model.model, model.provider)
        if purpose is not None:
            query, args = query + " AND purpose = ?", (*args, purpose)
        with self._db() as db:
            count, *means = db.execute(query, args).fetchone()
        if not count:
            return None
        return count, dict(zip(_USAGE_FIELDS, (m or 0.0 for m in means)))


class LlmTotals(LlmUsage):
    """What a connection's calls came to so far (a ledger's totals over every game of the process, and what the
    connection alone knows), for the progress line and the run limits."""

    retries: int = 0
    cost_usd: float = 0.0  # of the calls of priced models (replayed ones and `count_earlier` included)
    unpriced: int = 0  # answered calls of models without a known price, not in cost_usd
    in_flight: int = 0
    limits: dict[str, int] = Field(default_factory=dict)  # the current in-flight limit of each model called (its label)
    history: dict[str, list[LimitChange]] = Field(default_factory=dict)  # each model's limit changes so far
    max_connections: int = 10

    @property
    def tokens(self) -> int:
        """Input (cached or not) plus output tokens: what `RunLimits.tokens` counts."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def line(self) -> str:
        """The progress line's part: `$1.23 spent · 5 in flight · limit 37/64`."""
        limits = ", ".join(
            f"{v}/{self.max_connections}" if len(self.limits) == 1 else f"{k} {v}/{self.max_connections}"
            for k, v in self.limits.items()
        )
        return (
            f"${self.cost_usd:,.2f} spent"
            + (f" (+{self.unpriced} unpriced calls)" if self.unpriced else "")
            + f" · {self.in_flight} in flight"
            + (f" · limit {limits}" if limits else "")
        )


class CostEstimate(NamedTuple):
    """Tokens and cost expected of a number of calls, and where the per-call figures come from."""

    input_tokens: int  # cached or not
    output_tokens: int
    cost_usd: float | None  # None for a model without a known price
    source: str


def estimate_cost(
    model: LlmModel | str, calls: int, recordings: Recordings | None = None, purpose: str | None = None
) -> CostEstimate:
    """What `calls` calls of `model` (an Anthropic model's name, or an LlmModel) are expected to cost: the
    averages of its recorded calls (of `purpose`, when given and recorded) when `recordings` has any, else
    ESTIMATE_INPUT_TOKENS and ESTIMATE_OUTPUT_TOKENS a call, priced by `cost_of`."""
    model = model if isinstance(model, LlmModel) else LlmModel(model=model)
    averages = None
    if recordings is not None:
        averages = (purpose is not None and recordings.averages(model, purpose)) or recordings.averages(model)
    if averages:
        count, usage = averages
        what = f"{purpose} calls" if purpose is not None and recordings.averages(model, purpose) else "calls"
        source = f"the average of {count:,} recorded {what} of {model.label} in {recordings.path}"
    else:
        usage = {
            "input_tokens": ESTIMATE_INPUT_TOKENS,
            "output_tokens": ESTIMATE_OUTPUT_TOKENS,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        }
        source = (
            f"no recorded calls of {model.label}: {ESTIMATE_INPUT_TOKENS:,} input and {ESTIMATE_OUTPUT_TOKENS:,} "
            "output tokens a call assumed"
        )
    cost = cost_of(model.model, *(usage[name] * calls for name in _USAGE_FIELDS), provider=model.provider)
    return CostEstimate(
        input_tokens=round(calls * (usage["input_tokens"] + usage["cache_read_tokens"] + usage["cache_write_tokens"])),
        output_tokens=round(calls * usage["output_tokens"]),
        cost_usd=None if cost is None else round(cost, 6),
        source=source,
    )


class _Connection:
    """What every view of one client shares: the SDK clients (one per provider, made at first use, over one
    pooled transport), a rate limiter per provider and model, the run limits and totals, the stop signal, the
    recordings, the keys and the jitter generator."""

    def __init__(self, settings: LlmSettings, keys: ApiKeys):
        if settings.replay and settings.recordings is None:
            raise MissingApiKey("--replay needs a recordings file to replay from (--recordings FILE)")
        self.keys = keys
        self.base_url = settings.base_url
        self.replay = settings.replay
        self.max_connections = settings.max_connections
        self.retry_seconds = settings.retry_seconds
        self.run_limits = settings.run_limits
        self.recordings = Recordings(settings.recordings, settings.replay) if settings.recordings is not None else None
        self.stopped = threading.Event()
        self._jitter = random.Random(settings.jitter_seed)
        self._limiters: dict[LlmModel, RateLimiter] = {}
        self._clients: dict[str, object] = {}
        self._lock = threading.Lock()
        self._totals = LlmTotals(max_connections=settings.max_connections).model_dump()
        self._transport = None
        self.require(settings.llm_model)

    @property
    def transport(self):
        """The HTTP transport of every SDK client of this connection, made with the first of them."""
        if self._transport is None:
            from contractlang.llm_transport import Transport

            self._transport = Transport(keepalive=self.max_connections)
        return self._transport

    def require(self, model: LlmModel) -> None:
        """Fail now, in one line, when `model` will have to be called and cannot be: no key, no SDK, or a cost
        limit it has no price for."""
        if self.run_limits.cost_usd is not None and not priced(model):
            raise LlmUnavailable(unpriced_for_cost_limit(model))
        if not self.replay:
            self.client(model.provider)

    def client(self, provider: str):
        with self._lock:
            if provider not in self._clients:
                key = self.keys.of(provider)
                if not key:
                    raise MissingApiKey(key_hint(provider, can_replay=self.recordings is not None))
                sdk = _sdk_module(provider)
                from contractlang.llm_transport import http_client

                self._clients[provider] = _WIRES[provider].client(
                    sdk, key, endpoint(provider, self.base_url), http_client(self.transport)
                )
            return self._clients[provider]

    def limiter(self, model: LlmModel) -> RateLimiter:
        with self._lock:
            if model not in self._limiters:
                self._limiters[model] = RateLimiter(self.max_connections, self.retry_seconds)
                if self.stopped.is_set():
                    self._limiters[model].stop()
            return self._limiters[model]

    def backoff(self, retry: int, base: float) -> float:
        """A retry's own wait: full jitter, uniform up to `base` doubled per retry (at most MAX_BACKOFF_SECONDS)."""
        with self._lock:
            return self._jitter.uniform(0.0, min(MAX_BACKOFF_SECONDS, base * 2**retry))

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, or raise RunStopped as soon as the connection is stopped."""
        if self.stopped.wait(seconds):
            raise RunStopped("the run is stopping: no LLM call is retried")

    def check_run_limits(self) -> None:
        """RunStopped after `stop`; RunLimitReached once the run's calls reach a limit of `run_limits`."""
        if self.stopped.is_set():
            raise RunStopped("the run is stopping: no new LLM call starts")
        totals, limits = self.totals(), self.run_limits
        if limits.cost_usd is not None and totals.cost_usd >= limits.cost_usd:
            raise RunLimitReached(
                f"the run's cost limit (${limits.cost_usd:,.2f}) is reached: ${totals.cost_usd:,.2f}"
                " spent; rerun with a higher --cost-limit to go on"
            )
        if limits.tokens is not None and totals.tokens >= limits.tokens:
            raise RunLimitReached(
                f"the run's token limit ({limits.tokens:,}) is reached: {totals.tokens:,} tokens "
                "used; rerun with a higher --token-limit to go on"
            )

    def count(self, call: LlmCall | LlmUsage, retries: int = 0) -> None:
        """Add a call (or an earlier process's usage) to the totals."""
        usage = call if isinstance(call, LlmUsage) else LlmUsage.of([call])
        with self._lock:
            t = self._totals
            for name in ("calls", "replayed", "failed", *_USAGE_FIELDS):
                t[name] += getattr(usage, name)
            t["retries"] += retries
            if usage.cost_usd is None:
                t["unpriced"] += usage.calls - usage.failed
            else:
                t["cost_usd"] += usage.cost_usd

    def totals(self) -> LlmTotals:
        with self._lock:
            limiters = dict(self._limiters)
            totals = dict(self._totals)
        return LlmTotals(
            **{
                **totals,
                "in_flight": sum(lim.in_flight for lim in limiters.values()),
                "limits": {model.label: lim.limit for model, lim in limiters.items()},
                "history": {model.label: lim.history for model, lim in limiters.items()},
            }
        )

    def in_flight(self) -> int:
        with self._lock:
            return sum(lim.in_flight for lim in self._limiters.values())

    def stop(self, grace_seconds: float = 5.0) -> int:
        """No call starts from now on (each raises RunStopped); calls in flight may finish, and be recorded, for
        up to `grace_seconds`. How many were still in flight when the grace ran out."""
        self.stopped.set()
        with self._lock:
            limiters = list(self._limiters.values())
        for limiter in limiters:
            limiter.stop()
        end = time.monotonic() + grace_seconds
        while self.in_flight() and time.monotonic() < end:
            time.sleep(0.02)
        return self.in_flight()

    def close(self) -> None:
        """Close the SDK clients, the pooled connections under them and the recordings file."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
        if self._transport is not None:
            self._transport.close()
        if self.recordings is not None:
            self.recordings.close()


class _Game:
    """One game's state every view of it shares: the ledger, the replay positions, the limits and when it began."""

    def __init__(self, limits: GameLimits):
        self.limits = limits
        self.calls: list[LlmCall] = []
        self.occurrences: Counter[str] = Counter()
        self.started = time.monotonic()
        self.limit_reached: GameLimitReached | None = None

    def check(self) -> None:
        """GameLimitReached (kept in `limit_reached`) when a limit of the game is reached."""
        if self.limit_reached is None:
            limits, usage = self.limits, LlmUsage.of(self.calls)
            if limits.messages is not None and usage.calls >= limits.messages:
                self.limit_reached = GameLimitReached("messages", limits.messages)
            elif limits.tokens is not None and usage.tokens >= limits.tokens:
                self.limit_reached = GameLimitReached("tokens", limits.tokens)
            elif limits.seconds is not None and time.monotonic() - self.started >= limits.seconds:
                self.limit_reached = GameLimitReached("seconds", limits.seconds)
        if self.limit_reached is not None:
            raise GameLimitReached(self.limit_reached.kind, self.limit_reached.limit)


class LlmClient:
    """The shared client; `for_game(namespace)` gives a view with its own ledger, replay positions and game
    limits. One client (one connection: pooled HTTP clients, rate limiters, run limits, totals) serves every
    game and thread of a process. `api_key` is the key of `settings.provider`, or every provider's keys."""

    def __init__(
        self,
        settings: LlmSettings,
        api_key: str | ApiKeys | None = None,
        namespace: str = "",
        connection: _Connection | None = None,
        game: _Game | None = None,
    ):
        self.settings = settings
        self.namespace = namespace
        keys = api_key if isinstance(api_key, ApiKeys) else ApiKeys(**{settings.provider: api_key})
        self.connection = connection or _Connection(settings, keys)
        self._game = game or _Game(settings.game_limits)

    @property
    def recordings(self) -> Recordings | None:
        return self.connection.recordings

    @property
    def calls(self) -> list[LlmCall]:
        """This game's ledger (every view of the game shares it)."""
        return self._game.calls

    @property
    def limit_reached(self) -> GameLimitReached | None:
        """The game limit this game's calls reached (then the game ended: record it as limited), else None."""
        return self._game.limit_reached

    def for_game(self, namespace: str, limits: GameLimits | None = None) -> LlmClient:
        """A view for one game: same connection, rate limiters, run limits and store; its own ledger, and
        `limits` (default: the settings' `game_limits`) counted from now."""
        return LlmClient(
            self.settings,
            namespace=namespace,
            connection=self.connection,
            game=_Game(self.settings.game_limits if limits is None else limits),
        )

    def with_model(self, model: LlmModel) -> LlmClient:
        """This view with another model (of any provider); its calls join the same ledger."""
        if model == self.settings.llm_model:
            return self
        self.connection.require(model)
        return LlmClient(
            self.settings.model_copy(update={"provider": model.provider, "model": model.model}),
            namespace=self.namespace,
            connection=self.connection,
            game=self._game,
        )

    def with_max_tokens(self, max_tokens: int) -> LlmClient:
        """This view with another output limit (a stage of a run that asks for shorter answers)."""
        if max_tokens == self.settings.max_tokens:
            return self
        return LlmClient(
            self.settings.model_copy(update={"max_tokens": max_tokens}),
            namespace=self.namespace,
            connection=self.connection,
            game=self._game,
        )

    @property
    def usage(self) -> LlmUsage:
        return LlmUsage.of(self.calls)

    def totals(self) -> LlmTotals:
        """The whole connection's totals (every game's calls), thread-safe."""
        return self.connection.totals()

    def history(self) -> dict[str, list[LimitChange]]:
        """Each model's in-flight limit changes (its label: its history)."""
        with self.connection._lock:
            limiters = dict(self.connection._limiters)
        return {model.label: lim.history for model, lim in limiters.items()}

    def count_earlier(self, usage: LlmUsage) -> None:
        """Count usage an earlier process of this run spent (games it finished, which this one will not play
        again) toward the run limits and totals."""
        self.connection.count(usage)

    def stop(self, grace_seconds: float = 5.0) -> int:
        """Stop the connection: every later call raises RunStopped; calls in flight may finish (and are recorded)
        for up to `grace_seconds`. How many were still in flight after it."""
        return self.connection.stop(grace_seconds)

    def close(self) -> None:
        """Close the pooled HTTP clients of the connection (every view's)."""
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _key(self, request: dict) -> str:
        return hashlib.sha256(json.dumps([self.namespace, request], sort_keys=True).encode()).hexdigest()

    def complete(self, purpose: str, system: str, messages: list[dict], deadline: float | None = None) -> str:
        """The model's text reply to `messages` under `system`; every call lands in the ledger. Before it
        starts: RunStopped, RunLimitReached, GameLimitReached (see each); `deadline` (time.monotonic()) bounds
        every attempt and retry of the call besides the settings' own bounds."""
        s = self.settings
        self.connection.check_run_limits()
        self._game.check()
        request = {
            "provider": s.provider,
            "model": s.model,
            "max_tokens": s.max_tokens,
            "effort": s.effort,
            "thinking": s.thinking,
            "system": system,
            "messages": messages,
        }
        digest = self._key(request)
        stored = {**request, "endpoint": endpoint(s.provider, s.base_url)}  # as recorded: where it was sent
        occurrence = self._game.occurrences[digest]
        self._game.occurrences[digest] += 1
        prompt = _text_of(messages[-1]["content"]) if messages else ""
        start = time.perf_counter()
        recorded = self.recordings.get(digest, occurrence) if self.recordings is not None else None
        if recorded is None and self.recordings is not None:
            # Recordings made when the key hashed the endpoint too still replay through it, and from then on
            # through any endpoint: they are stored under the key without it as well.
            recorded = self.recordings.get(self._key(stored), occurrence)
            if recorded is not None:
                self.recordings.put(
                    digest, occurrence, self.namespace, purpose, s.model, stored, *recorded, self.connection.keys
                )
        if recorded is not None:
            reply, usage = recorded
            self._log(purpose, prompt, reply, usage, time.perf_counter() - start, replayed=True)
            return reply
        if s.replay:
            error = (
                f"no recorded response for this {purpose} request (game {self.namespace or '-'}) in "
                f"{self.recordings.path}; run once without --replay to record it"
            )
            self._log(purpose, prompt, "", {}, 0.0, error=error)
            raise CallFailed(error)
        retries = [0]
        try:
            text, usage = self._create(system, messages, deadline, retries)
            reply = capped(text)
            if self.recordings is not None:
                self.recordings.put(
                    digest, occurrence, self.namespace, purpose, s.model, stored, reply, usage, self.connection.keys
                )
        except CallFailed as exc:
            if self.connection.stopped.is_set():  # cut by the stop, not the model's doing: the game resumes
                raise RunStopped("the run is stopping: an LLM call in flight was cut") from None
            message = self.redact(str(exc))
            self._log(purpose, prompt, "", {}, time.perf_counter() - start, error=message, retries=retries[0])
            raise CallFailed(message) from None
        self._log(purpose, prompt, reply, usage, time.perf_counter() - start, retries=retries[0])
        return reply

    def redact(self, value):
        """A text, or JSON value of texts, as it may be written or shown (see `redact`)."""
        if isinstance(value, str):
            return redact(value, self.connection.keys)
        if isinstance(value, dict):
            return {k: self.redact(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact(v) for v in value]
        return value

    def _log(self, purpose, prompt, reply, usage, seconds, replayed=False, error=None, retries=0) -> None:
        """The call into the ledger, which runs write out (its texts redacted), and into the connection's totals."""
        s = self.settings
        cost = cost_of(s.model, *(usage.get(name, 0) for name in _USAGE_FIELDS), provider=s.provider)
        call = LlmCall(
            purpose=purpose,
            provider=s.provider,
            model=s.model,
            prompt=self.redact(prompt),
            reply=self.redact(reply),
            cost_usd=cost if error is None else 0.0,
            seconds=seconds,
            replayed=replayed,
            error=error,
            **usage,
        )
        self.calls.append(call)
        self.connection.count(call, retries)

    def _create(
        self, system: str, messages: list[dict], deadline: float | None, retries: list[int]
    ) -> tuple[str, dict]:
        """One call: each attempt within timeout_seconds (and `deadline`) under the model's rate limiter;
        transient errors retried up to `max_retries` times, every retry starting within retry_seconds of the
        first attempt (and before `deadline`), time spent waiting for a place under the limit not counted: a retry
        that cannot ends the call at once, with the error that caused it."""
        from contractlang.llm_transport import ResponseRefused

        s = self.settings
        wire, errors = _WIRES[s.provider], _sdk_module(s.provider)
        client = self.connection.client(s.provider)
        limiter = self.connection.limiter(s.llm_model)
        cause, retry, first, budget = None, 0, 0.0, deadline
        while True:
            ticket = limiter.acquire(budget)
            if ticket is None:
                raise CallFailed(
                    f"{cause}; the API's rate limit held the retry past the {s.retry_seconds:g} s retry budget"
                    if cause
                    else f"the model did not answer within {s.timeout_seconds:g} s"
                )
            sent_at = ticket.sent_at
            if retry == 0:
                first = sent_at
                budget = sent_at + s.retry_seconds
            else:  # queueing behind other games is no retrying
                budget += ticket.queued
            budget = budget if deadline is None else min(deadline, budget)
            end = sent_at + s.timeout_seconds if deadline is None else min(deadline, sent_at + s.timeout_seconds)
            status, headers = None, {}
            try:
                with self.connection.transport.until(end):
                    response = wire.send(client, s, system, messages, max(end - sent_at, 0.001))
                status, headers = response.http_response.status_code, response.http_response.headers
            except errors.APITimeoutError:  # not retried: the provider may still be working on it, and bill it
                raise CallFailed(
                    f"the model did not answer within {s.timeout_seconds:g} s"
                    + (f" (the attempt before failed: {cause})" if cause else "")
                ) from None
            except (ResponseRefused, errors.APIError) as exc:
                refused = exc if isinstance(exc, ResponseRefused) else exc.__cause__  # an SDK may wrap it
                if isinstance(refused, ResponseRefused):  # the server's doing: asking again gets the same
                    raise CallFailed(str(refused)) from None
                status = getattr(exc, "status_code", None)
                headers = getattr(getattr(exc, "response", None), "headers", None) or {}
                cause = _cause(exc, errors)
                if not _transient(exc, errors):
                    raise CallFailed(cause) from None
                if retry == s.max_retries:
                    raise CallFailed(f"{cause} (after {retry} retries in {time.monotonic() - first:.1f} s)") from None
            finally:
                limiter.release(sent_at, status, headers)
            if status is not None and 200 <= status < 300:
                return wire.read(response.http_response.content)
            asked = _asked_wait(headers)
            jitter = self.connection.backoff(retry, s.backoff_seconds)
            wait = jitter if asked is None else asked + min(asked, jitter)  # spread those told the same time
            left = budget - time.monotonic()
            if wait >= left:
                why = (
                    f"the API asked to wait {asked:g} s before retrying"
                    if asked is not None
                    else f"the next retry would wait {wait:.2g} s"
                )
                raise CallFailed(
                    f"{cause}; {why}, more than the {max(left, 0):.1f} s left of the {s.retry_seconds:g} s retry budget"
                ) from None
            self.connection.sleep(wait)
            retry = retries[0] = retry + 1


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def json_object_in(text: str, flat: bool = False) -> dict | None:
    """The reply as a JSON object: the whole text, else the first object in it (also inside a code fence),
    read whole with whatever it nests; with `flat`, the first object that nests no braces ([CS-21]'s
    conservative reading). None when there is none."""
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except (ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and not (flat and any(ch in "{}" for ch in text[start + 1 : end - 1])):
            return value
    return None
