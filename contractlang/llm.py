"""One LLM client for translation, judges and agents, on two providers' official SDKs: the Anthropic Messages
API (`anthropic`) and any OpenAI-compatible Chat Completions API (`openai`, the optional `[openai]` extra:
OpenAI's models, Gemini's OpenAI-compatible endpoint, local servers such as vLLM, Ollama or llama.cpp's).

- Retries: transient errors (408, 409, 429, 5xx, 529, connection) are retried with the server's
  retry-after (else exponential backoff), all within one deadline; anything else fails the call in one line
  that names the cause.
- Prompt caching: the system prompt and the newest message (the end of the append-only prefix the next
  request repeats) are marked for caching where the API takes marks (Anthropic); OpenAI caches prefixes itself.
- Bounded concurrency: at most `concurrency` requests in flight through one client and its per-game views.
- A ledger per game: every call with its purpose, provider, prompt, reply, tokens (cache reads and writes
  apart), cost and time (the run's transcript).
- Record/replay: every provider response is stored in SQLite under a hash of the request (provider and
  endpoint included), the game it belongs to and how many identical requests that game made before it; a
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
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from contractlang.files import FileError, damaged, open_sqlite_store, sqlite_session
from contractlang.vocab import Frozen

DEFAULT_MODEL = "claude-sonnet-5-5"  # claude-sonnet-4-5 reached end of life on 2026-11-30
DEFAULT_RECORDINGS = Path(".contractlang-cache") / "llm.sqlite"
REPLY_CAP = 16_384  # characters: every answer the prompts ask for (an action, a message, a contract) fits many times
# The shortest hosted provider key is Google's (39 characters; OpenAI's are 51+, Anthropic's 100+): any key of 20 or
# more is redacted, while a placeholder for a local server (`a`, `EMPTY`) is no secret and would only corrupt text.
MIN_REDACTED_KEY = 20
TOKEN_COUNT_LIMIT = 10**9  # tokens one reply can report: far above any context window; more is not a count
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
        name="anthropic", title="the Anthropic API", package="anthropic", key_variable="ANTHROPIC_API_KEY",
        key_example="sk-ant-...", key_source="https://console.anthropic.com", base_url_variable="ANTHROPIC_BASE_URL",
        default_base_url="https://api.anthropic.com"),
    "openai": ProviderInfo(
        name="openai", title="an OpenAI-compatible API", package="openai", key_variable="OPENAI_API_KEY",
        key_example="sk-...", key_source="https://platform.openai.com/api-keys, or any value for a local server",
        base_url_variable="OPENAI_BASE_URL", default_base_url="https://api.openai.com/v1",
        install="pip install 'contractlang[openai]' (in a checkout: pip install -e '.[openai]')"),
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
    """A model call that gave no usable reply in the time allowed: one line, the key never in it."""


def key_hint(provider: str, can_replay: bool = True) -> str:
    """How to set the provider's key (and, where recordings exist to replay, that --replay needs none)."""
    p = PROVIDERS[provider]
    return (f"{p.key_variable} is not set: export {p.key_variable}={p.key_example} (a key from {p.key_source})"
            + (", or pass --replay to serve recorded responses offline" if can_replay else ""))


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


class LlmSettings(Frozen):
    provider: Provider = "anthropic"
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    effort: Effort | None = None  # Anthropic output_config.effort / OpenAI reasoning_effort, for models that take it
    thinking: bool = False  # adaptive thinking (Anthropic)
    timeout_seconds: float = 60.0  # one call, every retry and wait included (translation: the whole loop)
    max_retries: int = 3  # transient API errors, within timeout_seconds
    base_url: str | None = None  # every provider's; None: each SDK's environment variable, else its default
    concurrency: int = 4  # requests in flight at once through one client
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
        return cls(calls=len(calls), failed=sum(c.error is not None for c in calls),
                   replayed=sum(c.replayed for c in calls),
                   **{name: sum(getattr(c, name) for c in calls) for name in _USAGE_FIELDS},
                   cost_usd=None if any(c is None for c in costs) else round(sum(costs), 6))


_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def cost_of(model: str, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0,
            provider: str = "anthropic") -> float | None:
    price = PRICES_PER_MTOK.get((provider, model))
    if price is None:
        return None
    return (input_tokens * price.input + output_tokens * price.output + cache_read * price.cache_read
            + cache_write * price.cache_write) / 1e6


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


def _retry_after(exc, attempt: int) -> tuple[float, bool]:
    """The wait the server asked for (retry-after-ms or retry-after), else exponential backoff from 0.5 s;
    and whether the server asked."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale), True
        except (KeyError, TypeError, ValueError):
            continue
    return min(0.5 * 2 ** attempt, 8.0), False


def _sdk_module(provider: str, who: str | None = None):
    p = PROVIDERS[provider]
    try:
        return importlib.import_module(p.package)
    except ImportError:
        raise MissingSdk(f"{who or f'llm:{provider}/MODEL'} needs the {p.package} package, which is not "
                         f"installed: {p.install}") from None


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


def _not_a_message(detail: str = "") -> CallFailed:
    return CallFailed("the API answered with something that is not a message" + (f" ({detail[:120]})" if detail
                                                                                   else ""))


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
        return client.messages.with_raw_response.create(model=s.model, max_tokens=s.max_tokens, timeout=timeout,
                                                        system=blocks, messages=marked, **extra)

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_MessagesReply, body)
        u = reply.usage
        return "".join(b.text for b in reply.content if b.type == "text"), {
            "input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
            "cache_read_tokens": u.cache_read_input_tokens or 0,
            "cache_write_tokens": u.cache_creation_input_tokens or 0}


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
        return client.chat.completions.with_raw_response.create(model=s.model, max_completion_tokens=s.max_tokens,
                                                                timeout=timeout, messages=wire, **extra)

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_ChatReply, body)
        u = reply.usage
        prompt, cached = u.prompt_tokens or 0, (u.prompt_tokens_details and u.prompt_tokens_details.cached_tokens) or 0
        return reply.choices[0].message.content or "", {
            "input_tokens": max(prompt - cached, 0), "output_tokens": u.completion_tokens or 0,
            "cache_read_tokens": cached, "cache_write_tokens": 0}


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
            raise FileError(f"{self.path}: no such recordings file to replay from; record the run first (without "
                            "--replay) or pass --recordings with the file it was recorded in")
        open_sqlite_store(self.path, {"llm_recordings_v1"}, self._DDL, "recordings file of LLM responses",
                          "--recordings")

    def _db(self):
        return sqlite_session(self.path, "recordings file", "--recordings")

    def _unusable(self, why: str) -> FileError:
        return damaged(self.path, "recordings file", "--recordings", why)

    def get(self, key: str, occurrence: int) -> tuple[str, dict] | None:
        with self._db() as db:
            row = db.execute("SELECT reply, usage_json FROM llm_recordings_v1 WHERE key = ? AND occurrence = ?",
                             (key, occurrence)).fetchone()
        if row is None:
            return None
        reply, usage_json = row
        if not isinstance(reply, str):
            raise self._unusable(f"a recorded reply is {'NULL' if reply is None else type(reply).__name__}, not "
                                 "text")
        try:
            usage = _RecordedUsage.model_validate_json(usage_json, strict=True)
        except (TypeError, ValidationError):
            raise self._unusable("a recorded response's token counts are unreadable") from None
        return capped(reply), usage.model_dump()

    def put(self, key: str, occurrence: int, namespace: str, purpose: str, model: str, request: dict, reply: str,
            usage: dict, keys: ApiKeys) -> None:
        """Record one response; the request and reply are written with `keys` redacted."""
        with self._db() as db:
            db.execute("INSERT OR REPLACE INTO llm_recordings_v1 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, occurrence, namespace, purpose, model, time.time(), redact(json.dumps(request), keys),
                        redact(reply, keys), json.dumps(usage)))

    def count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone()[0]


class _Connection:
    """What every view of one client shares: the SDK clients (one per provider, made at first use), the
    concurrency gate, the recordings and the keys."""

    def __init__(self, settings: LlmSettings, keys: ApiKeys):
        if settings.replay and settings.recordings is None:
            raise MissingApiKey("--replay needs a recordings file to replay from (--recordings FILE)")
        self.keys = keys
        self.base_url = settings.base_url
        self.replay = settings.replay
        self.gate = threading.BoundedSemaphore(max(1, settings.concurrency))
        self.recordings = Recordings(settings.recordings, settings.replay) if settings.recordings is not None \
            else None
        self._clients: dict[str, object] = {}
        self._lock = threading.Lock()
        self._transport = None
        self.require(settings.provider)

    @property
    def transport(self):
        """The HTTP transport of every SDK client of this connection, made with the first of them."""
        if self._transport is None:
            from contractlang.llm_transport import Transport

            self._transport = Transport()
        return self._transport

    def require(self, provider: str) -> None:
        """Fail now, in one line, when `provider` will have to be called and cannot be: no key, no SDK."""
        if not self.replay:
            self.client(provider)

    def client(self, provider: str):
        with self._lock:
            if provider not in self._clients:
                key = self.keys.of(provider)
                if not key:
                    raise MissingApiKey(key_hint(provider, can_replay=self.recordings is not None))
                sdk = _sdk_module(provider)
                from contractlang.llm_transport import http_client

                self._clients[provider] = _WIRES[provider].client(sdk, key, endpoint(provider, self.base_url),
                                                                  http_client(self.transport))
            return self._clients[provider]


class LlmClient:
    """The shared client; `for_game(namespace)` gives a view with its own ledger and replay positions. `api_key`
    is the key of `settings.provider`, or every provider's keys."""

    def __init__(self, settings: LlmSettings, api_key: str | ApiKeys | None = None, namespace: str = "",
                 connection: _Connection | None = None):
        self.settings = settings
        self.namespace = namespace
        keys = api_key if isinstance(api_key, ApiKeys) else ApiKeys(**{settings.provider: api_key})
        self.connection = connection or _Connection(settings, keys)
        self.calls: list[LlmCall] = []
        self._occurrences: Counter[str] = Counter()

    @property
    def recordings(self) -> Recordings | None:
        return self.connection.recordings

    def for_game(self, namespace: str) -> LlmClient:
        """A view for one game: same connection, concurrency limit and store; its own ledger."""
        return LlmClient(self.settings, namespace=namespace, connection=self.connection)

    def with_model(self, model: LlmModel) -> LlmClient:
        """This view with another model (of any provider); its calls join the same ledger."""
        if model == self.settings.llm_model:
            return self
        self.connection.require(model.provider)
        view = LlmClient(self.settings.model_copy(update={"provider": model.provider, "model": model.model}),
                         namespace=self.namespace, connection=self.connection)
        view.calls, view._occurrences = self.calls, self._occurrences
        return view

    def with_max_tokens(self, max_tokens: int) -> LlmClient:
        """This view with another output limit (a stage of a run that asks for shorter answers)."""
        if max_tokens == self.settings.max_tokens:
            return self
        view = LlmClient(self.settings.model_copy(update={"max_tokens": max_tokens}), namespace=self.namespace,
                         connection=self.connection)
        view.calls, view._occurrences = self.calls, self._occurrences
        return view

    @property
    def usage(self) -> LlmUsage:
        return LlmUsage.of(self.calls)

    def complete(self, purpose: str, system: str, messages: list[dict], deadline: float | None = None) -> str:
        """The model's text reply to `messages` under `system`; every call lands in the ledger."""
        s = self.settings
        request = {"provider": s.provider, "endpoint": endpoint(s.provider, s.base_url), "model": s.model,
                   "max_tokens": s.max_tokens, "effort": s.effort, "thinking": s.thinking, "system": system,
                   "messages": messages}
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
                text, usage = self._create(system, messages, deadline or time.monotonic() + s.timeout_seconds)
            reply = capped(text)
            if self.recordings is not None:
                self.recordings.put(digest, occurrence, self.namespace, purpose, s.model, request, reply, usage,
                                    self.connection.keys)
        except CallFailed as exc:
            message = self.redact(str(exc))
            self._log(purpose, prompt, "", {}, time.perf_counter() - start, error=message)
            raise CallFailed(message) from None
        self._log(purpose, prompt, reply, usage, time.perf_counter() - start)
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

    def _log(self, purpose, prompt, reply, usage, seconds, replayed=False, error=None) -> None:
        """The call into the ledger, which runs write out: its texts redacted."""
        s = self.settings
        cost = cost_of(s.model, *(usage.get(name, 0) for name in _USAGE_FIELDS), provider=s.provider)
        self.calls.append(LlmCall(purpose=purpose, provider=s.provider, model=s.model, prompt=self.redact(prompt),
                                  reply=self.redact(reply), cost_usd=cost if error is None else 0.0, seconds=seconds,
                                  replayed=replayed, error=error, **usage))

    def _create(self, system: str, messages: list[dict], deadline: float) -> tuple[str, dict]:
        """One call, retried on transient errors up to `max_retries`, all within `deadline`: a retry that cannot
        happen in the time left ends the call at once, with the error that caused it."""
        from contractlang.llm_transport import ResponseRefused

        s = self.settings
        wire, errors = _WIRES[s.provider], _sdk_module(s.provider)
        client = self.connection.client(s.provider)
        cause = None
        for retry in range(s.max_retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                with self.connection.transport.until(deadline):
                    response = wire.send(client, s, system, messages, left)
            except errors.APITimeoutError:
                break
            except (ResponseRefused, errors.APIError) as exc:
                refused = exc if isinstance(exc, ResponseRefused) else exc.__cause__  # an SDK may wrap it
                if isinstance(refused, ResponseRefused):  # the server's doing: asking again gets the same
                    raise CallFailed(str(refused)) from None
                cause = _cause(exc, errors)
                if not _transient(exc, errors) or retry == s.max_retries:
                    raise CallFailed(cause) from None
                wait, asked = _retry_after(exc, retry)
                left = deadline - time.monotonic()
                if wait >= left:
                    why = (f"the API asked to wait {wait:g} s before retrying" if asked
                           else f"the next retry would wait {wait:g} s")
                    raise CallFailed(f"{cause}; {why}, more than the {max(left, 0):.1f} s left of the "
                                     f"{s.timeout_seconds:g} s timeout") from None
                time.sleep(wait)
                continue
            return wire.read(response.http_response.content)
        raise CallFailed(f"the model did not answer within {s.timeout_seconds:g} s"
                         + (f" (the attempt before failed: {cause})" if cause else ""))


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
        if isinstance(value, dict) and not (flat and any(ch in "{}" for ch in text[start + 1:end - 1])):
            return value
    return None
