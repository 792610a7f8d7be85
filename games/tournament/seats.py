"""What a game leaves for the ranking: one `SeatOutcome` per player per game, in the game's own terms."""

from __future__ import annotations

from contractlang.vocab import Frozen
from games.agents import agent_name, model_of


class SeatOutcome(Frozen):
    """One player's side of one game: who sat in `role` against whom, on which shared `unit` (the world a seed
    fixes: contract × environment × seed, or board × condition × mode × seed), what it scored and how far that
    is from the optimum in the same seat: `regret` against the rational counterfactual on the same seed,
    `compliant_regret` the same on compliant utilities (ContractSim paper, App. C.6, eq. 36), `optimum_regret`
    that compliant regret where the counterfactual is the exact optimum (against the opponent the DP solves for),
    `gap` against the optimum's exact expected value (None where the game has no optimum to compare with).
    `metrics` are the per-game quantities the cell tables average; `decisions` and `fallbacks` feed the
    quality gates (an LLM's answers that fell back to the default action)."""

    role: str
    agent: str
    opponent: str
    unit: str
    utility: float
    regret: float | None = None
    compliant_regret: float | None = None
    optimum_regret: float | None = None  # None against an opponent the optimum is not solved for
    gap: float | None = None  # the exact expected utility of the optimum in this seat minus `utility`
    metrics: dict[str, float | None] = {}
    decisions: int = 0
    fallbacks: int = 0
    llm: bool = False


def seat_of(role: str, agent: str, opponent: str, unit: str, decisions: int, **fields) -> SeatOutcome:
    """The `SeatOutcome` of `agent` (a spec) against `opponent`, both named by their labels; an LLM agent's
    `decisions` count toward its gates, another's do not."""
    llm = model_of(agent) is not None
    return SeatOutcome(
        role=role,
        agent=agent_name(agent),
        opponent=agent_name(opponent),
        unit=unit,
        decisions=decisions if llm else 0,
        llm=llm,
        **fields,
    )
