"""`ctbench report` does not overclaim: the Mean row as the paper computes its own, shares with intervals that
stay in [0, 1], and a word above the tables when the games are not the paper's boards or self-play."""

from __future__ import annotations

import json

import pytest

from games.ctbench.metrics import Interval
from games.ctbench.report import MEAN_ROW, PAPER_TABLES_FILE, bounded, mean_of_rows, wilson
from tests.helpers import run_cli


def test_a_share_of_two_in_three_has_its_wilson_interval():
    share = wilson([True, True, False])  # by hand: centre 0.5731, half-width 0.3654
    assert (round(share.mean, 2), round(share.low, 2), round(share.high, 2), share.n) == (0.67, 0.21, 0.94, 3)
    assert share.text() == "0.67 [0.21, 0.94]"  # a t-interval printed 0.67 ± 1.43
    assert wilson([]).text() == "–" and wilson([False, False]).low == 0.0


def test_a_mean_of_shares_keeps_its_interval_in_range():
    share = bounded([0.1, 0.9])
    assert share.low == 0.0 and share.high == 1.0 and share.mean == pytest.approx(0.5)


def test_the_mean_row_is_the_unweighted_mean_of_the_model_rows_as_the_paper_s_is():
    """Over the paper's own rows, our Mean reproduces its printed Mean in 39 of 46 cells; a mean pooled over the
    games (GPT-4.1's 400 Pay-for-Partner games against 80 for the others) would fit only 25."""
    data = json.loads(PAPER_TABLES_FILE.read_text())

    def interval(cell: str) -> Interval:
        mean, _, half = cell.partition("±")
        return Interval(mean=float(mean), half_width=float(half), n=80)

    fits = cells = 0
    for rows in data["tables"].values():
        models = [[interval(c) for c in cells_] for name, cells_ in rows.items() if name != MEAN_ROW]
        columns = tuple(str(i) for i in range(len(rows[MEAN_ROW])))
        ours = mean_of_rows([dict(zip(columns, row)) for row in models], columns)
        for i, printed in zip(columns, rows[MEAN_ROW]):
            cells += 1
            fits += f"{ours[i].mean:.2f}" == printed.split(" ±")[0]
    assert (fits, cells) == (39, 46)
    assert all(MEAN_ROW not in games for games in data["games"].values())  # the paper gives no games for it


@pytest.mark.e2e
def test_report_paper_on_our_boards_and_mixed_pairings_says_so_above_the_tables(tmp_path):
    swept = run_cli(
        "ctbench", "sweep", "--boards", "0", "--conditions", "none", "--red", "planner", "--blue", "conditional",
        "--out", tmp_path / "sweep", "--workers", "1", "--json",
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    done = run_cli("ctbench", "report", tmp_path / "sweep" / "games.jsonl", "--paper")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Unlike the paper: 2 of 2 games are on our seeded boards (--set ours), not the authors' 80 grids: the "
        "paper's values beside them are for other boards."
    )
    assert lines[1].startswith("Unlike the paper: 2 of 2 games pair two different agents (planner vs conditional)")
    assert lines[3].startswith("Table 1:")
    plain = run_cli("ctbench", "report", tmp_path / "sweep" / "games.jsonl")
    assert "Unlike the paper" not in plain.stdout  # only beside the paper's values


def test_bbb_is_both_beat_baseline_wherever_the_docs_name_it():
    from tests.helpers import ROOT

    pages = ["docs/explanation/ctbench.md", "docs/tutorials/ctbench-agent.md", "docs/rules/checks.md"]
    for page in pages:
        text = (ROOT / page).read_text()
        assert "betrayal" not in text.lower() and "Both Beat Baseline" in text, page
