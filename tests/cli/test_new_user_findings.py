"""Issue #48, "found by a new user" and the small input holes: each case through the real CLI. Pictures are
checked by what a person would notice (text cut off at the canvas edge, titles over one another, a legend over
the data, a series hidden under another, layout warnings), measured with matplotlib's own extents."""

from __future__ import annotations

import json
import warnings
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import ROOT, run_cli, run_process

CONTRACT_TEXT = """Acme Foods (the Customer) and Luigi's Kitchen (the Caterer) agree as follows.
The Caterer will deliver 1 pizza, 1 pasta and 1 soup in weeks 2, 4, 6, 8 and 10.
The Customer will pay $18 in weeks 1, 3, 5, 7 and 9, and $0 in week 11.
Prices: pizza $10, pasta $5, soup $3.
"""


def _translate(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "terms.txt"
    path.write_text(text)
    done = run_cli("translate", path, "--json", "--cache", tmp_path / "cache.sqlite", cwd=tmp_path)
    return json.loads(done.stdout)


# --- translate: breach, termination and penalties are read or quoted, never dropped ---------------------------

def test_a_breach_sentence_becomes_the_termination_clause_and_party_names_are_kept(tmp_path):
    out = _translate(tmp_path, CONTRACT_TEXT + "If either side breaches, the agreement ends.\n")
    assert out["status"] == "ok" and out["missing"] == []
    assert "on breach: terminate" in out["dsl"]
    assert 'parties { customer: "Acme Foods"  supplier: "Luigi\'s Kitchen" }' in out["dsl"]


@pytest.mark.parametrize("sentence", [
    "A late delivery costs the Caterer a $5 penalty in week 4.",
    "If the Customer defaults, the Caterer may claim damages.",
    "Either side may cancel with two weeks' notice.",
])
def test_a_remedy_the_rules_cannot_read_is_quoted_and_the_verdict_is_parse_incomplete(tmp_path, sentence):
    out = _translate(tmp_path, CONTRACT_TEXT + sentence + "\n")
    assert out["status"] == "parse-incomplete" and out["error"] == "1 term(s) the text does not settle"
    assert out["missing"] == [f"could not read (a breach, termination or penalty term): {sentence}"]
    assert "week 4: $5" not in out["dsl"]  # a penalty is never read as a payment
    done = run_cli("translate", tmp_path / "terms.txt", "--cache", tmp_path / "cache.sqlite", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("parse-incomplete:") and sentence in done.stderr


# --- small input holes ----------------------------------------------------------------------------------------

def test_fmt_refuses_a_name_check_refuses(tmp_path):
    path = tmp_path / "bidi.contract"
    source = 'contract "pay\u202eyap" {\n  game ctbench\n  parties { red: P-Red  blue: P-Blue }\n}\n'
    path.write_text(source)
    for command in (("check",), ("fmt",), ("fmt", "--write"), ("fmt", "--check")):
        done = run_cli(*command, path)
        assert done.returncode == 1 and "error[E107]" in done.stderr, (command, done.stderr)
    assert path.read_text() == source


def test_metrics_holds_a_record_to_what_play_can_write(tmp_path):
    played = run_cli("run", ROOT / "examples" / "catering-base.contract", "--env", "1", "--json")
    assert played.returncode == 0, played.stderr
    record = json.loads(played.stdout)
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(record) + "\n")
    assert run_cli("metrics", good, "--json").returncode == 0
    week = next(w for w in record["weeks"] if w["role"] == "supplier")
    cases = {"value": ("value", 1000 * 12), "paid": ("paid", 5), "utility": (None, None)}
    for what, (field, value) in cases.items():
        bad = json.loads(json.dumps(record))
        if field is None:
            bad["u_supplier"] += 1000
        else:
            next(w for w in bad["weeks"] if w["week"] == week["week"])[field] = value
        path = tmp_path / f"{what}.jsonl"
        path.write_text(json.dumps(bad) + "\n")
        done = run_cli("metrics", path)
        assert done.returncode == 1 and done.stderr.startswith(f"error: {path}:1: not a run record"), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_check_reports_e502_with_the_other_errors(tmp_path):
    path = tmp_path / "two.contract"
    path.write_text('contract "x" {\n  game contractsim.catering\n  prices { pizza: $10  pasta: $5  soup: $3 }\n'
                    "  deliver {\n    weeks 2..8: pizza 1, pasta 1, soup 1\n  }\n"
                    "  pay {\n    weeks 1..9: $18\n    week 11: $0\n  }\n"
                    "  substitution { minimum: pizza 2, pasta 1, soup 1 }\n}\n")
    done = run_cli("check", path)
    assert done.returncode == 1 and "error[E402]" in done.stderr and "error[E502]" in done.stderr


def test_verify_hints_what_each_kind_of_contract_needs(tmp_path):
    board = tmp_path / "board.contract"
    board.write_text('contract "b" {\n  game ctbench\n  parties { red: P-Red  blue: P-Blue }\n  cover {\n'
                     "    (1,2): red pays for blue with red chip\n  }\n}\n")
    done = run_cli("verify", board)
    assert done.returncode == 0 and "--board ID" in done.stderr and "ctbench boards" in done.stderr
    assert "--env" not in done.stderr
    done = run_cli("verify", ROOT / "examples" / "catering-base.contract")
    assert "--env N" in done.stderr and "--board" not in done.stderr


def test_one_minus_sign_in_tables_and_stories():
    """ASCII '-' everywhere: the paper's cells beside ours, and a story with a negative amount."""
    shipped = ROOT / "games" / "contractsim" / "data" / "synthetic" / "rational"
    for name in ("tables.md", "tables.paper-tables.md"):
        text = (shipped / name).read_text()
        assert "\u2212" not in text and "/ -46.2 ± 32.4" in text
    done = run_cli("run", ROOT / "examples" / "catering-base.contract", "--env", "1", "--customer", "re")
    assert done.returncode == 0 and "\u2212" not in done.stdout + done.stderr and "-" in done.stdout


@pytest.mark.parametrize("command", [("ctbench", "sweep"), ("experiment", "performance")])
def test_help_into_a_pipe_cuts_no_option_name(command):
    done = run_process(*command, "--help")
    assert done.returncode == 0 and "--help" in done.stdout
    assert "…" not in done.stdout, [line for line in done.stdout.splitlines() if "…" in line]


# --- pictures ---------------------------------------------------------------------------------------------------

def _drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _assert_nothing_outside_or_overlapping(fig) -> None:
    """Every panel (its titles, labels and tick labels) and the figure's title and legends lie on the canvas,
    and no two panels' titles overlap."""
    renderer = _drawn(fig)
    canvas = fig.bbox
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    boxes += [t.get_window_extent(renderer) for t in (fig._suptitle,) if t is not None]
    boxes += [legend.get_window_extent(renderer) for legend in fig.legends]
    for box in boxes:
        assert canvas.x0 - 1 <= box.x0 and box.x1 <= canvas.x1 + 1 and canvas.y0 - 1 <= box.y0 \
            and box.y1 <= canvas.y1 + 1, (box, canvas)
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()]
    assert not any(a.overlaps(b) for a, b in combinations(titles, 2))


def _assert_legends_over_no_panel(fig) -> None:
    renderer = _drawn(fig)
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        assert not any(box.overlaps(ax.bbox) for ax in fig.axes)


def test_ctbench_report_figures_fit_without_warnings(tmp_path):
    from games.ctbench.published import read_runs
    from games.ctbench.report import figure

    sweep = run_cli("ctbench", "sweep", "--boards", "24,45", "--conditions", "none,prog_points", "--modes", "pfp",
                    "--out", tmp_path / "s", "--workers", "1", "--json")
    assert sweep.returncode == 0, sweep.stderr
    games = tmp_path / "s" / "games.jsonl"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = run_cli("ctbench", "report", games, "--png", tmp_path / "plots")
    assert done.returncode == 0 and (tmp_path / "plots" / "figure-4-pfp.png").exists(), done.stderr
    assert not [w for w in caught if "matplotlib" in w.filename or "layout" in str(w.message)]
    assert "Warning" not in done.stderr
    fig = figure([item for _, item in read_runs(games)], "pfp")
    _assert_nothing_outside_or_overlapping(fig)
    _assert_legends_over_no_panel(fig)


def test_figure4_shows_equal_series_side_by_side_and_its_legend_over_no_data():
    from games.contractsim.performance import FigureBin, FigureSeries, figure4_plot

    def series(policy: str, rational: bool, axis: str, labels: tuple[str, ...]) -> FigureSeries:
        return FigureSeries(policy=policy, rational=rational, role="supplier", counterparty="rcc", axis=axis,
                            bins=tuple(FigureBin(label=x, runs=3, compliance=1.0, unilateral=0.0) for x in labels))

    shown = [series(p, p != "llm", axis, labels) for p in ("llm", "RC", "RCC", "RE")
             for axis, labels in (("p_sat", ("0.8–0.9", "≥0.95")), ("contingencies", ("0", "1", "2")))]
    fig = figure4_plot(shown)
    _assert_nothing_outside_or_overlapping(fig)
    _assert_legends_over_no_panel(fig)
    for ax in fig.axes:
        lines = {line.get_label(): line for line in ax.get_lines()}
        rc, rcc = lines["RC"], lines["RCC"]
        assert list(rc.get_ydata()) == list(rcc.get_ydata())  # equal values ...
        assert all(a != b for a, b in zip(rc.get_xdata(), rcc.get_xdata()))  # ... drawn apart
        assert rc.get_marker() != rcc.get_marker() and rc.get_color() != rcc.get_color()


def test_solve_plot_runs_from_the_first_production_week_and_keeps_the_last_value(tmp_path):
    from contractlang.cli.render import survival_figure

    contract = ROOT / "examples" / "catering-base.contract"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = run_cli("solve", contract, "--env", "1", "--plot", tmp_path / "s.png", "--json")
    assert done.returncode == 0 and (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG", done.stderr
    assert not [w for w in caught if "matplotlib" in w.filename]
    result = json.loads(done.stdout)
    survival = [0.99, 0.95, 0.9, 0.8, 0.7]  # the solved curve is flat (1.0): a falling one shows each step
    fig = survival_figure(SimpleNamespace(contract=result["contract"], env=result["env"], p_sat=0.7,
                                          survival=survival))
    ax = fig.axes[0]
    step, markers = ax.get_lines()[:2]
    assert list(markers.get_xdata()) == [2, 4, 6, 8, 10] and list(markers.get_ydata()) == survival
    assert step.get_xdata()[0] == 2 and step.get_xdata()[-1] == 11 and step.get_ydata()[-1] == 0.7
    _assert_nothing_outside_or_overlapping(fig)
    _assert_legends_over_no_panel(fig)
