"""What every view of one client shares: SDK clients, rate limiters, run limits, totals, the stop signal."""

from __future__ import annotations

import random
import threading
import time

from contractlang.llm.errors import LlmUnavailable, MissingApiKey, RunLimitReached, RunStopped
from contractlang.llm.prices import priced, unpriced_for_cost_limit
from contractlang.llm.providers import ApiKeys, LlmModel, endpoint, key_hint, sdk_module
from contractlang.llm.ratelimit import RateLimiter
from contractlang.llm.recordings import Recordings
from contractlang.llm.settings import LlmSettings
from contractlang.llm.usage import USAGE_FIELDS, LlmCall, LlmTotals, LlmUsage
from contractlang.llm.wire import WIRES

MAX_BACKOFF_SECONDS = 30.0  # the longest a retry waits of its own accord (a server may ask for longer)


class Connection:
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
        self.longest_pause = min(settings.retry_seconds, settings.max_server_wait)
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
            from contractlang.llm.transport import Transport

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
                sdk = sdk_module(provider)
                from contractlang.llm.transport import http_client

                self._clients[provider] = WIRES[provider].client(
                    sdk, key, endpoint(provider, self.base_url), http_client(self.transport)
                )
            return self._clients[provider]

    def limiter(self, model: LlmModel) -> RateLimiter:
        with self._lock:
            if model not in self._limiters:
                self._limiters[model] = RateLimiter(self.max_connections, self.longest_pause)
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
            for name in ("calls", "replayed", "failed", *USAGE_FIELDS):
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
