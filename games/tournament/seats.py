"""What a game leaves for the ranking: one `SeatOutcome` per player per game, in the game's own terms."""

from __future__ import annotations

from contractlang.vocab import Frozen


class SeatOutcome(Frozen):
    """One player's side of one game: who sat in `role` against whom, on which shared `unit` (the world a seed
        fixes: contract × environment × seed, or board × condition × mode × seed), what it scored and how far that
        is from the optimum in the same seat: `regret` against the rational counterfactual on the same seed, `gap`
    against the optimum's exact expected value (None where the game has no optimum to compare with).
        `metrics` are the per-game quantities the cell tables average; `decisions` and `fallbacks` feed the
        quality gates (an LLM's answers that fell back to the default action)."""

    role: str
    agent: str
    opponent: str
    unit: str
    utility: float
    regret: float | None = None
    gap: float | None = None  # the exact expected utility of the optimum in this seat minus `utility`
    metrics: dict[str, float | None] = {}
    decisions: int = 0
    fallbacks: int = 0
    llm: bool = False
