"""The contract pane's clause coverage in a real browser (Debian's Chromium, headless, driven by Playwright, as
tests/viewer/test_view.py drives it): what the page shows per clause is what `contractlang coverage` and
`contractlang test --coverage` count over the same folder."""

from __future__ import annotations

import shutil

import pytest

from contractlang.api.tests import coverage
from contractlang.api.tests import test as run_tests
from contractlang.api.view.site import Viewer
from contractlang.source import check_source
from tests.helpers import ROOT, fresh
from tests.viewer import test_view
from tests.viewer.test_view import ok, serving, static_site

pytestmark = pytest.mark.e2e  # a real browser

browser, page = test_view.browser, test_view.page  # the tab that fails a test on any console error

CONTRACT = "worked-example-1.contract"  # scenario tests in its file; its `on breach` never fires between RCCs


def pane(tab) -> dict:
    """The coverage table as a person reads it: per clause, its games cell, its tests cell and whether it is
    marked as an enforcement clause no game triggered."""
    tab.wait_for_selector(".coverage-table", timeout=60_000)
    rows = {}
    for row in tab.locator(".coverage-table tr[data-clause]").all():
        cells = [c.inner_text() for c in row.locator("td").all()]
        rows[cells[0]] = (cells[1:], "never-triggered" in (row.get_attribute("class") or ""))
    return rows


def test_a_bundle_shows_per_clause_what_the_games_triggered_and_the_folders_tests_fire(page, tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / CONTRACT, folder / CONTRACT)
    for seed in (1, 2):
        ok("run", folder / CONTRACT, "--env", "1", "--seed", seed, "--log", folder / f"g{seed}.jsonl")
    ok("view", folder, "--bundle", tmp_path / "site", "--workers", "1")
    [played] = coverage(folder).contracts
    [tested] = run_tests(folder, coverage=True).coverage
    static, url = static_site(tmp_path / "site")
    try:
        tab = page.open(url + "#/game/g1")
        rows = pane(tab)
        tests = {c.clause.label: c for c in tested.clauses}
        assert set(rows) == {c.clause.label for c in played.clauses}
        for c in played.clauses:
            (games, fired_by), flagged = rows[c.clause.label]
            assert games == f"{c.games} / {c.observable_in}"
            by_tests = tests[c.clause.label]
            assert fired_by == (f"dead: {by_tests.dead}" if by_tests.dead else str(len(by_tests.fired_by)))
            assert flagged == (c.clause.enforcement and c.status == "never triggered")
        assert any(flagged for _, flagged in rows.values()), "the games leave some enforcement clause untriggered"
        # each mark sits on its clause's line of the contract shown (the log header's text)
        spans = check_source((folder / CONTRACT).read_bytes(), CONTRACT).contracts[0].spans
        for c in played.clauses:
            mark = tab.locator(f"#source .cov[data-clause='{c.clause.span_key}']")
            line = mark.evaluate("m => Number(m.parentElement.dataset.line)")
            assert line == spans[c.clause.span_key].line
            assert mark.get_attribute("data-status") == {"triggered": "triggered", "never triggered": "never"}[c.status]
            never_line = mark.evaluate("m => m.parentElement.classList.contains('never-triggered')")
            assert never_line == (c.clause.enforcement and c.status == "never triggered")
        provenance = tab.inner_text(".coverage .provenance")
        assert "2 viewed game(s)" in provenance and "g1.jsonl, g2.jsonl" in provenance and CONTRACT in provenance
        assert str(tmp_path) not in provenance  # a bundle is meant to be published
        tab.locator(".coverage-table tr.never-triggered").first.click()  # the clause is shown in the contract
        assert tab.locator("#source mark.fired").count() == 1
    finally:
        static.shutdown()


def test_a_served_experiment_judges_the_contingencies_of_its_batch_played_games(synthetic, page, tmp_path):
    folder = fresh(synthetic, tmp_path)
    ok("experiment", "rational", folder, "--workers", "1")
    judged = {c.terms: c for c in coverage(folder).contracts}
    httpd, url = serving(Viewer(folder))
    try:
        tab = page.open(url)
        tab.wait_for_selector("table.games tbody tr")
        variant = next(r for r in Viewer(folder, live=False).index.rows if r.contract.endswith("-s-pd"))
        tab.goto(url + f"#/game/{variant.id}")
        rows = pane(tab)
        terms = tab.locator("#source").evaluate("s => s._source.terms")
        for c in judged[terms].clauses:
            (games,), _ = rows[c.clause.label]
            assert games == f"{c.games} / {c.observable_in}" and c.observable_in == judged[terms].games
        assert {"substitution", "payment_deduction"} <= {c.clause.label for c in judged[terms].clauses}
        assert "not observable" not in tab.inner_text(".coverage")
    finally:
        httpd.shutdown()
