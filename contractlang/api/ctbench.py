"""`cl.ctbench`: the CT-Bench board set and board pictures, offline sweeps (boards × conditions × modes × pairings
× repeats, resumable), and the CT-Bench authors' logs: import, replay under a rule set, the paper's report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from contractlang.api.results import Rows, flat
from contractlang.errors import BadData, Flag, Int, Seed, Text, Workers, checked

__all__ = [
    "BoardPicture",
    "Replayed",
    "Report",
    "Sweep",
    "board",
    "boards",
    "import_logs",
    "replay",
    "report",
    "show",
    "sweep",
]
"""The verbs and result types of this part of the face (its other functions are their helpers)."""


Board = Int | Text
"""A CT-Bench board: an ID 0..79, or `ID` / `SET:ID` as text."""
CONDITIONS = ("none", "prog_trading", "prog_points", "nl_trading")
"""The contract conditions of a sweep (CT-Bench paper, Sec. 4): no contract, the two programmatic ones, NL."""
MODES = ("pfp", "trade")
"""Pay-for-Partner and regular trading."""


@checked
def boards(board_set: Text = "ours"):
    """The `BoardSetSummary`: class counts over all 3,432 boards, and the rows (class, shortfalls, best paths,
    baselines) of the 80-board set `board_set` (ours, or paper: the CT-Bench authors' grids)."""
    from contractlang.api.language import choose
    from contractlang.vocab import BOARD_SETS
    from games.ctbench.board import board_set_summary

    return board_set_summary(choose(board_set, BOARD_SETS, "board set"))


class BoardPicture(Rows):
    """A board drawn: its reference, class and key, the grid as text (rich markup), each player's best path and
    shortfall, and the PNG written if one was asked for."""

    ref: str
    """How to name the board: its ID, set-qualified outside our set (`paper:17`)."""
    board_class: str
    """The board's class (CT-Bench paper, Sec. 4)."""
    key: str
    """The board's key among all 3,432 boards."""
    text: str
    """The grid as text with rich colour markup."""
    best_paths: dict[str, tuple[tuple[int, int], ...]]
    """Each player's best path from start to goal, tile by tile."""
    shortfalls: dict[str, int]
    """Each player's chips short of its best path."""
    png: Path | None = None
    """The PNG drawn, when one was asked for."""

    def rows(self) -> list[dict]:
        """One row per player: best path and shortfall."""
        return [
            {"player": p, "path": list(self.best_paths[p]), "shortfall": self.shortfalls[p]} for p in self.best_paths
        ]


@checked
def board(ref: Board, board_set: Text | None = None, header: Text | None = None):
    """The benchmark board (`BenchmarkBoard`) `ref` names (ID or SET:ID), in `board_set` and the set a contract's
    game header names (`header`) when given: every set named must be the same; none named means ours."""
    from games.ctbench.board import board_ref

    return board_ref(str(ref), **{"--set": board_set, "the contract's game header": header})


@checked
def show(ref: Board, board_set: Text | None = None, png: str | Path | None = None) -> BoardPicture:
    """Draw board `ref` (ID or SET:ID, in `board_set` when given): colours, start, goal, both players' best
    paths; also into the PNG file `png` when given."""
    from games.ctbench.draw import board_text, save_png

    bench = board(ref, board_set)
    b = bench.board
    paths = {p: b.best_path(p) for p in ("red", "blue")}
    if png is not None:
        save_png(b, Path(png), title=f"board {bench.ref} ({bench.board_class})")
    return BoardPicture(
        ref=bench.ref,
        board_class=bench.board_class,
        key=str(b.key),
        text=board_text(b),
        best_paths={p: tuple(tuple(t) for t in path) for p, (path, _) in paths.items()},
        shortfalls={p: short for p, (_, short) in paths.items()},
        png=None if png is None else Path(png),
    )


class Sweep(Rows):
    """A sweep's records in the order of its games, its summary rows, how many games were played now."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    result: Any
    """The `SweepResult`: `records` in game order, summary `rows`, `played` now, `errored`, `limited`, `llm_usage`,
    and the `store` and `summary` files."""

    def rows(self) -> list[dict]:
        """One row per (condition, mode, agents) summary line, its cells flat."""
        return [flat("", r.model_dump(mode="json")) for r in self.result.rows]

    def print_summary(self, console=None) -> None:
        """The summary rows as the paper's tables, one per mode, on `console` (rich; default stdout)."""
        from games.ctbench.story import print_summary

        print_summary(list(self.result.rows), console)


def chosen_boards(boards, board_set: str | None, conditions, modes, rules: str = "authors") -> list:
    """The benchmark boards `boards` names ("all" of `board_set`, default ours, or board refs: IDs or SET:ID, in
    `board_set` when given), after checking the rule set, the conditions and the modes (`UnknownName`)."""
    from contractlang.errors import UnknownName
    from contractlang.vocab import BOARD_SETS, RULE_SETS
    from games.ctbench.board import benchmark_boards, board_ref

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
        if m not in MODES:
            raise UnknownName(f"unknown mode {m!r}; choose from {', '.join(MODES)}")
    return chosen


@checked
def sweep(
    out: str | Path = Path("ctbench-sweep"),
    boards: Literal["all"] | Annotated[Sequence[Board], Field(min_length=1)] = "all",
    board_set: Text | None = None,
    conditions: Annotated[Sequence[Text], Field(min_length=1)] = CONDITIONS,
    modes: Annotated[Sequence[Text], Field(min_length=1)] = MODES,
    pairs: Annotated[Sequence[tuple[Any, Any]], Field(min_length=1)] = (("planner", "planner"),),
    repeats: Annotated[int, Field(ge=1, le=1000, strict=True)] = 1,
    seed: Seed = 0,
    hidden: Flag = False,
    judge: Text = "rules",
    rules: Text = "authors",
    workers: Workers | None = None,
    ray: Text | None = None,
    llm: Any = None,
    progress: Callable[..., None] | None = None,
    notice: Callable[[str], None] = lambda note: None,
    fail_on_error: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None,
    estimate: Flag = False,
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


def _runs(path: Path) -> list:
    """Every line of a runs file (imported games or our game records); a bad line is `BadData`."""
    from games.ctbench.published import ImportProblem, read_runs

    try:
        return [item for _, item in read_runs(path)]
    except ImportProblem as exc:
        raise BadData(str(exc)) from None


@checked
def import_logs(
    directory: str | Path,
    out: str | Path,
    progress: Callable[..., None] | None = None,
    skipped: Callable[[Any], None] | None = None,
):
    """Import the CT-Bench authors' published game logs (a copy of their public_logs/, or any folder of game
    directories) into the runs file `out`, one typed game with its contract in contractlang per line: the
    `ImportSummary`. `skipped` hears each game directory that cannot be imported, and why."""
    from games.ctbench.published import import_logs as run_import

    return run_import(Path(directory), Path(out), progress or (lambda *a: None), skipped or (lambda problem: None))


class Replayed(Rows):
    """Every imported game re-played through our engine and Monitor: the `ReplaySummary` (where each parts from its
    log, the rules each needs to agree) and the text of each rule it names."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    summary: Any
    """The `ReplaySummary`: a verdict per game, the games each rule is needed by."""
    rule_texts: dict[str, str]
    """The text of each rule the summary names."""

    def rows(self) -> list[dict]:
        """One row per game's verdict."""
        return [flat("", v.model_dump(mode="json")) for v in self.summary.verdicts]

    def text(self) -> str:
        """The summary as `contractlang ctbench replay` prints it."""
        from games.ctbench.replay import replay_text

        return replay_text(self.summary)


@checked
def replay(runs: str | Path, rules: Text = "authors") -> Replayed:
    """Re-play every imported game of the runs file `runs` under the rule set `rules` ([CT-24a]) and report where
    each parts from its log (first differing turn, the final state field by field)."""
    from contractlang.api.language import choose
    from contractlang.interpreter import Rules
    from contractlang.vocab import RULE_SETS
    from games.ctbench.published import ImportedGame
    from games.ctbench.replay import RULES, replay_runs

    enforced = Rules.named(choose(rules, RULE_SETS, "rule set"))
    games = [g for g in _runs(Path(runs)) if isinstance(g, ImportedGame)]
    if not games:
        raise BadData(f"{runs}: holds no imported game (write one with `contractlang ctbench import`)")
    summary = replay_runs(games, enforced)
    return Replayed(summary=summary, rule_texts={k: RULES[k] for k in summary.by_rule})


class Report(Rows):
    """The CT-Bench paper's Tables 1–8 and 11, the contract-formation measures and the figures' panels over a runs
    file (`CTBenchReport`), with the paper's value beside every cell compared when `paper`."""

    model_config = Rows.model_config | {"arbitrary_types_allowed": True}

    report: Any
    """The `CTBenchReport`: tables, the comparison with the paper's cells, Table 11, formation, plots written."""
    paper: bool = False
    """Whether the text shows the paper's value beside every cell that differs, in the paper's model names."""

    def rows(self) -> list[dict]:
        """One row per table line: the table's name and the line's cells."""
        return [
            {"table": t.number, "mode": t.mode, "condition": t.condition, "agents": agents, "games": games}
            | flat("", {c: cell.model_dump(mode="json") for c, cell in cells.items()})
            for t in self.report.tables
            for agents, games, cells in t.rows
        ]

    def text(self) -> str:
        """The tables as `contractlang ctbench report` prints them (`--paper` when `paper`)."""
        from games.ctbench.report import report_text

        return report_text(self.report, with_paper=self.paper)


@checked
def report(runs: str | Path, png: str | Path | None = None, all_runs: Flag = False, paper: Flag = False) -> Report:
    """The paper's tables over the runs file `runs` (imported logs — the latest complete run of each game unless
    `all_runs`, as the paper — or a sweep's games.jsonl), the panels of Figures 4 and 19 into the folder `png`
    when given; `paper` compares with the paper: its model names, its value beside every cell that differs."""
    from games.ctbench.report import report_runs

    try:
        result = report_runs(
            _runs(Path(runs)), all_runs=all_runs, plots=None if png is None else Path(png), paper_names=paper
        )
    except ValueError as exc:
        if isinstance(exc, BadData):
            raise
        raise BadData(f"{runs}: {exc}") from None
    return Report(report=result, paper=paper)
