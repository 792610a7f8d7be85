"""The CT-Bench paper's tables from run records, ours or imported: Tables 1–8 (per model × condition × mode),
Table 11 (promise keeping per player) and the contract-formation measures of spec §9."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from contractlang.vocab import Frozen
from games.ctbench.board import PLAYERS, benchmark_boards
from games.ctbench.metrics import COLUMNS, TITLES, Interval, game_metrics, t_interval
from games.ctbench.play import GameRecord

# the paper's table numbers: Pay-for-Partner 1–4, regular trading 5–8
TABLE_NUMBER = {("pfp", "none"): 1, ("pfp", "prog_points"): 2, ("pfp", "prog_trading"): 3, ("pfp", "nl_trading"): 4,
                ("trade", "none"): 5, ("trade", "prog_points"): 6, ("trade", "nl_trading"): 7,
                ("trade", "prog_trading"): 8}
CONDITION_TITLE = {"none": "No contract", "prog_points": "Prog-Points", "prog_trading": "Prog-Trading",
                   "nl_trading": "NL-Trading"}
MODE_TITLE = {"pfp": "Pay-for-Partner", "trade": "Regular trading"}
MEAN_ROW = "Mean (all models)"
PAPER_TABLES_FILE = Path(__file__).resolve().parent / "data" / "paper_tables.json"


class PaperTable(Frozen):
    number: int
    mode: str
    condition: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, int, dict[str, Interval]], ...]  # (agents, games, cells)


class PromiseRow(Frozen):
    """Table 11: Pay-for-Partner coverages kept and broken by each seat."""

    pairing: str
    kept: tuple[int, int]  # by P-Red, by P-Blue
    broken: tuple[int, int]

    def rate(self, i: int) -> float | None:
        total = self.kept[i] + self.broken[i]
        return self.kept[i] / total if total else None


class FormationRow(Frozen):
    """Contract-formation measures (§9) for one condition and board class, over games with a formed contract."""

    condition: str
    board_class: str
    contracts: int
    net_for_red: Interval  # points (Prog-Points) or tiles (Prog-Trading) P-Red gains on balance
    first_mover_share: Interval
    winner_takes_all: Interval | None  # Prog-Points only
    equal_split: Interval


class MissingMetrics(Frozen):
    formation: tuple[FormationRow, ...]
    bottleneck_defection: dict[str, Interval]  # per condition, Pay-for-Partner games on bottleneck boards


def agents_of(g: GameRecord) -> str:
    return g.red_agent if g.red_agent == g.blue_agent else f"{g.red_agent} vs {g.blue_agent}"


def paper_tables(records: list[GameRecord]) -> list[PaperTable]:
    """One table per (mode, condition) present, a row per model plus the mean over all games, in paper order."""
    tables = []
    for (mode, condition), number in sorted(TABLE_NUMBER.items(), key=lambda kv: kv[1]):
        chosen = [g for g in records if g.mode == mode and g.condition == condition]
        if not chosen:
            continue
        columns = COLUMNS[mode] if condition != "none" else tuple(c for c in COLUMNS[mode] if c != "contract_active")
        groups: dict[str, list[GameRecord]] = {}
        for g in chosen:
            groups.setdefault(agents_of(g), []).append(g)
        rows = [(name, len(gs), _cells(gs, columns)) for name, gs in sorted(groups.items())]
        if len(groups) > 1:
            rows.append((MEAN_ROW, len(chosen), _cells(chosen, columns)))
        tables.append(PaperTable(number=number, mode=mode, condition=condition, columns=columns, rows=tuple(rows)))
    return tables


def _cells(games: list[GameRecord], columns: tuple[str, ...]) -> dict[str, Interval]:
    metrics = [game_metrics(g) for g in games]
    return {c: t_interval(getattr(m, c) for m in metrics) for c in columns}


def promise_keeping(records: list[GameRecord]) -> list[PromiseRow]:
    """Table 11's layout: No-Contract Pay-for-Partner games on Mutually Dependent boards, per seat pairing."""
    rows: dict[str, list[int]] = {}
    for g in records:
        if g.mode != "pfp" or g.condition != "none" or g.board_class != "mutually_dependent":
            continue
        acc = rows.setdefault(f"{g.red_agent} (Red) × {g.blue_agent} (Blue)", [0, 0, 0, 0])
        for i, p in enumerate(PLAYERS):
            acc[i] += g.coverage.get(p, {}).get("honoured", 0)
            acc[2 + i] += g.coverage.get(p, {}).get("unfulfilled", 0)
    return [PromiseRow(pairing=k, kept=(v[0], v[1]), broken=(v[2], v[3])) for k, v in sorted(rows.items())]


def _received(terms: dict, player: str) -> tuple[int, int]:
    """(resource `player` receives, resource it gives) under a contract: points or covered tiles."""
    if terms["points"]:
        got = sum(p["amount"] for p in terms["points"] if p["receiver"] == player)
        given = sum(p["amount"] for p in terms["points"] if p["giver"] == player)
    else:
        got = sum(1 for c in terms["coverage"] if c["receiver"] == player)
        given = sum(1 for c in terms["coverage"] if c["giver"] == player)
    return got, given


def missing_metrics(records: list[GameRecord]) -> MissingMetrics:
    """Net points / tiles, first-mover share, winner-takes-all and equal split [CT-39]; bottleneck defection."""
    formation = []
    for condition in ("prog_points", "prog_trading"):
        for board_class in ("independent", "mutually_dependent", "asymmetric"):
            terms = [g.contract_terms for g in records if g.condition == condition and g.board_class == board_class
                     and g.contract_active and g.contract_terms is not None]
            if not terms:
                continue
            flows = [(_received(t, "red"), _received(t, "blue")) for t in terms]
            net = t_interval(red[0] - red[1] for red, _ in flows)
            share = t_interval(red[0] / (red[0] + blue[0]) if red[0] + blue[0] else None for red, blue in flows)
            wta = t_interval(float((red[0] > 0) != (blue[0] > 0)) for red, blue in flows) \
                if condition == "prog_points" else None
            equal = t_interval(float(red[0] == blue[0]) for red, blue in flows)
            formation.append(FormationRow(condition=condition, board_class=board_class, contracts=len(terms),
                                          net_for_red=net, first_mover_share=share, winner_takes_all=wta,
                                          equal_split=equal))
    bottleneck: dict[str, Interval] = {}
    for condition in CONDITION_TITLE:
        rates = []
        for g in records:
            board = benchmark_boards(g.board_set)[g.board_id].board
            controller = board.bottleneck() if g.mode == "pfp" and g.condition == condition else None
            if controller is None:
                continue
            cov = g.coverage.get(controller, {})
            attempts = cov.get("honoured", 0) + cov.get("unfulfilled", 0)
            rates.append(cov.get("unfulfilled", 0) / attempts if attempts else None)
        if rates:
            bottleneck[condition] = t_interval(rates)
    return MissingMetrics(formation=tuple(formation), bottleneck_defection=bottleneck)


class CellDifference(Frozen):
    table: int
    row: str
    column: str
    ours: str
    paper: str


@lru_cache(maxsize=1)
def _paper_cells() -> dict[str, dict[str, list[str]]]:
    return json.loads(PAPER_TABLES_FILE.read_text())["tables"]


def paper_cell(table: PaperTable, row: str, column: str) -> str | None:
    """The paper's printed cell for a model row (named as the authors' logs name models) and column."""
    cells = _paper_cells().get(str(table.number), {}).get(row)
    return cells[table.columns.index(column)] if cells is not None else None


def compare_with_paper(tables: list[PaperTable]) -> tuple[int, list[CellDifference]]:
    """How many of our cells the paper prints, and every one that differs from its printed value."""
    compared, differences = 0, []
    for t in tables:
        for name, _, cells in t.rows:
            for c in t.columns:
                paper = paper_cell(t, name, c)
                if paper is None:
                    continue
                compared += 1
                if cells[c].text() != paper:
                    differences.append(CellDifference(table=t.number, row=name, column=TITLES[c],
                                                      ours=cells[c].text(), paper=paper))
    return compared, differences


def table_text(table: PaperTable, with_paper: bool = False) -> str:
    """The table as the paper prints it: a model column, then `mean ± half-width` cells; `with_paper` adds the
    paper's value after every cell that differs from it."""

    def cell(name: str, cells: dict[str, Interval], c: str) -> str:
        ours = cells[c].text()
        paper = paper_cell(table, name, c) if with_paper else None
        return ours if paper is None or paper == ours else f"{ours} (paper {paper})"

    head = ["Model", *(TITLES[c] for c in table.columns), "n"]
    body = [[name, *(cell(name, cells, c) for c in table.columns), str(n)] for name, n, cells in table.rows]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    title = f"Table {table.number}: {MODE_TITLE[table.mode]}; {CONDITION_TITLE[table.condition]}"
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body]
    return "\n".join(lines)


def promise_text(rows: list[PromiseRow]) -> str:
    def rate(r: PromiseRow, i: int) -> str:
        v = r.rate(i)
        return "–" if v is None else f"{round(100 * v)}%"

    lines = ["Table 11: promise keeping (No contract, Mutually Dependent boards, Pay-for-Partner)",
             "Pairing | P-Red kept/broken | rate | P-Blue kept/broken | rate"]
    lines += [f"{r.pairing} | {r.kept[0]}/{r.broken[0]} | {rate(r, 0)} | {r.kept[1]}/{r.broken[1]} | {rate(r, 1)}"
              for r in rows]
    return "\n".join(lines)


def missing_text(m: MissingMetrics) -> str:
    lines = ["Contract formation (games with a formed contract; mean ± 95% CI)",
             "condition | board class | contracts | net for P-Red | first-mover share | winner-takes-all | "
             "equal split"]
    for r in m.formation:
        wta = r.winner_takes_all.text() if r.winner_takes_all is not None else "–"
        lines.append(f"{CONDITION_TITLE[r.condition]} | {r.board_class} | {r.contracts} | {r.net_for_red.text()} | "
                     f"{r.first_mover_share.text()} | {wta} | {r.equal_split.text()}")
    lines.append("Bottleneck defection (Pay-for-Partner, boards whose goal-adjacent tiles share a colour; the "
                 "controlling player's defection rate)")
    lines += [f"{CONDITION_TITLE[c]} | {v.text()} (n={v.n})" for c, v in m.bottleneck_defection.items()]
    return "\n".join(lines)


def save_plots(records: list[GameRecord], directory: Path,
               write: Callable[[Path, bytes], None]) -> list[Path]:
    """Mean normalised joint reward by condition and board class, one PNG per mode, with 95% CIs."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    classes = ("independent", "mutually_dependent", "asymmetric")
    written = []
    for mode in ("pfp", "trade"):
        chosen = [g for g in records if g.mode == mode]
        if not chosen:
            continue
        conditions = [c for c in CONDITION_TITLE if any(g.condition == c for g in chosen)]
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(conditions)
        for k, condition in enumerate(conditions):
            cells = [_interval(chosen, condition, cls) for cls in classes]
            xs = [i + (k - (len(conditions) - 1) / 2) * width for i in range(len(classes))]
            ax.bar(xs, [c.mean or 0 for c in cells], width, yerr=[c.half_width or 0 for c in cells],
                   label=CONDITION_TITLE[condition], capsize=3)
        ax.set_xticks(range(len(classes)), ["Independent", "Mutually Dependent", "Asymmetric"])
        ax.set_ylabel("normalised joint reward R̂")
        ax.set_ylim(0, 1.1)
        ax.set_title(f"{MODE_TITLE[mode]}: reward by condition and board class (mean ± 95% CI)")
        ax.legend(fontsize=8, loc="lower right")
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", dpi=120)
        plt.close(fig)
        path = directory / f"reward-{mode}.png"
        write(path, buffer.getvalue())
        written.append(path)
    return written


def _interval(records: Iterable[GameRecord], condition: str, board_class: str) -> Interval:
    return t_interval(game_metrics(g).normalised_reward for g in records
                      if g.condition == condition and g.board_class == board_class)


class RunsReport(Frozen):
    """Everything `ctbench report` shows for a runs file: the paper's tables, Table 11, the formation measures,
    the comparison with the paper's printed cells and the plots written."""

    games: int
    skipped: int
    tables: tuple[PaperTable, ...]
    promises: tuple[PromiseRow, ...]
    missing: MissingMetrics
    compared: int
    differences: tuple[CellDifference, ...]
    plots: tuple[Path, ...] = ()


def runs_report(records: list[GameRecord], skipped: int, png: Path | None,
                write: Callable[[Path, bytes], None]) -> RunsReport:
    """The report on `records` (`skipped` runs left out before), drawing the plots into `png` when given."""
    tables = paper_tables(records)
    compared, differences = compare_with_paper(tables)
    return RunsReport(games=len(records), skipped=skipped, tables=tuple(tables),
                      promises=tuple(promise_keeping(records)), missing=missing_metrics(records), compared=compared,
                      differences=tuple(differences),
                      plots=tuple(save_plots(records, png, write)) if png is not None else ())
