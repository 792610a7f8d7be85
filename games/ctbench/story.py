"""Person-facing CT-Bench output: a game's story and the summary table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from contractlang.interpreter.events import ChipCounts
from games.ctbench.board import BenchmarkBoard
from games.ctbench.log import (
    Arrangement,
    ContractForfeit,
    ContractPaymentBlocked,
    ContractTransfer,
    CoverageHonoured,
    CoverageUnfulfilled,
    ExplainedGameEnd,
    LogEvent,
    Moved,
    MoveFailed,
    Proposal,
    Response,
    RoundGoalReached,
    Trade,
)
from games.ctbench.metrics import TITLES, TableRow
from games.ctbench.play import GameRecord

_PAID = {
    "own": "with its own chip",
    "pfp": "covered by its partner (Pay-for-Partner)",
    "contract": "paid by the contract",
}


def story(record: GameRecord, bench: BenchmarkBoard) -> str:
    lines = [
        f"Board {bench.ref} ({bench.board_class}), {record.mode} mode, "
        f"P-Red {record.red_agent} vs P-Blue {record.blue_agent}, {record.rules} rules"
    ]
    lines += [line for e in record.log if (line := _line(e))]
    red, blue = record.scores
    lines.append(
        f"scores: P-Red {red}, P-Blue {blue} (before contract effects {record.raw_scores[0]}, "
        f"{record.raw_scores[1]}; baselines {record.baselines[0]}, {record.baselines[1]})"
    )
    return "\n".join(lines)


def _line(e: LogEvent) -> str | None:
    """One event as a sentence; the move attempt itself is told by what came of it."""
    if isinstance(e, Moved):
        return f"round {e.round}: {e.player} moves to {e.tile} {_PAID[e.paid_by]}"
    if isinstance(e, MoveFailed):
        return f"round {e.round}: {e.player} cannot pay for {e.tile} and stays"
    if isinstance(e, Proposal):
        return f"round {e.round}: {e.player} proposes {_offer(e.offer)}"
    if isinstance(e, Response):
        verdict = "accepts" if e.accept else "rejects"
        return f"round {e.round}: {e.player} {verdict}" + (
            "" if e.executed or not e.accept else " (it could not be executed)"
        )
    if isinstance(e, CoverageHonoured):
        return f"round {e.round}: {e.payer} honours its Pay-for-Partner promise"
    if isinstance(e, CoverageUnfulfilled):
        return f"round {e.round}: {e.payer} does not honour its promise ({e.why})"
    if isinstance(e, ContractTransfer):
        return f"  contract: {e.giver} gives {e.receiver} a {e.colour} chip for {e.tile}"
    if isinstance(e, ContractForfeit):
        return f"  contract: {e.player} lacks a {e.colour} chip for {e.tile}: forfeits (score 0)"
    if isinstance(e, ContractPaymentBlocked):
        return f"  contract: {e.giver} lacks a {e.colour} chip for {e.tile}: the contract does not pay this move"
    if isinstance(e, RoundGoalReached):
        return f"round {e.round}: {e.player} reaches the goal"
    if isinstance(e, ExplainedGameEnd):
        return f"game over: {e.reason}"
    return None


def _offer(offer: Trade | Arrangement) -> str:
    def counts(c: ChipCounts) -> str:
        return ", ".join(f"{n} {k}" for k, n in c.model_dump().items() if n) or "nothing"

    if isinstance(offer, Trade):
        return f"a trade: gives {counts(offer.give)} for {counts(offer.receive)}"
    return f"Pay-for-Partner: covers {counts(offer.i_cover)} of the partner's tiles, asks {counts(offer.you_cover)}"


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
