"""The tokens and cost expected of a number of calls, from recordings or defaults."""

from __future__ import annotations

from typing import NamedTuple

from contractlang.llm.prices import cost_of
from contractlang.llm.providers import LlmModel
from contractlang.llm.recordings import Recordings
from contractlang.llm.usage import USAGE_FIELDS

# A call of unknown size, for estimates when no recordings say better: a performance decision's prompt (rules,
# contract, history) is a few thousand tokens, its JSON answer a few hundred.
ESTIMATE_INPUT_TOKENS = 4000
ESTIMATE_OUTPUT_TOKENS = 400


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
    cost = cost_of(model.model, *(usage[name] * calls for name in USAGE_FIELDS), provider=model.provider)
    return CostEstimate(
        input_tokens=round(calls * (usage["input_tokens"] + usage["cache_read_tokens"] + usage["cache_write_tokens"])),
        output_tokens=round(calls * usage["output_tokens"]),
        cost_usd=None if cost is None else round(cost, 6),
        source=source,
    )
