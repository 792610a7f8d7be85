"""The adaptive in-flight limit per provider and model, and the pauses the servers' rate-limit headers ask for."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import NamedTuple

from contractlang.llm.errors import RunStopped
from contractlang.vocab import Frozen

OVERLOADED = (429, 503, 529)  # statuses that say "fewer requests": the in-flight limit is lowered on them


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


def asked_wait(headers: Mapping[str, str]) -> float | None:
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


def reset_in(value: str) -> float | None:
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
    asked = asked_wait(headers) if status in OVERLOADED else None
    resets = [asked] if asked is not None else []
    for remaining, reset in (*_ANTHROPIC_BUDGETS, *_OPENAI_BUDGETS):
        if headers.get(remaining, "").strip() == "0" and headers.get(reset) is not None:
            seconds = reset_in(headers[reset])
            if seconds is not None and math.isfinite(seconds):
                resets.append(max(0.0, seconds))
    return now + max(resets) if resets else None
