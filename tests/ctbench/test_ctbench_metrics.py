"""CT-Bench metrics: hand-computed values and the paper's interval widths ([CT-38])."""

import pytest

from games.ctbench.board import benchmark_board
from games.ctbench.metrics import game_metrics, gini, summarise, t_interval
from games.ctbench.play import play


def test_gini():
    assert gini(70, 70) == 0.0
    assert gini(0, 70) == 0.5
    assert gini(0, 0) == 0.0  # [CT-34]
    assert gini(60, 80) == pytest.approx(20 / 280)


def test_t_interval_matches_reported_widths():
    scout_bbb = t_interval([1.0] * 3 + [0.0] * 37)  # LLaMA Scout Prog-Points BBB 0.07 ± 0.09 over 40 boards
    assert round(scout_bbb.mean, 2) == 0.07 and scout_bbb.half_width == pytest.approx(0.0853, abs=5e-4)
    assert t_interval([None, None]).mean is None
    assert t_interval([0.5]).half_width == 0.0


def test_game_metrics_of_a_cooperative_md_game():  # X7
    record = play(benchmark_board(24), "prog_trading", "pfp", "planner", "planner")
    m = game_metrics(record)
    assert record.scores == (70, 70)
    assert (m.normalised_reward, m.gini, m.both_finished, m.bbb, m.contract_active) == (1.0, 0.0, 1.0, None, 1.0)
    assert m.contract_moves == 4 and m.defection is None


def test_exploiter_defects_and_conditional_stops_honouring():
    record = play(benchmark_board(24), "none", "pfp", "exploiter", "planner")
    assert record.stats.unfulfilled >= 1
    m = game_metrics(record)
    assert m.defection is not None and m.defection > 0


def test_summary_rows_have_the_paper_columns():
    recs = [
        play(benchmark_board(i), c, mode, "planner", "planner")
        for i in (0, 20, 40)
        for c in ("none", "prog_points")
        for mode in ("pfp", "trade")
    ]
    rows = summarise(recs)
    assert {(r.condition, r.mode) for r in rows} == {(c, m) for c in ("none", "prog_points") for m in ("pfp", "trade")}
    pfp_none = next(r for r in rows if (r.condition, r.mode) == ("none", "pfp"))
    assert set(pfp_none.cells) == {"normalised_reward", "gini", "both_finished", "bbb", "defection", "contract_moves"}
    assert pfp_none.cells["bbb"].n == 1  # BBB only on the Asymmetric board
    trade_pp = next(r for r in rows if (r.condition, r.mode) == ("prog_points", "trade"))
    assert "trade_volume" in trade_pp.cells and "contract_active" in trade_pp.cells
