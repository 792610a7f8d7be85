"""The pictures the commands draw, checked by what a person would notice (text cut off at the canvas edge, titles
over one another, a legend over the data, a series hidden under another, layout warnings), measured with
matplotlib's own extents and pixels."""

from __future__ import annotations

import json
import warnings
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import ROOT, run_cli


def _pixels(png: Path, colour: str, rows: slice) -> int:
    """How many pixels of `rows` (a slice of the image's height, top first) are within 0.05 of `colour`."""
    import matplotlib.colors
    import matplotlib.image

    image = matplotlib.image.imread(png)[..., :3]
    height = image.shape[0]
    band = image[int(rows.start * height) : int(rows.stop * height)]
    return int((abs(band - matplotlib.colors.to_rgb(colour)) < 0.05).all(axis=-1).sum())


def test_ctbench_show_png_draws_both_paths_visibly_with_the_chips(tmp_path):
    from games.ctbench.draw import path_label

    png = tmp_path / "board.png"
    shown = run_cli("ctbench", "show", "3", "--png", png)
    assert shown.returncode == 0, shown.stderr
    # P-Blue's path (yellow, dashed) shows on the board and, beside P-Red's (black), in the legend below it
    assert _pixels(png, "#ffd21f", slice(0.1, 0.85)) > 200
    assert _pixels(png, "#ffd21f", slice(0.85, 1)) > 20 and _pixels(png, "black", slice(0.85, 1)) > 20
    assert path_label("blue", 0) == "P-Blue: best path (shortfall 0); chips 0 red, 14 blue, 2 green"


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
        assert (
            canvas.x0 - 1 <= box.x0 and box.x1 <= canvas.x1 + 1 and canvas.y0 - 1 <= box.y0 and box.y1 <= canvas.y1 + 1
        ), (box, canvas)
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()]
    assert not any(a.overlaps(b) for a, b in combinations(titles, 2))


def _assert_legends_over_no_panel(fig) -> None:
    renderer = _drawn(fig)
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        assert not any(box.overlaps(ax.bbox) for ax in fig.axes)


@pytest.mark.e2e
def test_ctbench_report_figures_fit_without_warnings(tmp_path):
    from games.ctbench.published import read_runs
    from games.ctbench.report import figure

    sweep = run_cli(
        "ctbench",
        "sweep",
        "--boards",
        "24,45",
        "--conditions",
        "none,prog_points",
        "--modes",
        "pfp",
        "--out",
        tmp_path / "s",
        "--workers",
        "1",
        "--json",
    )
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
    from games.experiments.performance import FigureBin, FigureSeries, figure4_plot

    def series(policy: str, rational: bool, axis: str, labels: tuple[str, ...]) -> FigureSeries:
        return FigureSeries(
            policy=policy,
            rational=rational,
            role="supplier",
            counterparty="rcc",
            axis=axis,
            bins=tuple(FigureBin(label=x, runs=3, compliance=1.0, unilateral=0.0) for x in labels),
        )

    shown = [
        series(p, p != "llm", axis, labels)
        for p in ("llm", "RC", "RCC", "RE")
        for axis, labels in (("p_sat", ("0.8–0.9", "≥0.95")), ("contingencies", ("0", "1", "2")))
    ]
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
    fig = survival_figure(SimpleNamespace(contract=result["contract"], env=result["env"], p_sat=0.7, survival=survival))
    ax = fig.axes[0]
    step, markers = ax.get_lines()[:2]
    assert list(markers.get_xdata()) == [2, 4, 6, 8, 10] and list(markers.get_ydata()) == survival
    assert step.get_xdata()[0] == 2 and step.get_xdata()[-1] == 11 and step.get_ydata()[-1] == 0.7
    _assert_nothing_outside_or_overlapping(fig)
    _assert_legends_over_no_panel(fig)
