"""Token counts and costs: one call, a game's ledger, a connection's totals."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from contractlang.llm.providers import Provider
from contractlang.llm.ratelimit import LimitChange
from contractlang.vocab import Frozen

TOKEN_COUNT_LIMIT = 10**9  # tokens one reply can report: far above any context window; more is not a count


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
            **{name: sum(getattr(c, name) for c in calls) for name in USAGE_FIELDS},
            cost_usd=None if any(c is None for c in costs) else round(sum(costs), 6),
        )

    @property
    def tokens(self) -> int:
        """Input (cached or not) plus output tokens: what the token limits count."""
        return sum(getattr(self, name) for name in USAGE_FIELDS)


USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


TokenCount = Annotated[int, Field(ge=0, le=TOKEN_COUNT_LIMIT)]


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
