"""CT-Bench in a tournament: every ordered pair of agents, self-play included, so each pair plays both seat orders,
on each board × condition × mode × seed (the sweep's games, `games.ctbench.sweep`). A board is fixed by its ID
and the seed alone draws the agents' randomness, so every pairing on one unit plays the same world."""

from __future__ import annotations

from pathlib import Path

from games.agents import agent_name
from games.ctbench import sweep
from games.ctbench.play import GameRecord
from games.ctbench.sweep import GameSpec, sweep_phase
from games.runner import Phase
from games.tournament.seats import SeatOutcome, seat_of

ROLES = ("red", "blue")
REFERENCES = ("planner", "conditional", "random")
STORE = "games.jsonl"
CONTRACT_SET = False  # it plays boards, every ordered pair of agents, self-play included


decisions = sweep.decisions
"""(model, calls) of each LLM player and judge of a game, for a run's estimate: the sweep's count."""


def unit_of(spec: GameSpec) -> str:
    return f"{spec.board_set}:{spec.board_id}/{spec.condition}/{spec.mode}/seed{spec.seed}"


def matches(
    boards: list[tuple[str, int]],
    conditions: list[str],
    modes: list[str],
    agents: list[str],
    seeds: list[int],
    rules: str = "authors",
) -> list[GameSpec]:
    """Every (red, blue) ordered pair of `agents` on every board × condition × mode × seed."""
    return list(
        dict.fromkeys(
            GameSpec(board_id=i, board_set=board_set, condition=c, mode=m, red=r, blue=b, seed=s, rules=rules)
            for board_set, i in boards
            for c in conditions
            for m in modes
            for s in seeds
            for r in agents
            for b in agents
        )
    )


def phase(jobs: list[GameSpec], store: Path, objects: dict | None = None) -> Phase:
    """The sweep's phase, its store in the folder of `store` (`games.jsonl`)."""
    return sweep_phase(jobs, store.parent, objects)


def _kept(coverage: dict[str, int]) -> float | None:
    """Promises kept: partner coverage honoured and contract entries paid, over all those due (CT-Bench paper, Sec. 2.3)."""
    kept = coverage.get("honoured", 0) + coverage.get("contract_paid", 0)
    due = kept + coverage.get("unfulfilled", 0) + coverage.get("contract_forfeit", 0)
    return kept / due if due else None


def select(jobs: list[GameSpec], needed: dict[str, set[str]]) -> list[GameSpec]:
    """The games of `jobs` that an agent still `needed` in its seat (by label) plays."""
    return [j for j in jobs if agent_name(j.red) in needed["red"] or agent_name(j.blue) in needed["blue"]]


def cells_of(job: GameSpec) -> list[tuple[str, str, str]]:
    """(role, agent, opponent) of both seats of the game."""
    return [("red", job.red, job.blue), ("blue", job.blue, job.red)]


def seats(records: dict[GameSpec, GameRecord], jobs: list[GameSpec], seated: dict[str, list[str]]) -> list[SeatOutcome]:
    """Both seats of every game: score, score over the planner's baseline, both-beat-baseline (asymmetric boards
    only, CT-Bench paper, Sec. 2.3), promises kept. CT-Bench has no solved optimum per seat, so no regret."""
    out = []
    for job in jobs:
        if job not in records:
            continue
        g = records[job]
        bbb = float(g.scores[0] > g.baselines[0] and g.scores[1] > g.baselines[1])
        for i, (role, agent, opponent) in enumerate((("red", job.red, job.blue), ("blue", job.blue, job.red))):
            out.append(
                seat_of(
                    role,
                    agent,
                    opponent,
                    unit_of(job),
                    g.rounds,
                    utility=float(g.scores[i]),
                    metrics={
                        "over_baseline": float(g.scores[i] - g.baselines[i]),
                        "both_beat_baseline": bbb if g.board_class == "asymmetric" else None,
                        "finished": float(role in g.finished),
                        "promises_kept": _kept(g.coverage.get(role, {})),
                    },
                    fallbacks=g.llm_null_actions.get(role, 0),
                )
            )
    return out
