"""One LLM client for translation, judges and agents, on the `anthropic` SDK.

- Retries: transient errors (408, 409, 429, 5xx, 529, connection) are retried with the server's
  retry-after (else exponential backoff), all within one deadline; anything else fails the call in one line.
- Prompt caching: the system prompt, every request's stable prefix, is sent as one block marked for caching.
- Bounded concurrency: at most `concurrency` requests in flight through one client and its per-game views.
- A ledger per game: every call with its purpose, prompt, reply, tokens, cost and time (the run's transcript).
- Record/replay: every provider response is stored in SQLite under a hash of the request, the game it belongs
  to and how many identical requests that game made before it; a rerun serves the stored responses, and
  `replay=True` never calls the provider, so any recorded run replays offline exactly.

API keys are never stored or printed: requests are recorded as the messages sent, and replies and errors
are redacted before they are kept.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Literal

from contractlang.files import open_sqlite_store
from contractlang.vocab import Frozen

DEFAULT_MODEL = "claude-sonnet-5-5"  # claude-sonnet-4-5 reached end of life on 2026-11-30
DEFAULT_RECORDINGS = Path(".contractlang-cache") / "llm.sqlite"
Effort = Literal["low", "medium", "high", "xhigh", "max"]

# USD per million input / output tokens, Anthropic's list prices as of 2026-12 (a model missing here is costed
# as unknown, never as free); cache reads bill at 0.1x input and 5-minute cache writes at 1.25x.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-fable-5-1": (10.0, 50.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-5-5": (2.0, 10.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
}

KEY_HINT = ("ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=sk-ant-... (a key from "
            "https://console.anthropic.com), or pass --replay to serve recorded responses offline")


class MissingApiKey(Exception):
    """An LLM option without ANTHROPIC_API_KEY (and not replaying): the message says how to set one."""


class CallFailed(Exception):
    """A model call that gave no usable reply in the time allowed: one line, the key never in it."""


class LlmSettings(Frozen):
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    effort: Effort | None = None  # output_config.effort, for models that take it
    thinking: bool = False  # adaptive thinking
    timeout_seconds: float = 60.0  # one call, every retry and wait included (translation: the whole loop)
    max_retries: int = 3  # transient API errors, within timeout_seconds
    base_url: str | None = None
    concurrency: int = 4  # requests in flight at once through one client
    recordings: Path | None = None  # the SQLite file responses are recorded in and replayed from
    replay: bool = False  # serve recorded responses only; never call the provider


class LlmCall(Frozen):
    """One exchange with the model, as the ledger and the run log keep it."""

    purpose: str  # e.g. "customer performance", "judge summary", "translation"
    model: str
    prompt: str  # the newest user message (the conversation before it is earlier calls' prompts and replies)
    reply: str
    input_tokens: int = 0
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
    cost_usd: float | None = 0.0

    @classmethod
    def of(cls, calls) -> LlmUsage:
        calls = list(calls)
        costs = [c.cost_usd for c in calls if c.error is None]
        return cls(calls=len(calls), failed=sum(c.error is not None for c in calls),
                   replayed=sum(c.replayed for c in calls), input_tokens=sum(c.input_tokens for c in calls),
                   output_tokens=sum(c.output_tokens for c in calls),
                   cost_usd=None if any(c is None for c in costs) else round(sum(costs), 6))


def cost_of(model: str, input_tokens: int, output_tokens: int, cache_read: int = 0,
            cache_write: int = 0) -> float | None:
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    per_in, per_out = price[0] / 1e6, price[1] / 1e6
    return input_tokens * per_in + cache_read * per_in * 0.1 + cache_write * per_in * 1.25 + output_tokens * per_out


def redact(text: str, api_key: str | None) -> str:
    return text.replace(api_key, "[redacted key]") if api_key else text


def _retry_after(exc, attempt: int) -> float:
    """The wait the server asked for (retry-after-ms or retry-after), else exponential backoff from 0.5 s."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, TypeError, ValueError):
            continue
    return min(0.5 * 2 ** attempt, 8.0)


def _transient(exc) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):
        return True
    return isinstance(exc, anthropic.APIStatusError) and (exc.status_code in (408, 409, 429)
                                                          or exc.status_code >= 500)


class Recordings:
    """The record/replay store: one row per provider response, keyed by request hash and occurrence."""

    _DDL = """CREATE TABLE IF NOT EXISTS llm_recordings_v1 (
      key TEXT, occurrence INTEGER, namespace TEXT, purpose TEXT, model TEXT, created_at REAL,
      request_json TEXT, reply TEXT, usage_json TEXT, PRIMARY KEY (key, occurrence));"""

    def __init__(self, path: Path):
        self.path = Path(path)
        open_sqlite_store(self.path, {"llm_recordings_v1"}, self._DDL, "recordings file of LLM responses",
                          "--recordings")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, key: str, occurrence: int) -> tuple[str, dict] | None:
        with self._connect() as db:
            row = db.execute("SELECT reply, usage_json FROM llm_recordings_v1 WHERE key = ? AND occurrence = ?",
                             (key, occurrence)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def put(self, key: str, occurrence: int, namespace: str, purpose: str, model: str, request: dict, reply: str,
            usage: dict) -> None:
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO llm_recordings_v1 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, occurrence, namespace, purpose, model, time.time(), json.dumps(request), reply,
                        json.dumps(usage)))

    def count(self) -> int:
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone()[0]


class _Connection:
    """What every view of one client shares: the SDK client, the concurrency gate, the recordings, the key."""

    def __init__(self, settings: LlmSettings, api_key: str | None):
        if not settings.replay and not api_key:
            raise MissingApiKey(KEY_HINT)
        if settings.replay and settings.recordings is None:
            raise MissingApiKey("--replay needs a recordings file to replay from (--recordings FILE)")
        self.api_key = api_key
        self.gate = threading.BoundedSemaphore(max(1, settings.concurrency))
        self.recordings = Recordings(settings.recordings) if settings.recordings is not None else None
        self.sdk = None
        if not settings.replay:
            import anthropic

            self.sdk = anthropic.Anthropic(api_key=api_key, base_url=settings.base_url, max_retries=0)


class LlmClient:
    """The shared client; `for_game(namespace)` gives a view with its own ledger and replay positions."""

    def __init__(self, settings: LlmSettings, api_key: str | None = None, namespace: str = "",
                 connection: _Connection | None = None):
        self.settings = settings
        self.namespace = namespace
        self.connection = connection or _Connection(settings, api_key)
        self.calls: list[LlmCall] = []
        self._occurrences: Counter[str] = Counter()

    @property
    def recordings(self) -> Recordings | None:
        return self.connection.recordings

    def for_game(self, namespace: str) -> LlmClient:
        """A view for one game: same connection, concurrency limit and store; its own ledger."""
        return LlmClient(self.settings, namespace=namespace, connection=self.connection)

    def with_model(self, model: str) -> LlmClient:
        """This view with another model; its calls join the same ledger."""
        if model == self.settings.model:
            return self
        view = LlmClient(self.settings.model_copy(update={"model": model}), namespace=self.namespace,
                         connection=self.connection)
        view.calls, view._occurrences = self.calls, self._occurrences
        return view

    @property
    def usage(self) -> LlmUsage:
        return LlmUsage.of(self.calls)

    def complete(self, purpose: str, system: str, messages: list[dict], deadline: float | None = None) -> str:
        """The model's text reply to `messages` under `system`; every call lands in the ledger."""
        s = self.settings
        request = {"model": s.model, "max_tokens": s.max_tokens, "effort": s.effort, "thinking": s.thinking,
                   "system": system, "messages": messages}
        digest = hashlib.sha256(json.dumps([self.namespace, request], sort_keys=True).encode()).hexdigest()
        occurrence = self._occurrences[digest]
        self._occurrences[digest] += 1
        prompt = _text_of(messages[-1]["content"]) if messages else ""
        start = time.perf_counter()
        recorded = self.recordings.get(digest, occurrence) if self.recordings is not None else None
        if recorded is not None:
            reply, usage = recorded
            self._log(purpose, prompt, reply, usage, time.perf_counter() - start, replayed=True)
            return reply
        if s.replay:
            error = (f"no recorded response for this {purpose} request (game {self.namespace or '-'}) in "
                     f"{self.recordings.path}; run once without --replay to record it")
            self._log(purpose, prompt, "", {}, 0.0, error=error)
            raise CallFailed(error)
        try:
            with self.connection.gate:
                response = self._create(system, messages, deadline or time.monotonic() + s.timeout_seconds)
        except CallFailed as exc:
            message = redact(str(exc), self.connection.api_key)
            self._log(purpose, prompt, "", {}, time.perf_counter() - start, error=message)
            raise CallFailed(message) from None
        reply = redact("".join(b.text for b in response.content if getattr(b, "type", "") == "text"),
                       self.connection.api_key)
        u = response.usage
        usage = {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
                 "cache_read_tokens": getattr(u, "cache_read_input_tokens", 0) or 0,
                 "cache_write_tokens": getattr(u, "cache_creation_input_tokens", 0) or 0}
        if self.recordings is not None:
            self.recordings.put(digest, occurrence, self.namespace, purpose, s.model, request, reply, usage)
        self._log(purpose, prompt, reply, usage, time.perf_counter() - start)
        return reply

    def _log(self, purpose, prompt, reply, usage, seconds, replayed=False, error=None) -> None:
        cost = cost_of(self.settings.model, usage.get("input_tokens", 0), usage.get("output_tokens", 0),
                       usage.get("cache_read_tokens", 0), usage.get("cache_write_tokens", 0))
        self.calls.append(LlmCall(purpose=purpose, model=self.settings.model, prompt=prompt, reply=reply,
                                  cost_usd=cost if error is None else 0.0, seconds=seconds, replayed=replayed,
                                  error=error, **usage))

    def _create(self, system: str, messages: list[dict], deadline: float):
        """One Messages call, retried on transient errors up to `max_retries`, all within `deadline`: a server
        asking for a longer wait than is left ends the call at once."""
        import anthropic

        s = self.settings
        extra: dict = {}
        if s.effort is not None:
            extra["output_config"] = {"effort": s.effort}
        if s.thinking:
            extra["thinking"] = {"type": "adaptive"}
        blocks = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}] if system else []
        for retry in range(s.max_retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                response = self.connection.sdk.messages.create(model=s.model, max_tokens=s.max_tokens, timeout=left,
                                                     system=blocks, messages=messages, **extra)
            except anthropic.APITimeoutError:
                break
            except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON, or not the JSON of a message
                raise CallFailed(f"the API answered with something that is not a message ({str(exc)[:120]})") \
                    from None
            except anthropic.APIError as exc:
                if not _transient(exc) or retry == s.max_retries:
                    status = getattr(exc, "status_code", None)
                    raise CallFailed(f"API error{f' {status}' if status else ''}: {str(exc)[:300]}") from None
                wait, left = _retry_after(exc, retry), deadline - time.monotonic()
                if wait >= left:
                    raise CallFailed(f"the API asked to wait {wait:g} s before retrying, more than the "
                                     f"{max(left, 0):.1f} s left of the {s.timeout_seconds:g} s timeout") from None
                time.sleep(wait)
                continue
            if not isinstance(getattr(response, "content", None), list) or getattr(response, "usage", None) is None:
                raise CallFailed("the API answered with something that is not a message")
            return response
        raise CallFailed(f"the model did not answer within {s.timeout_seconds:g} s")


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def agent_model(name: str) -> str | None:
    """The model of an `llm[:MODEL]` agent name (DEFAULT_MODEL for plain `llm`), or None for other agents."""
    if name == "llm":
        return DEFAULT_MODEL
    if name.startswith("llm:") and name[4:].strip():
        return name[4:].strip()
    return None


_FENCED_OBJECT = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}", re.S)


def json_object_in(text: str) -> dict | None:
    """The reply as a JSON object: the whole text, else the first flat object in it (also inside a code
    fence); None when there is none — the papers' conservative reading of a model's reply."""
    candidates = (text, *(m.group(1) for m in _FENCED_OBJECT.finditer(text)),
                  *(m.group(0) for m in _FLAT_OBJECT.finditer(text)))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
