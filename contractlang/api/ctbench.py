"""`cl.ctbench`: offline CT-Bench sweeps (boards × conditions × modes × pairings × repeats), resumable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contractlang.api.results import Rows, flat


class Sweep(Rows):
    """A sweep's records in the order of its games, its summary rows, how many games were played now."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    result: Any  # games.ctbench.sweep.SweepResult

    def rows(self) -> list[dict]:
        return [flat("", r.model_dump(mode="json")) for r in self.result.rows]


def chosen_boards(boards, board_set: str | None, conditions, modes, rules: str = "authors") -> list:
    """The benchmark boards `boards` names ("all" of `board_set`, default ours, or board refs: IDs or SET:ID, in
    `board_set` when given), after checking the rule set, the conditions and the modes (`UnknownName`)."""
    from contractlang.errors import UnknownName
    from contractlang.vocab import BOARD_SETS, RULE_SETS
    from games.ctbench.board import benchmark_boards, board_ref
    from games.ctbench.play import CONDITIONS

    if rules not in RULE_SETS:
        raise UnknownName(f"unknown rule set {rules!r}; choose from {', '.join(RULE_SETS)}")
    if board_set is not None and board_set not in BOARD_SETS:
        raise UnknownName(f"unknown board set {board_set!r}; choose from {', '.join(BOARD_SETS)}")
    chosen = (
        benchmark_boards(board_set or "ours")
        if boards == "all"
        else [board_ref(str(ref), **{"--set": board_set}) for ref in boards]
    )
    for c in conditions:
        if c not in CONDITIONS:
            raise UnknownName(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
    for m in modes:
        if m not in ("pfp", "trade"):
            raise UnknownName(f"unknown mode {m!r}; choose from pfp, trade")
    return chosen


def sweep(
    out: str | Path,
    boards="all",
    board_set: str | None = None,
    conditions=("none",),
    modes=("pfp",),
    pairs=(("planner", "planner"),),
    repeats: int = 1,
    seed: int = 0,
    hidden: bool = False,
    judge: str = "rules",
    rules: str = "authors",
    workers: int | None = None,
    ray: str | None = None,
    llm=None,
    progress: Callable[..., None] | None = None,
    notice: Callable[[str], None] = lambda note: None,
    fail_on_error: float | None = None,
    estimate: bool = False,
):
    """Play every game of the sweep that `out/games.jsonl` does not hold yet, storing each as it ends. `boards`
    is "all" (of `board_set`, default ours) or board refs (IDs or SET:ID, in `board_set` when given); `pairs`
    are (red, blue) agent specs (built-in names, `py:`, `cmd:`, `llm:`) or Python agents (labelled by their
    `name`; they must pickle for `workers` > 1); `llm` is an `LlmSettings` for LLM players and judges (its
    `max_connections` games wait on the model at once, in threads). A game whose model calls fail is stored
    as errored and the run goes on (`fail_on_error`: a count, or a share under 1, that ends it with
    `RunEnded`). `estimate`: return the `games.runner.RunEstimate` instead, playing nothing."""
    from games.ctbench.sweep import check_names, decisions, sweep_phase, sweep_specs
    from games.ctbench.sweep import sweep as run_sweep
    from games.runner import RunOptions
    from games.runner import estimate as run_estimate

    chosen = chosen_boards(boards, board_set, conditions, modes, rules)
    from games.agents import agent_name

    objects = {agent_name(a): a for pair in pairs for a in pair if not isinstance(a, str)}
    pairs = [tuple(a if isinstance(a, str) else agent_name(a) for a in pair) for pair in pairs]
    check_names(pairs, judge, objects)
    specs = sweep_specs(
        [(b.board_set, b.id) for b in chosen],
        list(conditions),
        list(modes),
        pairs,
        repeats,
        seed,
        not hidden,
        judge,
        rules,
    )
    if estimate:
        return run_estimate(sweep_phase(specs, Path(out), objects), decisions, llm)
    options = RunOptions(workers=workers, ray=ray, llm=llm, fail_on_error=fail_on_error)
    return Sweep(result=run_sweep(specs, Path(out), options, progress or (lambda *a: None), notice, objects))
