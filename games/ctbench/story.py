"""Person-facing CT-Bench output: a game's story and the summary table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from games.ctbench.board import BenchmarkBoard
from games.ctbench.metrics import TITLES, TableRow
from games.ctbench.play import GameRecord

_PAID = {"own": "with its own chip", "pfp": "covered by its partner (Pay-for-Partner)",
         "contract": "paid by the contract"}


def story(record: GameRecord, bench: BenchmarkBoard) -> str:
    lines = [f"Board {bench.id} ({bench.board_class}), {record.mode} mode, "
             f"P-Red {record.red_agent} vs P-Blue {record.blue_agent}"]
    for e in record.log:
        t, r = e["type"], e.get("round", "")
        if t == "moved":
            lines.append(f"round {r}: {e['player']} moves to {tuple(e['tile'])} {_PAID[e['paid_by']]}")
        elif t == "move_failed":
            lines.append(f"round {r}: {e['player']} cannot pay for {tuple(e['tile'])} and stays")
        elif t == "proposal":
            lines.append(f"round {r}: {e['player']} proposes {_offer(e['offer'])}")
        elif t == "response":
            verdict = "accepts" if e["accept"] else "rejects"
            lines.append(f"round {r}: {e['player']} {verdict}" + ("" if e["executed"] or not e["accept"]
                                                                    else " (it could not be executed)"))
        elif t == "coverage_honoured":
            lines.append(f"round {r}: {e['payer']} honours its Pay-for-Partner promise")
        elif t == "coverage_unfulfilled":
            lines.append(f"round {r}: {e['payer']} does not honour its promise ({e['why']})")
        elif t == "contract_transfer":
            lines.append(f"  contract: {e['giver']} gives {e['receiver']} a {e['colour']} chip for {tuple(e['tile'])}")
        elif t == "forfeit":
            lines.append(f"  contract: {e['player']} lacks a {e['colour']} chip for {tuple(e['tile'])}: forfeits (score 0)")
        elif t == "goal_reached":
            lines.append(f"round {r}: {e['player']} reaches the goal")
        elif t == "game_end":
            lines.append(f"game over: {e['reason']}")
    red, blue = record.scores
    lines.append(f"scores: P-Red {red}, P-Blue {blue} (before contract effects {record.raw_scores[0]}, "
                 f"{record.raw_scores[1]}; baselines {record.baselines[0]}, {record.baselines[1]})")
    return "\n".join(lines)


def _offer(offer: dict) -> str:
    def counts(c: dict) -> str:
        return ", ".join(f"{n} {k}" for k, n in c.items() if n) or "nothing"

    if "give" in offer:
        return f"a trade: gives {counts(offer['give'])} for {counts(offer['receive'])}"
    return f"Pay-for-Partner: covers {counts(offer['i_cover'])} of the partner's tiles, asks {counts(offer['you_cover'])}"


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
        table.add_column("games")
        for c in cols:
            table.add_column(TITLES[c])
        for r in chosen:
            table.add_row(r.condition, r.agents, str(r.games), *[r.cells[c].text() if c in r.cells else "" for c in cols])
        console.print(table)
