"""The CT-Bench paper's tables from run records, ours or imported: Tables 1–8 (per model × condition × mode),
Table 11 (promise keeping per player) and the contract-formation measures of CT-Bench paper, Sec. 2.3."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from contractlang.files import make_folder, write_atomically
from contractlang.vocab import Frozen
from games.agents import agent_name
from games.ctbench.board import PLAYERS, benchmark_boards
from games.ctbench.metrics import COLUMNS, TITLES, Interval, game_metrics, t_interval
from games.ctbench.play import GameRecord
from games.ctbench.published import ImportedGame

# the paper's table numbers: Pay-for-Partner 1–4, regular trading 5–8
TABLE_NUMBER = {
    ("pfp", "none"): 1,
    ("pfp", "prog_points"): 2,
    ("pfp", "prog_trading"): 3,
    ("pfp", "nl_trading"): 4,
    ("trade", "none"): 5,
    ("trade", "prog_points"): 6,
    ("trade", "nl_trading"): 7,
    ("trade", "prog_trading"): 8,
}
CONDITION_TITLE = {
    "none": "No contract",
    "prog_points": "Prog-Points",
    "prog_trading": "Prog-Trading",
    "nl_trading": "NL-Trading",
}
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
    red: str
    blue: str
    kept: tuple[int, int]  # by P-Red, by P-Blue
    broken: tuple[int, int]

    def rate(self, i: int) -> float | None:
        total = self.kept[i] + self.broken[i]
        return self.kept[i] / total if total else None


class Share(Frozen):
    """A share in [0, 1] and its 95% interval, which stays in [0, 1] ([CT-38] gives t-intervals for the tables'
    means; a share of a few games needs one that cannot leave its range)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    def text(self) -> str:
        return "–" if self.mean is None else f"{self.mean:.2f} [{self.low:.2f}, {self.high:.2f}]"


Z95 = 1.959963984540054


def wilson(outcomes: Iterable[bool]) -> Share:
    """The share of true outcomes with its 95% Wilson score interval."""
    xs = [bool(v) for v in outcomes]
    n = len(xs)
    if n == 0:
        return Share(mean=None, low=None, high=None, n=0)
    p, z2 = sum(xs) / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Share(mean=p, low=max(0.0, centre - half), high=min(1.0, centre + half), n=n)


def bounded(values: Iterable[float | None]) -> Share:
    """The mean of shares in [0, 1] with its 95% t-interval ([CT-38]) cut to [0, 1]."""
    interval = t_interval(values)
    if interval.mean is None:
        return Share(mean=None, low=None, high=None, n=0)
    half = interval.half_width or 0.0
    return Share(
        mean=interval.mean, low=max(0.0, interval.mean - half), high=min(1.0, interval.mean + half), n=interval.n
    )


class FormationRow(Frozen):
    """Contract-formation measures (CT-Bench paper, Sec. 2.3) for one condition and board class, over games with a formed contract."""

    condition: str
    board_class: str
    contracts: int
    net_for_red: Interval  # points (Prog-Points) or tiles (Prog-Trading) P-Red gains on balance
    first_mover_share: Share  # P-Red's share of what the contract gives, per game
    winner_takes_all: Share | None  # Prog-Points only
    equal_split: Share


class MissingMetrics(Frozen):
    formation: tuple[FormationRow, ...]
    bottleneck_defection: dict[str, Interval]  # per condition, Pay-for-Partner games on bottleneck boards


def agents_of(g: GameRecord) -> str:
    red, blue = agent_name(g.red_agent), agent_name(g.blue_agent)  # a LABEL=SPEC agent by its label
    return red if red == blue else f"{red} vs {blue}"


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
            rows.append((MEAN_ROW, len(chosen), mean_of_rows([cells for _, _, cells in rows], columns)))
        tables.append(PaperTable(number=number, mode=mode, condition=condition, columns=columns, rows=tuple(rows)))
    return tables


def mean_of_rows(rows: list[dict[str, Interval]], columns: tuple[str, ...]) -> dict[str, Interval]:
    """The Mean row as the paper's is computed: the unweighted mean of the model rows' means (it equals the
    paper's printed Mean in 39 of its 46 cells, a mean pooled over the games in 25). The paper does not say how
    its ± is computed: ours is the 95% half-width of that mean from the rows' own, √(Σ h²) / k."""
    out = {}
    for c in columns:
        defined = [r[c] for r in rows if r[c].mean is not None]
        k = len(defined)
        out[c] = (
            Interval(
                mean=sum(i.mean for i in defined) / k,
                half_width=math.sqrt(sum((i.half_width or 0.0) ** 2 for i in defined)) / k,
                n=sum(i.n for i in defined),
            )
            if k
            else Interval(mean=None, half_width=None, n=0)
        )
    return out


MEAN_NOTE = (
    "  Mean: the unweighted mean of the model rows, as the paper's Mean rows are; the paper gives neither the "
    "games behind them nor how their ± is computed (ours: √(Σ h²) / k from the rows' 95% half-widths)."
)


def _cells(games: list[GameRecord], columns: tuple[str, ...]) -> dict[str, Interval]:
    metrics = [game_metrics(g) for g in games]
    return {c: t_interval(getattr(m, c) for m in metrics) for c in columns}


def promise_keeping(records: list[GameRecord]) -> list[PromiseRow]:
    """Table 11's layout: No-Contract Pay-for-Partner games on Mutually Dependent boards, per seat pairing."""
    rows: dict[tuple[str, str], list[int]] = {}
    for g in records:
        if g.mode != "pfp" or g.condition != "none" or g.board_class != "mutually_dependent":
            continue
        acc = rows.setdefault((g.red_agent, g.blue_agent), [0, 0, 0, 0])
        for i, p in enumerate(PLAYERS):
            acc[i] += g.coverage.get(p, {}).get("honoured", 0)
            acc[2 + i] += g.coverage.get(p, {}).get("unfulfilled", 0)
    return [
        PromiseRow(pairing=_pairing(red, blue), red=red, blue=blue, kept=(v[0], v[1]), broken=(v[2], v[3]))
        for (red, blue), v in sorted(rows.items())
    ]


def _pairing(red: str, blue: str) -> str:
    return f"{red} (Red) × {blue} (Blue)"


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
            terms = [
                g.contract_terms
                for g in records
                if g.condition == condition
                and g.board_class == board_class
                and g.contract_active
                and g.contract_terms is not None
            ]
            if not terms:
                continue
            flows = [(_received(t, "red"), _received(t, "blue")) for t in terms]
            net = t_interval(red[0] - red[1] for red, _ in flows)
            share = bounded(red[0] / (red[0] + blue[0]) if red[0] + blue[0] else None for red, blue in flows)
            wta = wilson((red[0] > 0) != (blue[0] > 0) for red, blue in flows) if condition == "prog_points" else None
            equal = wilson(red[0] == blue[0] for red, blue in flows)
            formation.append(
                FormationRow(
                    condition=condition,
                    board_class=board_class,
                    contracts=len(terms),
                    net_for_red=net,
                    first_mover_share=share,
                    winner_takes_all=wta,
                    equal_split=equal,
                )
            )
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


class CellAbsent(Frozen):
    """A cell whose printed value rests on games the input does not hold (the paper's row has more)."""

    table: int
    row: str
    column: str
    ours: str
    paper: str
    games: int  # games behind our row
    paper_games: int | None  # games behind the paper's row; None for a Mean row, which rests on its rows


class PaperComparison(Frozen):
    """Our cells against the paper's printed ones: those on the same games compared (equal or a difference),
    the others marked as resting on runs the input does not hold."""

    compared: int
    differences: tuple[CellDifference, ...]
    absent: tuple[CellAbsent, ...]


@lru_cache(maxsize=1)
def _paper_data() -> dict:
    return json.loads(PAPER_TABLES_FILE.read_text())


def paper_name(row: str) -> str:
    """The paper's name for a row named as the authors' logs name models (other names are kept)."""
    return _paper_data()["model_names"].get(row, row)


def paper_cell(table: PaperTable, row: str, column: str) -> str | None:
    """The paper's printed cell for a model row (named as the authors' logs name models) and column."""
    cells = _paper_data()["tables"].get(str(table.number), {}).get(row)
    return cells[table.columns.index(column)] if cells is not None else None


def paper_games(table: PaperTable, row: str) -> int | None:
    """How many games the paper's row rests on (CT-Bench paper, App. E); None for its Mean rows."""
    return _paper_data()["games"].get(str(table.number), {}).get(row)


def on_paper_games(table: PaperTable, row: str, n: int) -> bool:
    """Whether our row rests on at least the games the paper's does: a Mean row when every model row of the
    paper's table does."""
    if row != MEAN_ROW:
        needed = paper_games(table, row)
        return needed is None or n >= needed
    ours = {name: games for name, games, _ in table.rows}
    return all(
        name in ours and on_paper_games(table, name, ours[name])
        for name in _paper_data()["games"].get(str(table.number), {})
    )


def short_of_paper(table: PaperTable, row: str, n: int, paper: str) -> str:
    """The paper's value beside one of ours that rests on fewer games than the paper's."""
    needed = paper_games(table, row)
    if needed is None:
        return f"(paper {paper}, a mean of rows whose games are not all here)"
    return f"(paper {paper} over {needed} games, {n} here)"


def _value(cell: str) -> tuple[float, float] | None:
    """A printed `mean ± half-width` as numbers (the paper prints some as `0 ± 0`); None for an undefined cell."""
    mean, sep, half = cell.partition("±")
    try:
        return (round(float(mean), 2), round(float(half), 2)) if sep else None
    except ValueError:
        return None


def printed(interval: Interval) -> str:
    """A cell as the paper prints it: an undefined mean (no game to average) is printed as 0.00 ± 0.00."""
    return interval.text() if interval.mean is not None else "0.00 ± 0.00"


def compare_with_paper(tables: list[PaperTable]) -> PaperComparison:
    """Every cell the paper prints: compared when our row rests on at least the paper's games, else marked."""
    compared, differences, absent = 0, [], []
    for t in tables:
        for name, n, cells in t.rows:
            needed = paper_games(t, name)
            for c in t.columns:
                paper = paper_cell(t, name, c)
                if paper is None:
                    continue
                ours = printed(cells[c])
                if not on_paper_games(t, name, n):
                    absent.append(
                        CellAbsent(
                            table=t.number,
                            row=name,
                            column=TITLES[c],
                            ours=ours,
                            paper=paper,
                            games=n,
                            paper_games=needed,
                        )
                    )
                    continue
                compared += 1
                if _value(ours) != _value(paper):
                    differences.append(
                        CellDifference(table=t.number, row=name, column=TITLES[c], ours=ours, paper=paper)
                    )
    return PaperComparison(compared=compared, differences=tuple(differences), absent=tuple(absent))


def table_text(table: PaperTable, with_paper: bool = False) -> str:
    """The table as the paper prints it: a model column, then `mean ± half-width` cells. `with_paper` names
    rows as the paper does, prints undefined cells as it does, and adds the paper's value after every cell that
    differs from it, or that rests on games the input does not hold (saying so)."""

    def cell(name: str, n: int, cells: dict[str, Interval], c: str) -> str:
        if not with_paper:
            return cells[c].text()
        ours, paper = printed(cells[c]), paper_cell(table, name, c)
        if paper is None:
            return ours
        if not on_paper_games(table, name, n):
            return f"{ours} {short_of_paper(table, name, n, paper)}"
        return ours if _value(ours) == _value(paper) else f"{ours} (paper {paper})"

    head = ["Model", *(TITLES[c] for c in table.columns), "n"]
    body = [
        [paper_name(name) if with_paper else name, *(cell(name, n, cells, c) for c in table.columns), str(n)]
        for name, n, cells in table.rows
    ]
    published = _paper_rows(table, {name for name, _, _ in table.rows}) if with_paper else []
    body += [[f"{paper_name(name)} (paper)", *cells, str(paper_games(table, name) or "–")] for name, cells in published]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    title = f"Table {table.number}: {MODE_TITLE[table.mode]}; {CONDITION_TITLE[table.condition]}"
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    if with_paper:
        lines += _differences(table, published)
    if any(name == MEAN_ROW for name, _, _ in table.rows) or any(name == MEAN_ROW for name, _ in published):
        lines.append(MEAN_NOTE)
    return "\n".join(lines)


def _paper_rows(table: PaperTable, ours: set[str]) -> list[tuple[str, list[str]]]:
    """The paper's rows of this table that the input has no row for, by the authors' log names, in its order."""
    rows = _paper_data()["tables"].get(str(table.number), {})
    return [(name, cells) for name, cells in rows.items() if name not in ours]


def _differences(table: PaperTable, published: list[tuple[str, list[str]]]) -> list[str]:
    """For each of our rows that is none of the paper's, the published rows it differs from and where: the two
    95% intervals (mean ± half-width, [CT-38]) do not overlap."""
    lines = []
    for name, _, cells in table.rows:
        if paper_cell(table, name, table.columns[0]) is not None:
            continue
        found = []
        for other, theirs in published:
            columns = [TITLES[c] for c, p in zip(table.columns, theirs) if _disjoint(cells[c], _value(p))]
            if columns:
                found.append(f"{paper_name(other)}: {', '.join(columns)}")
        lines.append(
            f"  {name} differs from the paper's rows (95% intervals disjoint) in "
            + ("; ".join(found) if found else "no cell")
        )
    return lines


def _disjoint(ours: Interval, theirs: tuple[float, float] | None) -> bool:
    if ours.mean is None or theirs is None:
        return False
    return abs(ours.mean - theirs[0]) > (ours.half_width or 0.0) + theirs[1] + 1e-9


def promise_text(rows: list[PromiseRow], paper_names: bool = False) -> str:
    def rate(r: PromiseRow, i: int) -> str:
        v = r.rate(i)
        return "–" if v is None else f"{round(100 * v)}%"

    lines = [
        "Table 11: promise keeping (No contract, Mutually Dependent boards, Pay-for-Partner)",
        "Pairing | P-Red kept/broken | rate | P-Blue kept/broken | rate",
    ]

    def name(r: PromiseRow) -> str:
        return _pairing(paper_name(r.red), paper_name(r.blue)) if paper_names else r.pairing

    lines += [
        f"{name(r)} | {r.kept[0]}/{r.broken[0]} | {rate(r, 0)} | {r.kept[1]}/{r.broken[1]} | {rate(r, 1)}" for r in rows
    ]
    return "\n".join(lines)


def missing_text(m: MissingMetrics) -> str:
    lines = [
        "Contract formation (games with a formed contract; net: mean ± 95% CI; shares: share [95% interval in "
        "[0, 1]: Wilson's for winner-takes-all and equal split, the t-interval cut to [0, 1] for first-mover share])",
        "condition | board class | contracts | net for P-Red | first-mover share | winner-takes-all | equal split",
    ]
    for r in m.formation:
        wta = r.winner_takes_all.text() if r.winner_takes_all is not None else "–"
        lines.append(
            f"{CONDITION_TITLE[r.condition]} | {r.board_class} | {r.contracts} | {r.net_for_red.text()} | "
            f"{r.first_mover_share.text()} | {wta} | {r.equal_split.text()}"
        )
    lines.append(
        "Bottleneck defection (Pay-for-Partner, boards whose goal-adjacent tiles share a colour; the "
        "controlling player's defection rate)"
    )
    lines += [f"{CONDITION_TITLE[c]} | {v.text()} (n={v.n})" for c, v in m.bottleneck_defection.items()]
    return "\n".join(lines)


# the panels of the paper's Figure 4 (Pay-for-Partner) and Figure 19 (regular trading): one row per metric
FIGURES = {"pfp": 4, "trade": 19}
FIGURE_METRICS = {
    "normalised_reward": "normalised joint reward R̂",
    "gini": "Gini",
    "both_finished": "Both Finished",
    "bbb": "Both Beat Baseline",
}
BOARD_CLASSES = {"independent": "Independent", "mutually_dependent": "Mutually Dependent", "asymmetric": "Asymmetric"}


def save_plots(
    records: list[GameRecord], directory: Path, write: Callable[[Path, bytes], None], paper_names: bool = True
) -> list[Path]:
    """The panels of Figures 4 and 19, one PNG per mode that has games (`figure`)."""
    import io

    import matplotlib.pyplot as plt

    written = []
    for mode, number in FIGURES.items():
        fig = figure(records, mode, paper_names)
        if fig is None:
            continue
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        path = directory / f"figure-{number}-{mode}.png"
        write(path, buffer.getvalue())
        written.append(path)
    return written


PANEL_WIDTH = 3.4  # inches: room for a two-line panel title and the rotated model names under one group


def figure(records: list[GameRecord], mode: str, paper_names: bool = True):
    """The panels of Figure 4 (pfp) or 19 (trade), None without games of `mode`: joint reward, Gini, Both
    Finished and BBB (rows) per board class (columns); in each panel a group of bars per model and the mean over
    all, one bar per condition (mean ± 95% CI), with the games behind each bar written above it and a grey cross
    where a cell has no games."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    chosen = [g for g in records if g.mode == mode]
    if not chosen:
        return None
    conditions = [c for c in CONDITION_TITLE if any(g.condition == c for g in chosen)]
    models = sorted({agents_of(g) for g in chosen})
    groups = [(paper_name(m) if paper_names else m, [g for g in chosen if agents_of(g) == m]) for m in models]
    if len(groups) > 1:
        groups.append(("Mean" if paper_names else MEAN_ROW, chosen))
    panel = max(PANEL_WIDTH, 1.4 + 0.8 * len(groups))
    fig, axes = plt.subplots(
        len(FIGURE_METRICS),
        len(BOARD_CLASSES),
        squeeze=False,
        layout="constrained",
        figsize=(panel * len(BOARD_CLASSES), 3.2 * len(FIGURE_METRICS) + 1),
    )
    width = 0.8 / len(conditions)
    for row, (metric, label) in enumerate(FIGURE_METRICS.items()):
        top = 0.75 if metric == "gini" else 1.4  # headroom for the n written above the tallest bar
        for col, (board_class, class_title) in enumerate(BOARD_CLASSES.items()):
            ax = axes[row][col]
            ax.set_title(f"{class_title}\n{label}", fontsize=9)
            if metric == "bbb" and board_class != "asymmetric":
                ax.text(
                    0.5,
                    0.5,
                    "BBB is reported on\nAsymmetric boards only",
                    ha="center",
                    va="center",
                    fontsize=8,
                    transform=ax.transAxes,
                )
                ax.set_axis_off()
                continue
            for k, condition in enumerate(conditions):
                cells = [_interval(games, condition, board_class, metric) for _, games in groups]
                xs = [i + (k - (len(conditions) - 1) / 2) * width for i in range(len(groups))]
                # a cell without games gets no bar (a zero-height bar reads as a mean of 0) but a grey cross
                played = [(x, c) for x, c in zip(xs, cells) if c.n]
                ax.bar(
                    [x for x, _ in played],
                    [c.mean for _, c in played],
                    width,
                    color=f"C{k}",
                    capsize=2,
                    yerr=[c.half_width or 0 for _, c in played],
                )
                for x, c in played:  # above the error bar, or below the frame when the interval leaves it
                    y = min(c.mean + (c.half_width or 0), 0.85 * top) + 0.015 * top
                    ax.text(
                        x,
                        y,
                        f"n={c.n}",
                        rotation=90,
                        ha="center",
                        va="bottom",
                        fontsize=6,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
                    )
                ax.plot(
                    [x for x, c in zip(xs, cells) if not c.n],
                    [0.03 * top] * (len(cells) - len(played)),
                    "x",
                    color="grey",
                    markersize=5,
                )
            ax.set_xticks(range(len(groups)), [name for name, _ in groups], rotation=30, ha="right", fontsize=7)
            ax.set_xlim(-0.6, len(groups) - 0.4)
            ax.set_ylim(0, top)
    # one legend for the figure, below the panels, so that it covers no bar
    handles = [Patch(color=f"C{k}", label=CONDITION_TITLE[c]) for k, c in enumerate(conditions)]
    handles.append(Line2D([], [], marker="x", color="grey", linestyle="none", label="no games"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle(f"{MODE_TITLE[mode]}\n(the panels of the paper's Figure {FIGURES[mode]}; mean ± 95% CI, n = games)")
    return fig


def _interval(records: Iterable[GameRecord], condition: str, board_class: str, metric: str) -> Interval:
    return t_interval(
        getattr(game_metrics(g), metric) for g in records if g.condition == condition and g.board_class == board_class
    )


class CTBenchReport(Frozen):
    """Everything `ctbench report` shows: the paper's tables, the comparison with its printed cells, Table 11,
    the formation measures, the rule sets the games were played by, and the figures written."""

    games: int
    skipped: int  # imported runs left out: cut short, or superseded by a later run of the same game
    rules: dict[str, int]  # games per rule set ([CT-24a])
    tables: tuple[PaperTable, ...]
    comparison: PaperComparison
    promises: tuple[PromiseRow, ...]
    formation: MissingMetrics
    plots: tuple[Path, ...] = ()
    unlike_paper: tuple[str, ...] = ()  # how the games differ from the paper's (its boards, self-play)


def report_runs(
    items: list[ImportedGame | GameRecord], all_runs: bool = False, plots: Path | None = None, paper_names: bool = False
) -> CTBenchReport:
    """The report over a runs file's lines: complete imported games (the latest run of each unless `all_runs`,
    as the paper) and our records; figures into `plots` when given."""
    records, skipped = [], 0
    for item in items:
        if isinstance(item, ImportedGame):
            if not item.complete or (item.superseded and not all_runs):
                skipped += 1
                continue
            item = item.record()
        records.append(item)
    if not records:
        raise ValueError("holds no complete game to report on")
    tables = paper_tables(records)
    written: list[Path] = []
    if plots is not None:
        make_folder(plots)
        written = save_plots(records, plots, write_atomically, paper_names)
    rules: dict[str, int] = {}
    for g in records:
        rules[g.rules] = rules.get(g.rules, 0) + 1
    return CTBenchReport(
        unlike_paper=unlike_paper(records),
        games=len(records),
        skipped=skipped,
        rules=rules,
        tables=tuple(tables),
        comparison=compare_with_paper(tables),
        promises=tuple(promise_keeping(records)),
        formation=missing_metrics(records),
        plots=tuple(written),
    )


def unlike_paper(records: list[GameRecord]) -> tuple[str, ...]:
    """How the games differ from the paper's in ways its tables cannot answer for: boards other than the
    authors' 80 grids, and pairings other than self-play (the paper's rows are one model as both players)."""
    out = []
    ours = sum(g.board_set != "paper" for g in records)
    if ours:
        out.append(
            f"{ours} of {len(records)} games are on our seeded boards (--set ours), not the authors' 80 grids: "
            "the paper's values beside them are for other boards."
        )
    mixed = sorted({agents_of(g) for g in records if agent_name(g.red_agent) != agent_name(g.blue_agent)})
    if mixed:
        count = sum(agent_name(g.red_agent) != agent_name(g.blue_agent) for g in records)
        out.append(
            f"{count} of {len(records)} games pair two different agents ({', '.join(mixed)}); the paper's rows are "
            "self-play, one model as both players."
        )
    return tuple(out)


def report_text(report: CTBenchReport, with_paper: bool = False) -> str:
    """The report for a person: every table (the paper's names and values beside ours with `with_paper`, after
    a word on how the games differ from the paper's)."""
    parts = [f"Unlike the paper: {line}" for line in report.unlike_paper] if with_paper else []
    parts = [*parts, *([""] if parts else [])]
    parts += [table_text(t, with_paper=with_paper) + "\n" for t in report.tables]
    if report.promises:
        parts.append(promise_text(list(report.promises), with_paper) + "\n")
    parts.append(missing_text(report.formation))
    c = report.comparison
    if with_paper and c.compared + len(c.absent):
        parts.append(
            f"\n{c.compared - len(c.differences)} of {c.compared} cells on the paper's games equal its "
            f"printed values; {len(c.absent)} more rest on runs the input does not hold (marked 'over N "
            "games')"
        )
    rules = ", ".join(f"{name} rules ({n} games)" for name, n in sorted(report.rules.items()))
    parts.append(
        f"\n{report.games} games, {rules}"
        + (f" ({report.skipped} cut-short or superseded runs left out)" if report.skipped else "")
        + "".join(f"; wrote {p}" for p in report.plots)
    )
    return "\n".join(parts)
