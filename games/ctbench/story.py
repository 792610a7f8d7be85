"""Person-facing CT-Bench output: a game's story and the summary table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from contractlang.interpreter import ChipTransfer, ContractBlocked, Forfeit, PointsTransfer
from contractlang.interpreter.events import EventBase, MoveAttempt
from games.ctbench.board import BenchmarkBoard
from games.ctbench.metrics import TITLES, TableRow
from games.ctbench.play import GameRecord

ENFORCEMENT = (ChipTransfer, Forfeit, ContractBlocked, PointsTransfer)  # told under the move that fired them


def story(record: GameRecord, bench: BenchmarkBoard) -> str:
    lines = [
        f"Board {bench.ref} ({bench.board_class}), {record.mode} mode, "
        f"P-Red {record.red_agent} vs P-Blue {record.blue_agent}, {record.rules} rules"
    ]
    lines += [line for e in record.log if (line := told(e))]
    red, blue = record.scores
    lines.append(
        f"scores: P-Red {red}, P-Blue {blue} (before contract effects {record.raw_scores[0]}, "
        f"{record.raw_scores[1]}; baselines {record.baselines[0]}, {record.baselines[1]})"
    )
    return "\n".join(lines)


def told(e: EventBase) -> str | None:
    """One event as a line of the story, in its own words (`describe`) after its round; the move attempt itself
    is told by what came of it."""
    if isinstance(e, MoveAttempt):
        return None
    where = getattr(e, "round", None)
    if where is not None:
        return f"round {where}: {e.describe()}"
    return f"  {e.describe()}" if isinstance(e, ENFORCEMENT) else e.describe()


def print_summary(rows: list[TableRow], console: Console | None = None) -> None:
    console = console or Console(width=160)
    for mode in ("pfp", "trade"):
        chosen = [r for r in rows if r.mode == mode]
        if not chosen:
            continue
        cols = list(dict.fromkeys(c for r in chosen for c in r.cells))
        table = Table(title=f"{'Pay-for-Partner' if mode == 'pfp' else 'Regular trading'} (mean ± 95% CI)")
        table.add_column("condition")
        table.add_column("agents")
        table.add_column("rules")
        table.add_column("games")
        for c in cols:
            table.add_column(TITLES[c])
        for r in chosen:
            table.add_row(
                r.condition, r.agents, r.rules, str(r.games), *[r.cells[c].text() if c in r.cells else "" for c in cols]
            )
        console.print(table)
