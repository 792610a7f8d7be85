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
- Transport: both SDKs send through `contractlang.llm.transport` (a deadline for the whole call, a cap on the
  decoded response, no redirects); every reply and its usage block are validated before anything reads them.
- Caps: a reply is kept, recorded and sent back in the conversation up to REPLY_CAP characters.

API keys are never stored or printed: requests are recorded as the messages sent, and a key is redacted where
text is written or shown (recordings, the ledger, errors), never in the reply the game reads; a key shorter than
MIN_REDACTED_KEY is a placeholder (a local server's `EMPTY`) and is never redacted.
"""

from contractlang.llm.client import LlmClient, json_object_in
from contractlang.llm.connection import MAX_BACKOFF_SECONDS
from contractlang.llm.errors import (
    CallFailed,
    CallRefused,
    DeadlinePassed,
    GameLimitReached,
    LlmUnavailable,
    MissingApiKey,
    MissingSdk,
    RunInterrupted,
    RunLimitReached,
    RunStopped,
)
from contractlang.llm.estimates import ESTIMATE_INPUT_TOKENS, ESTIMATE_OUTPUT_TOKENS, CostEstimate, estimate_cost
from contractlang.llm.prices import PRICES_PER_MTOK, Price, cost_of, priced, unpriced_for_cost_limit
from contractlang.llm.providers import (
    DEFAULT_MODEL,
    KEY_HINT,
    MIN_REDACTED_KEY,
    PROVIDERS,
    ApiKeys,
    Effort,
    LlmModel,
    Provider,
    ProviderInfo,
    agent_model,
    check_providers,
    endpoint,
    key_hint,
    redact,
)
from contractlang.llm.ratelimit import OVERLOADED, LimitChange, RateLimiter, Ticket
from contractlang.llm.recordings import DEFAULT_RECORDINGS, Recordings
from contractlang.llm.settings import MAX_OUTPUT_TOKENS, GameLimits, LlmSettings, RunLimits
from contractlang.llm.usage import TOKEN_COUNT_LIMIT, LlmCall, LlmTotals, LlmUsage, TokenCount
from contractlang.llm.wire import REPLY_CAP, capped

__all__ = [
    "DEFAULT_MODEL",
    "Effort",
    "Provider",
    "ProviderInfo",
    "PROVIDERS",
    "key_hint",
    "KEY_HINT",
    "endpoint",
    "LlmModel",
    "agent_model",
    "ApiKeys",
    "MIN_REDACTED_KEY",
    "redact",
    "check_providers",
    "LlmUnavailable",
    "MissingApiKey",
    "MissingSdk",
    "CallFailed",
    "CallRefused",
    "DeadlinePassed",
    "GameLimitReached",
    "RunInterrupted",
    "RunLimitReached",
    "RunStopped",
    "Price",
    "PRICES_PER_MTOK",
    "cost_of",
    "priced",
    "unpriced_for_cost_limit",
    "RunLimits",
    "GameLimits",
    "MAX_OUTPUT_TOKENS",
    "LlmSettings",
    "TOKEN_COUNT_LIMIT",
    "TokenCount",
    "LlmCall",
    "LlmUsage",
    "LlmTotals",
    "OVERLOADED",
    "LimitChange",
    "Ticket",
    "RateLimiter",
    "REPLY_CAP",
    "capped",
    "DEFAULT_RECORDINGS",
    "Recordings",
    "ESTIMATE_INPUT_TOKENS",
    "ESTIMATE_OUTPUT_TOKENS",
    "CostEstimate",
    "estimate_cost",
    "MAX_BACKOFF_SECONDS",
    "LlmClient",
    "json_object_in",
]
