"""The performance tables do not overclaim: no p below a stated n, the paper's conditional rates over the n
their printed numbers imply, a slice caveat, the legend and the fidelity page under every table."""

from __future__ import annotations

import pytest

from games.experiments.paper import PAPER_N, eligible_n, paper_n, welch_p
from games.experiments.performance import MIN_N, differs
from tests.helpers import fresh, run_cli


@pytest.mark.parametrize(
    "cell, n",
    [
        ((66.7, 57.7), 3),  # 2 of 3 (Table 7, RCC block, Gemini 3.6 Flash, Reciprocal)
        ((50.0, 70.7), 2),  # 1 of 2
        ((48.9, 50.1), 174),  # 85 of 174 is the smallest reading of 88 of 180
        ((60.0, 52.9), None),  # no count of ones gives this SD: a mean of fractions
        ((100.0, 0.0), None),  # every n fits 100 %
        ((0.0, 0.0), None),
    ],
)
def test_the_eligible_n_is_inferred_where_the_cell_allows_it(cell, n):
    assert eligible_n(cell) == n


def test_only_the_eligible_only_columns_take_an_inferred_n():
    assert paper_n("U", (66.7, 57.7)) == PAPER_N and paper_n("Rec.", (66.7, 57.7)) == 3
    assert paper_n("Expl.", (60.0, 52.9)) is None


def test_a_p_uses_each_side_s_own_n_and_none_below_the_minimum():
    # 100 % over 20 runs against 2 of 3: p 0.42 with the n of 3 the cell implies, 7e-13 with n = 180
    p3 = welch_p(100.0, 0.0, 20, 66.7, 57.7, 3)
    assert p3 == pytest.approx(0.42, abs=0.01) and welch_p(100.0, 0.0, 20, 66.7, 57.7, PAPER_N) < 1e-8
    assert differs("100.0 ± 0.0", 20, (66.7, 57.7), "Rec.") == f"{p3:.2g}"
    assert differs("100.0 ± 0.0", MIN_N - 1, (66.7, 57.7), "Rec.") == f"n<{MIN_N}"
    assert differs("40.0 ± 10.0", 20, (60.0, 52.9), "Expl.") == "–"  # the paper's n is unknown there
    assert differs("215.0 ± 0.0", 20, (324.4, 95.6), "U").endswith("*")


@pytest.mark.e2e
def test_every_table_of_a_slice_says_so_and_carries_the_legend_and_the_fidelity_page(synthetic, tmp_path):
    directory = fresh(synthetic, tmp_path)
    done = run_cli("experiment", "performance", directory, "--agent", "rcc", "--limit", "1", "--workers", "1")
    assert done.returncode == 0, done.stderr
    md = (directory / "performance" / "tables.md").read_text()
    tables = md.count("\n## Table ")
    assert tables == 4 and md.count("\n### Table ") == 4  # Tables 7–10 and their p tables
    assert md.count("Not the paper's 180 cases but a slice (limit 1)") == 2 * tables
    assert md.count("Compl. the compliance rate") == tables and md.count("docs/explanation/fidelity.md") == tables
    p_rows = [line for line in md.splitlines() if " vs " in line and line.startswith("| RCC | rcc vs ")]
    assert p_rows and all("*" not in line for line in p_rows)  # one run: no p, so no star
    rational = run_cli("experiment", "rational", directory, "--limit", "1", "--workers", "1")
    assert rational.returncode == 0, rational.stderr
    md = (directory / "rational" / "tables.md").read_text()
    assert md.count("Not the paper's 180 cases but a slice (limit 1)") == md.count("\n## Table ") + 2


def test_the_cold_start_notice_counts_the_kernels_compilation_and_never_says_0_min(tmp_path, monkeypatch):
    from games.experiments.rational import COMPILE_SECONDS, SolvingPlan, kernels_compiled

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "empty"))
    assert not kernels_compiled()
    warm, cold = SolvingPlan(to_play=2, to_solve=2), SolvingPlan(to_play=2, to_solve=2, compile=True)
    assert "about 7 s in all" in warm.text(tmp_path) and "compile" not in warm.text(tmp_path)
    assert f"about {COMPILE_SECONDS + 7} s in all" in cold.text(tmp_path)
    assert f"the solver's kernels compile (about {COMPILE_SECONDS} s, once)" in cold.text(tmp_path)
    assert "about 10 min in all" in SolvingPlan(to_play=180, to_solve=180).text(tmp_path)
