"""List prices per million tokens, and the cost of a call's tokens."""

from __future__ import annotations

from typing import NamedTuple

from contractlang.llm.providers import LlmModel


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
