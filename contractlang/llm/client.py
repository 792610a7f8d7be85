"""The LLM client: one view per game, each call retried, limited, recorded and put in the game's ledger."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from typing import Self

from contractlang.llm.connection import Connection
from contractlang.llm.errors import CallFailed, DeadlinePassed, GameLimitReached, RunStopped
from contractlang.llm.prices import cost_of
from contractlang.llm.providers import ApiKeys, LlmModel, endpoint, redact, sdk_module
from contractlang.llm.ratelimit import LimitChange, asked_wait
from contractlang.llm.recordings import Recordings
from contractlang.llm.settings import GameLimits, LlmSettings
from contractlang.llm.usage import USAGE_FIELDS, LlmCall, LlmTotals, LlmUsage
from contractlang.llm.wire import WIRES, capped, cause_of, transient


class _Game:
    """One game's state every view of it shares: the ledger, the replay positions, the limits and when it began."""

    def __init__(self, limits: GameLimits):
        self.limits = limits
        self.calls: list[LlmCall] = []
        self.occurrences: Counter[str] = Counter()
        self.started = time.monotonic()
        self.limit_reached: GameLimitReached | None = None

    @property
    def ends_at(self) -> float | None:
        """When (time.monotonic()) the game's time limit runs out; None without one."""
        return None if self.limits.seconds is None else self.started + self.limits.seconds

    def time_up(self) -> GameLimitReached:
        """The game's time limit, reached (and kept in `limit_reached`)."""
        self.limit_reached = GameLimitReached("seconds", self.limits.seconds)
        return GameLimitReached("seconds", self.limits.seconds)

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
        connection: Connection | None = None,
        game: _Game | None = None,
    ):
        self.settings = settings
        self.namespace = namespace
        keys = api_key if isinstance(api_key, ApiKeys) else ApiKeys(**{settings.provider: api_key})
        self.connection = connection or Connection(settings, keys)
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
        starts: RunStopped, RunLimitReached, GameLimitReached (see each); `deadline` (time.monotonic()) and the
        game's time limit bound every attempt, retry and pause of the call besides the settings' own bounds: a call
        the game's time limit cuts raises GameLimitReached."""
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
        game_end = self._game.ends_at
        cut = min((t for t in (deadline, game_end) if t is not None), default=None)
        try:
            text, usage = self._create(system, messages, deadline, retries, waits_until=cut)
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
            if isinstance(exc, DeadlinePassed) and game_end is not None and game_end == cut:
                raise self._game.time_up() from None
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
        cost = cost_of(s.model, *(usage.get(name, 0) for name in USAGE_FIELDS), provider=s.provider)
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
        self,
        system: str,
        messages: list[dict],
        deadline: float | None,
        retries: list[int],
        waits_until: float | None = None,
    ) -> tuple[str, dict]:
        """One call: each attempt within timeout_seconds (and `deadline`) under the model's rate limiter;
        transient errors retried up to `max_retries` times, every retry starting within retry_seconds of the
        first attempt (and before `deadline`), time spent waiting for a place under the limit not counted: a retry
        that cannot ends the call at once, with the error that caused it. `waits_until` (a game's end) bounds
        the waiting only (a server's pause, a retry's backoff), never an attempt in flight: its reply is paid
        for, so it is let arrive and be recorded."""
        from contractlang.llm.transport import ResponseRefused

        s = self.settings
        wire, errors = WIRES[s.provider], sdk_module(s.provider)
        client = self.connection.client(s.provider)
        limiter = self.connection.limiter(s.llm_model)
        waits_until = deadline if waits_until is None else waits_until
        cause, retry, first, budget = None, 0, 0.0, waits_until

        def failure(bound: float | None) -> type[CallFailed]:
            """DeadlinePassed when `bound` is the call's deadline (it, not the settings' bounds, cut the call)."""
            return DeadlinePassed if waits_until is not None and bound == waits_until else CallFailed

        while True:
            ticket = limiter.acquire(budget)
            if ticket is None:
                raise failure(budget)(
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
            budget = budget if waits_until is None else min(waits_until, budget)
            end = sent_at + s.timeout_seconds if deadline is None else min(deadline, sent_at + s.timeout_seconds)
            status, headers = None, {}
            try:
                with self.connection.transport.until(end):
                    response = wire.send(client, s, system, messages, max(end - sent_at, 0.001))
                status, headers = response.http_response.status_code, response.http_response.headers
            except errors.APITimeoutError:  # not retried: the provider may still be working on it, and bill it
                raise failure(end)(
                    f"the model did not answer within {s.timeout_seconds:g} s"
                    + (f" (the attempt before failed: {cause})" if cause else "")
                ) from None
            except (ResponseRefused, errors.APIError) as exc:
                refused = exc if isinstance(exc, ResponseRefused) else exc.__cause__  # an SDK may wrap it
                if isinstance(refused, ResponseRefused):  # the server's doing: asking again gets the same
                    raise CallFailed(str(refused)) from None
                status = getattr(exc, "status_code", None)
                headers = getattr(getattr(exc, "response", None), "headers", None) or {}
                cause = cause_of(exc, errors)
                if not transient(exc, errors):
                    raise CallFailed(cause) from None
                if retry == s.max_retries:
                    raise CallFailed(f"{cause} (after {retry} retries in {time.monotonic() - first:.1f} s)") from None
            finally:
                limiter.release(sent_at, status, headers)
            if status is not None and 200 <= status < 300:
                return wire.read(response.http_response.content)
            told = asked_wait(headers)
            # a server that asks for more than the budget left will not answer within it: end the call now; one
            # that asks for less is waited for, at most the longest pause (it may ask for a year)
            asked = None if told is None else min(told, limiter.longest_pause)
            jitter = self.connection.backoff(retry, s.backoff_seconds)
            wait = jitter if asked is None else asked + min(asked, jitter)  # spread those told the same time
            left = budget - time.monotonic()
            if wait >= left or (told is not None and told >= left):
                why = (
                    f"the API asked to wait {told:g} s before retrying"
                    if told is not None
                    else f"the next retry would wait {wait:.2g} s"
                )
                raise failure(budget)(
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
