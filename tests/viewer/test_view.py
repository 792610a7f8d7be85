"""`contractlang view` (issue #44) in a real browser: Debian's Chromium, headless, driven by Playwright. Each page
kind is opened on real outputs made here from the bundled examples, and checked for what a person would see; any
console error fails the test. `VIEW_SCREENSHOTS=1` renews the screenshots of each page kind in
docs/figures/view-*.png."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from contractlang.api.view.options import ViewOptions
from contractlang.api.view.site import TOKEN_HEADER, Viewer, server
from tests.helpers import ROOT, run_cli
from tests.llm_server import ScriptedServer, message

MODEL = "claude-haiku-4-5"
CHROMIUM = Path("/usr/bin/chromium")
FIGURES = ROOT / "docs" / "figures"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.e2e  # a real browser


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM.exists(), "needs Debian's chromium: apt-get install chromium (`bash scripts/test-deps` installs it)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


class Page:
    """A browser tab that records console errors and uncaught exceptions: a test ends by asserting there were none."""

    def __init__(self, browser):
        self.tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.errors: list[str] = []
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str):
        self.tab.goto(url)
        self.tab.wait_for_selector("body[data-ready='1']")
        return self.tab

    def shot(self, name: str) -> None:
        """A screenshot of the page; into docs/figures/ when VIEW_SCREENSHOTS=1 asks to renew the committed ones."""
        if os.environ.get("VIEW_SCREENSHOTS") == "1":
            self.tab.screenshot(path=str(FIGURES / f"view-{name}.png"), full_page=True)
        else:
            self.tab.screenshot(full_page=True)

    def close(self) -> None:
        self.tab.close()
        assert self.errors == []


@pytest.fixture
def page(browser):
    tab = Page(browser)
    yield tab
    tab.close()


def serving(viewer: Viewer):
    httpd = server(viewer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def ok(*args, cwd=None) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> Path:
    """Example 1 in Env 5 against a random Customer (it breaches in week 5): its event log, its `run --json`
    record, and a CT-Bench game on board 24 under the swap contract."""
    out = tmp_path_factory.mktemp("games")
    contract = str(ROOT / "examples" / "worked-example-1.contract")
    ok("run", contract, "--env", "5", "--customer", "random", "--log", out / "g.jsonl")
    (out / "runs").mkdir()
    (out / "runs" / "g.jsonl").write_text(ok("run", contract, "--env", "5", "--customer", "random", "--json"))
    (out / "supplier").mkdir()
    (out / "supplier" / "g.jsonl").write_text(ok("run", contract, "--env", "1", "--supplier", "random", "--json"))
    (out / "ct").mkdir()
    (out / "ct" / "ct.json").write_text(
        ok("run", str(ROOT / "examples" / "ctbench-board-24-swap.contract"), "--board", "24", "--json")
    )
    return out


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, tables) -> Path:
    """A small `experiment performance` (two agents as the Customer on Example 1's terms and a variant)."""
    from games.experiments.synth import BaseChoice, SolveJob, SynthPlan, Terms, run_solve, write_outputs

    out = tmp_path_factory.mktemp("experiment") / "set"
    terms = Terms(quantities=(1, 1, 1), prices=(10, 5, 3), payments=(18, 18, 18, 18, 18, 0))
    base = BaseChoice(env=1, rho=1.0, terms_env=1, start=0, terms=terms, feasible_starts=1)
    jobs = [SolveJob(env=1, rho=1.0, variant=v, terms=terms) for v in ("base", "S+PD")]
    write_outputs(
        out, [base], {j: run_solve(j, tables) for j in jobs}, SynthPlan(starts=1, search_envs=(1,), rhos=(1.0,))
    )
    ok("experiment", "performance", out, "--agent", "random", "--agent", "rcc", "--role", "customer", "--workers", "1")
    return out


def static_site(site: Path):
    handler = partial(SimpleHTTPRequestHandler, directory=str(site))
    static = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=static.serve_forever, daemon=True).start()
    return static, f"http://127.0.0.1:{static.server_address[1]}/"


def test_a_game_log_bundle_shows_the_breach_week_and_the_clause_that_fired(games, page, tmp_path):
    """The issue's acceptance: `run --log g.jsonl` then `view g.jsonl --bundle site`, nothing else given: the log's
    header names the game, which is played again and checked against the log's events."""
    site = tmp_path / "site"
    printed = ok("view", games / "g.jsonl", "--bundle", site)
    assert "1 game(s)" in printed and (site / "index.html").exists() and (site / "data" / "index.json").exists()
    static, url = static_site(site)
    try:
        tab = page.open(url + "#/game/g0")
        tab.wait_for_selector("#weeks")
        breach = tab.locator("#weeks tr.breach").first
        assert breach.get_attribute("data-week") == "5" and "BREACH" in breach.inner_text()
        assert "customer in week 5" in tab.inner_text("#verdict")
        fired = tab.locator("#source mark.fired")
        assert fired.count() == 1 and fired.inner_text() == "weeks 1..9: $18"
        assert tab.locator("#source mark[data-clause='on_breach']").inner_text() == "on breach: terminate"
        assert tab.inner_text("#shown") == "rebuilt from the log's header (seed 42); its events are the log's"
        assert "snapshot" in tab.inner_text("#live")
        week1 = tab.locator("#weeks tr[data-week='1']")
        assert week1.locator("td.rcc").inner_text() == "pay $18 (E[U] +$110.00)"  # the random Customer paid $128
        week1.click()
        text = tab.inner_text("#week-detail .expected")
        assert (
            text.startswith("Expected Customer utility still to come")
            and "RCC's $14.02 (RCC − agent: +$110.00)." in text
        )
    finally:
        static.shutdown()


def test_a_log_without_a_header_is_shown_against_the_contract_given(page, tmp_path):
    site = tmp_path / "site"
    ok(
        "view",
        ROOT / "examples" / "traces" / "worked-example-1-late-breach.jsonl",
        "--contract",
        ROOT / "examples" / "worked-example-1.contract",
        "--bundle",
        site,
    )
    static, url = static_site(site)
    try:
        tab = page.open(url + "#/game/g0")
        tab.wait_for_selector("#weeks")
        assert "events of the log only" in tab.inner_text("#shown")
        assert tab.locator("#weeks tr.breach").first.get_attribute("data-week") == "6"
    finally:
        static.shutdown()


def test_a_ctbench_game_log_bundle_replays_the_board_from_the_log_alone(page, tmp_path):
    """The acceptance for CT-Bench: `run CONTRACT --board 24 --log` then `view LOG --bundle site`."""
    ok("run", ROOT / "examples" / "ctbench-board-24-swap.contract", "--board", "24", "--log", tmp_path / "ct.jsonl")
    ok("view", tmp_path / "ct.jsonl", "--bundle", tmp_path / "site")
    static, url = static_site(tmp_path / "site")
    try:
        tab = page.open(url + "#/game/g0")
        tab.wait_for_selector("#board")
        assert tab.inner_text("#shown") == "rebuilt from the log's header (seed 0); its events are the log's"
        assert "both players reached the goal" in tab.inner_text("#outcome")
        tab.locator("#slider").fill("5")  # red onto (0,3), paid by blue's chip under the contract
        assert tab.locator("#board circle[data-player='red']").get_attribute("data-tile") == "0,3"
        assert (
            tab.locator("#source mark[data-clause='cover.2']").inner_text() == "(0,3): blue pays for red with blue chip"
        )
        assert tab.locator("#events li.now", has_text="contract: blue gives red a blue chip for (0, 3)").count() == 1
    finally:
        static.shutdown()


def test_a_run_record_shows_each_week_beside_the_rcc_baseline(games, page):
    httpd, url = serving(Viewer(games / "runs"))
    try:
        tab = page.open(url + "#/game/g0-1")
        tab.wait_for_selector("#weeks")
        assert tab.inner_text("#shown") == "events kept in the record"
        rows = {r.get_attribute("data-week"): r for r in tab.locator("#weeks tbody tr").all()}

        def cells(w):
            return [c.inner_text() for c in rows[w].locator("td").all()]

        # week 1: RCC pays the $18 due where the random Customer paid $128; a production week shows the order
        assert cells("1")[2:6] == ["$18", "paid $128", "ok", "pay $18 (E[U] +$110.00)"]
        assert "rcc-differs" in rows["1"].get_attribute("class")
        assert cells("2")[5].startswith("order ") and cells("2")[6]  # RCC's order, this round's input prices
        assert cells("2")[7].endswith("spoiled 0/0/0")
        assert cells("5")[4].startswith("BREACH")
        assert tab.locator("#weeks").evaluate(  # the Verdict column in view beside the contract, not scrolled off
            "t => { const th = [...t.querySelectorAll('th')].find((h) => h.textContent === 'Verdict'); "
            "const box = t.parentElement.getBoundingClientRect(); "
            "return th.getBoundingClientRect().right <= box.left + t.parentElement.clientWidth; }"
        )
        assert rows["5"].get_attribute("class").split()[0] == "breach"
        assert "Breach: the customer paid $" in tab.inner_text("#reason")
        assert (
            tab.locator("#chart-cash polyline").count() == 2 and tab.locator("#chart-inventory polyline").count() == 3
        )
        rows["2"].click()  # another week: its schedule entry is marked, nothing fired
        assert tab.locator("#source mark.fired").count() == 0
        assert (
            tab.locator("#source mark[data-clause='deliver.2']").inner_text() == "weeks 2..10: pizza 1, pasta 1, soup 1"
        )
        tab.locator("#weeks tr.breach").first.click()
        page.shot("contractsim")
    finally:
        httpd.shutdown()


def test_an_order_rcc_would_not_place_is_set_beside_rccs_in_expected_utility(games, page):
    httpd, url = serving(Viewer(games / "supplier"))
    try:
        tab = page.open(url + "#/game/g0-1")
        tab.wait_for_selector("#weeks")
        row = tab.locator("#weeks tr[data-week='2']")
        rcc = row.locator("td.rcc").inner_text()
        assert rcc.startswith("order ") and "(E[U] " in rcc  # a random order differs from RC's
        row.click()
        text = tab.inner_text("#week-detail .expected")
        agent, best = (
            float(x.split("$")[1].split(" ")[0]) * (-1 if x.startswith("−") else 1)
            for x in (text.split("the agent's ")[1], text.split("RCC's ")[1])
        )
        assert best > agent and f"(RCC − agent: +${best - agent:.2f})." in text
    finally:
        httpd.shutdown()


def test_the_order_values_reproduce_the_dp_value_of_the_game(tables):
    """Σ_p ν(p)·V̂(π(p)) at the first order, plus M_1, is V_1(s_1), and likewise P̂ gives P_sat: V̂ and P̂ are the
    values the table was chosen by."""
    from contractlang import load
    from games.contractsim.environments import environment
    from solver.dp.baseline import Values

    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    result, table, _ = tables.solve(ir, environment(1))
    p = table.problem
    values, cash = Values(p), p.cash_at_ordering()
    chosen = [
        values.order(0, 0, (0, 0, 0), cash, prices, table.order(0, (0, 0, 0), cash, 0, prices)) for prices in p.prices
    ]
    assert sum(nu * q.value for nu, q in zip(p.price_probs, chosen)) + p.payments[0] == pytest.approx(
        result.v_supplier, abs=1e-9
    )
    assert sum(nu * q.p_sat for nu, q in zip(p.price_probs, chosen)) == pytest.approx(result.p_sat, abs=1e-12)
    assert values.order(0, 0, (0, 0, 0), cash, p.prices[0], (12, 12, 12)) is None or cash >= 12 * sum(p.prices[0])


@pytest.mark.parametrize("env_id", [1, 5])
def test_the_customers_value_after_rccs_first_payment_is_the_dp_expected_utility(tables, env_id):
    """B − M_1 plus the value delivered less the payments still to come from the state M_1 leaves is U_Cust with
    both players RCC ([CS-28]): the enumeration the page prices a Customer's payment with is the DP's own."""
    from contractlang import load
    from games.contractsim.environments import environment
    from solver.dp.baseline import customer_to_come

    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    env = environment(env_id)
    result, table, _ = tables.solve(ir, env)
    p = table.problem
    later = customer_to_come(table, 0, 0, (0, 0, 0), p.cash_at_ordering())
    assert env.budget - p.payments[0] + later == pytest.approx(result.u_customer / ir.setting_info.multiplier, abs=1e-9)


def test_a_ctbench_game_replays_the_board_move_by_move(games, page):
    httpd, url = serving(Viewer(games / "ct"))
    try:
        tab = page.open(url + "#/game/g0-1")
        tab.wait_for_selector("#board")
        assert "rebuilt from seed 0" in tab.inner_text("#shown")  # `run --json` keeps no CT-Bench log
        assert "both players reached the goal" in tab.inner_text("#outcome")
        assert tab.locator("#board circle[data-player='red']").get_attribute("data-tile") == "3,3"
        tab.locator("#slider").fill("3")  # after move 3: red on (0,2), blue on (0,1), blue's move paid by red
        assert tab.inner_text("#frame-label").startswith("After move 3 of 12 (round 2): red moves to (0, 2)")
        assert tab.locator("#board circle[data-player='red']").get_attribute("data-tile") == "0,2"
        assert tab.locator("#board circle[data-player='blue']").get_attribute("data-tile") == "0,1"
        red = [c.inner_text() for c in tab.locator("#chips tr[data-player='red'] td").all()]
        assert red == ["11", "0", "2"]  # 14 red chips less two moves and the one the contract gave blue
        tab.locator("#slider").fill("4")  # blue's move onto (1,1)
        tab.locator("#slider").fill("5")  # red onto (0,3), paid by blue's chip under the contract
        assert (
            tab.locator("#source mark[data-clause='cover.2']").inner_text() == "(0,3): blue pays for red with blue chip"
        )
        assert tab.locator("#events li.now", has_text="contract: blue gives red a blue chip for (0, 3)").count() == 1
        assert [c.inner_text() for c in tab.locator("#promises tr").nth(1).locator("td").all()] == [
            "red",
            "0",
            "0",
            "2",
            "0",
        ]
        page.shot("ctbench")
    finally:
        httpd.shutdown()


def test_an_experiment_lists_filters_opens_and_compares_its_games(experiment, page):
    httpd, url = serving(Viewer(experiment))
    try:
        tab = page.open(url)
        # the page is up before the server has read every store ("reading the files…"); the tables follow
        tab.get_by_text("Table 7 — Customer, macro").first.wait_for(timeout=60_000)
        assert "Table 7 — Customer, macro" in tab.inner_text("main") and "RCC (paper)" in tab.inner_text("main")
        assert tab.locator(".figures img").count() == 1
        total = int(tab.inner_text("#count").split()[0])
        assert total >= 6 + 2 * 9 * 2  # 12 agent games, 2 rational records of 9 games listed for either role
        rows = Viewer(experiment, live=False).index.rows
        rational = sum(r.id.endswith("-s") for r in rows)  # each rational game's second row, its Supplier's
        assert rational and tab.inner_text("#games-heading") == f"Games ({len(rows) - rational:,})"
        assert f"{rational} rational game(s) (each listed once per role)" in tab.inner_text("main")
        tab.select_option("select[data-filter='agent']", "random")
        tab.select_option("select[data-filter='outcome']", "breach")
        listed = tab.locator("table.games tbody tr")
        assert listed.count() >= 1 and tab.inner_text("#count").startswith(f"{listed.count()} game(s)")
        for row in listed.all():
            cells = [c.inner_text() for c in row.locator("td").all()]
            assert cells[4] == "random" and cells[7] == "breach"
        page.shot("experiment")
        listed.first.locator("a").click()
        tab.wait_for_selector("#weeks")
        assert "rebuilt from seed 42" in tab.inner_text("#shown")  # the store keeps no events
        assert tab.locator("#weeks tr.breach").count() >= 1
        tab.go_back()
        tab.wait_for_selector("#compare")
        tab.select_option("#cmp-a", "rcc")
        tab.select_option("#cmp-b", "random")
        tab.click("#compare")
        summary = tab.inner_text("#paired-summary")
        assert summary.startswith("6 shared game(s)")  # 2 contracts × 3 counterparties, seed 42
        assert "breached first: A 0, B" in summary
        page.shot("compare")
        tab.locator("table.pairs a").first.click()
        tab.wait_for_selector("#pair-b #weeks")
        assert tab.locator("#pair-a #weeks").count() == 1
    finally:
        httpd.shutdown()


def test_a_ctbench_sweep_shows_its_summary_and_keeps_each_games_negotiation(page, tmp_path):
    ok(
        "ctbench",
        "sweep",
        "--boards",
        "0,24",
        "--conditions",
        "none,prog_trading",
        "--modes",
        "pfp",
        "--out",
        tmp_path / "sweep",
        "--workers",
        "1",
    )
    httpd, url = serving(Viewer(tmp_path / "sweep"))
    try:
        tab = page.open(url)
        assert tab.inner_text("#count").startswith("4 game(s)")
        report = tab.locator("pre.report")
        tab.wait_for_selector("pre.report:has-text('Table 1')")
        text = report.inner_text()  # the report's tables, the paper's rows beside the sweep's
        assert "Table 1: Pay-for-Partner; No contract" in text and "Table 3: Pay-for-Partner; Prog-Trading" in text
        assert "\nplanner " in text and "GPT-4.1 (paper)" in text and "normalised_reward" not in text
        summary = tab.locator("details", has_text="summary.json")  # its raw rows, closed beneath
        assert summary.get_attribute("open") is None
        tab.select_option("select[data-filter='where']", "board 24")
        tab.select_option("select[data-filter='contract']", "prog_trading")
        assert tab.inner_text("#count").startswith("1 game(s)")
        tab.locator("table.games tbody tr a").first.click()
        tab.wait_for_selector("#board")
        assert tab.inner_text("#shown") == "events kept in the record"
        assert "agree" in tab.inner_text("#negotiation") and tab.locator("#source mark").count() == 0
    finally:
        httpd.shutdown()


HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> I pay {"payment": 18}'


def hostile_customer(body):
    """An LLM Customer that pays $18 every payment week, its reply wrapped in markup that would run if the page
    took it as HTML."""
    return 200, message(HOSTILE, input_tokens=120, output_tokens=30)


def test_an_llm_game_shows_its_calls_as_text_and_is_rebuilt_from_its_recordings(page, tmp_path):
    """A real LLM agent game (the anthropic client against a scripted loopback server): every reply holds a
    <script>, shown as text and never run; the same record without its events is rebuilt from the recordings
    alone (replay: no request reaches any server) and matches the record."""
    recordings = tmp_path / "llm.sqlite"
    with ScriptedServer(hostile_customer) as api:
        done = run_cli(
            "run",
            ROOT / "examples" / "worked-example-1.contract",
            "--env",
            "1",
            "--customer",
            f"llm:{MODEL}",
            "--base-url",
            api.url,
            "--recordings",
            recordings,
            "--json",
            env={**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key"},
        )
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert len(record["llm_calls"]) == 6
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "llm.jsonl").write_text(json.dumps(record) + "\n")
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "llm.jsonl").write_text(json.dumps({**record, "trajectory": []}) + "\n")
    httpd, url = serving(Viewer(tmp_path / "kept"))
    try:
        tab = page.open(url + "#/game/g0-1")
        tab.wait_for_selector("#llm")
        tab.locator("#llm summary").first.click()
        assert tab.locator("#llm pre.reply").first.inner_text() == HOSTILE
        assert tab.locator("#llm script, #llm img").count() == 0 and tab.evaluate("window.pwned") is None
        assert "720 input and 180 output tokens" in tab.inner_text("#llm h3")
    finally:
        httpd.shutdown()
    settings = ViewOptions().llm.model_copy(update={"recordings": recordings, "base_url": api.url})
    rebuilt = Viewer(tmp_path / "bare", ViewOptions(llm=settings)).game("g0-1")  # the server is gone
    assert rebuilt.get("error") is None and rebuilt["shown"] == "rebuilt from seed 42"
    assert [w["paid"] for w in rebuilt["weeks"] if w["role"] == "customer"] == [18] * 6
    assert len(rebuilt["llm_calls"]) == 6
    # the recording key holds no base URL (issue #47): the same model through another endpoint replays them too
    elsewhere = Viewer(tmp_path / "bare", ViewOptions(llm=settings.model_copy(update={"base_url": None}))).game("g0-1")
    assert elsewhere.get("error") is None and len(elsewhere["llm_calls"]) == 6
    from contractlang.llm import Recordings

    empty = settings.model_copy(update={"recordings": Recordings(tmp_path / "other.sqlite").path})  # none in it
    unrecorded = Viewer(tmp_path / "bare", ViewOptions(llm=empty)).game("g0-1")
    assert (
        unrecorded["error"].startswith("the record keeps no events and the game could not be rebuilt: ")
        and "no recorded response" in unrecorded["error"]
    )


def test_the_page_says_what_it_cannot_show_and_whose_numbers_it_lists(games, page, tmp_path):
    """A folder as a person's experiments leave it: a record with a NaN utility, a game played from Python (no
    spec rebuilds it), an event log of a `py:` agent; written an hour ago, so nothing is still writing."""
    from tests.hardening.test_viewer_inputs import python_played

    record = json.loads((games / "runs" / "g.jsonl").read_text())
    folder = tmp_path / "mine"
    (folder / "jobs").mkdir(parents=True)
    (folder / "runs.jsonl").write_text(
        json.dumps(record) + "\n" + json.dumps({**record, "u_customer": float("nan")}) + "\n"
    )
    (folder / "jobs" / "performance.jsonl").write_text(json.dumps(python_played(record)) + "\n")
    contract = ROOT / "examples" / "worked-example-1.contract"
    stingy = f"py:{ROOT / 'examples' / 'agents' / 'stingy.py'}:Stingy"
    ok("run", contract, "--env", "5", "--customer", stingy, "--log", folder / "stingy.jsonl")
    hour_ago = os.path.getmtime(folder / "runs.jsonl") - 3600
    for path in folder.rglob("*.jsonl"):
        os.utime(path, (hour_ago, hour_ago))
    httpd, url = serving(Viewer(folder))
    try:
        tab = page.open(url)
        tab.wait_for_selector("#count:text-matches('^3 game')")
        assert tab.inner_text("#root") == "mine" and str(tmp_path) not in tab.content()
        assert tab.inner_text("#live") == "served: read again if the files change"
        assert tab.inner_text("#problems summary") == "1 file(s) or record(s) not shown"
        tab.click("#problems summary")
        assert tab.inner_text("#problems li") == "runs.jsonl:2: not listed: u_customer: NaN is not a finite number"
        assert "Utility / score (agent / counterparty)" in tab.inner_text("table.games thead")
        logged = tab.locator("table.games tbody tr", has_text="stingy")
        cells = [c.inner_text() for c in logged.locator("td").all()]
        assert (
            cells[4] == stingy and cells[5] == "rcc" and cells[7] == "breach" and cells[8].startswith("customer (week")
        )
        tab.locator("table.games tbody tr", has_text="skimper").locator("a").click()
        tab.wait_for_selector("p.error")
        assert tab.inner_text("p.error") == (
            "This game cannot be shown: the record keeps no events and the game cannot be rebuilt here: unknown "
            "supplier policy 'skimper' (an agent played from Python is known only to the program that played it; "
            "a `py:` spec can be rebuilt)"
        )
    finally:
        httpd.shutdown()


def test_the_server_serves_nothing_outside_its_page_and_data(games):
    httpd, _ = serving(Viewer(games / "runs"))
    port = httpd.server_address[1]
    try:

        def status(path: str) -> int:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.putrequest("GET", path, skip_host=False)  # sent as written, never normalised
            connection.putheader(TOKEN_HEADER, httpd.token)
            connection.endheaders()
            answer = connection.getresponse()
            answer.read()
            return answer.status

        assert status("/") == 200 and status("/static/view.js") == 200 and status("/data/index.json") == 200
        for path in (
            "/../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/static/..%2f..%2fsite.py",
            "/static/%2e%2e/index.py",
            "/data/game/..%2f..%2f..%2fetc%2fpasswd.json",
            "/files/..%2F..%2Fetc%2Fpasswd",
            "/files/0.png",
            "/data/list/7.json",
            "/data/game/g9-9.json",
            "//etc/passwd",
            "/static/view.js/../../../site.py",
            "/runs/g.jsonl",
            "/%00",
        ):
            assert status(path) == 404, path
        assert httpd.server_address[0] == "127.0.0.1"
        rebinding = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        rebinding.request("GET", "/data/index.json", headers={"Host": f"attacker.example:{port}"})
        assert rebinding.getresponse().status == 403
    finally:
        httpd.shutdown()


def test_the_list_grows_while_a_run_is_still_writing(games, page, tmp_path):
    store = tmp_path / "runs.jsonl"
    line = (games / "runs" / "g.jsonl").read_text()
    store.write_text(line)
    httpd, url = serving(Viewer(tmp_path))
    try:
        tab = page.open(url)
        assert tab.inner_text("#count").startswith("1 game(s)")
        with store.open("a") as handle:
            handle.write(line + line[: len(line) // 2])  # one more record and half of another, still being written
        tab.wait_for_selector("#count:text-matches('^2 game')", timeout=10_000)
        with store.open("a") as handle:
            handle.write(line[len(line) // 2 :])
        tab.wait_for_selector("#count:text-matches('^3 game')", timeout=10_000)
    finally:
        httpd.shutdown()


def test_a_store_rewritten_when_its_run_ends_is_read_again(games, tmp_path):
    """A finished run rewrites its store in job order (a new file renamed over it, the same size): the rows are
    read again, so a game opens the record it lists, not the one now at its old offset."""
    from contractlang.files import write_atomically

    record = json.loads((games / "runs" / "g.jsonl").read_text())
    first, second = (json.dumps({**record, "seed": seed}) + "\n" for seed in (11, 22))
    store = tmp_path / "runs.jsonl"
    store.write_text(first + second)
    viewer = Viewer(tmp_path, live=False)
    assert [r.seed for r in viewer.index.rows] == [11, 22]
    before = viewer.index.version
    write_atomically(store, second + first)
    viewer.index.refresh()
    assert [r.seed for r in viewer.index.rows] == [22, 11] and viewer.index.version > before
    assert [json.loads(viewer.index.line(r))["seed"] for r in viewer.index.rows] == [22, 11]


def test_a_bundle_is_put_in_place_whole_or_not_at_all(games, tmp_path, monkeypatch):
    """A bundle replaces a previous one whole; one stopped midway leaves the previous as it was and no partial
    folder; a folder that is not a bundle is refused in one line."""
    from contractlang.api.view import site

    out = tmp_path / "site"
    ok("view", games / "runs", "--bundle", out, "--workers", "1")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert Path("data/game/g0-1.json") in before

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "page_of", stopped)
    with pytest.raises(KeyboardInterrupt):
        site.bundle(Viewer(games / "runs", live=False), out, workers=1)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    done = run_cli("view", games / "runs", "--bundle", tmp_path / "mine")
    assert (
        done.returncode == 1
        and done.stderr.strip()
        == f"error: cannot write the site into {tmp_path / 'mine'}: "
        "it exists and is not a viewer bundle (name a new folder)"
    )
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_the_command_serves_on_loopback_and_prints_its_url(games):
    process = subprocess.Popen(
        [sys.executable, "-m", "contractlang", "view", str(games / "runs"), "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = json.loads(process.stdout.readline())
        assert first["ok"] and first["url"].startswith("http://127.0.0.1:")
        port = int(first["url"].rsplit(":", 1)[1].strip("/"))
        deadline = time.monotonic() + 60  # a guard against a hang: the first scan runs beside the server
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", "/data/index.json")
            index = json.loads(connection.getresponse().read())
            if not index["reading"] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert (index["reading"], index["games"]) == (False, 1)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize(
    "args, message",
    [
        (["view", "no-such-dir"], "error: no-such-dir: no such file or directory"),
        (["view", "examples/agents"], "no games, tables or figures found"),
        (["view", "examples", "--board", "3"], "--board goes with --contract"),
        (
            ["view", "examples/traces/worked-example-1-late-breach.jsonl"],
            "is an event log (`run --log`) without a header naming its contract: give --contract FILE",
        ),
    ],
)
def test_bad_input_is_one_line(args, message):
    done = run_cli(*args, cwd=ROOT)
    assert done.returncode in (1, 2) and message in done.stderr and "Traceback" not in done.stderr


def test_an_event_log_without_a_header_or_its_contract_says_what_to_give(tmp_path):
    shutil.copy(ROOT / "examples" / "traces" / "worked-example-1-late-breach.jsonl", tmp_path / "g.jsonl")
    page = Viewer(tmp_path).game("g0")
    assert "names no contract" in page["error"] and "--contract FILE" in page["error"]


def test_the_page_loads_nothing_from_the_network():
    """The page is package data (hatch ships every file of `contractlang/`): no CDN, no address outside it."""
    static = ROOT / "contractlang" / "api" / "view" / "static"
    assert sorted(p.name for p in static.iterdir()) == ["index.html", "view.css", "view.js"]
    for path in static.iterdir():
        text = path.read_text()
        assert "https://" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", ""), path


def test_a_ctbench_event_log_is_drawn_against_its_contract_and_board():
    """`run --log` of CT-Bench holds move attempts only: each is drawn as the move, with what the contract's
    monitor enforced on it (the bundled trace: blue's move paid by red's chip, then blue forfeits (0,3))."""
    contract = ROOT / "examples" / "ctbench-board-24-swap.contract"
    from contractlang import load

    options = ViewOptions(contract=load(contract)[0], source=contract.read_text(), board=24)
    page = Viewer(ROOT / "examples" / "traces" / "board-24-swap.jsonl", options).game("g0")
    assert page["shown"].startswith("events of the log only") and page["forfeited"] == ["blue"]
    assert [f["position"] for f in page["frames"]] == [
        {"red": [0, 0], "blue": [0, 0]},
        {"red": [0, 0], "blue": [0, 1]},
        {"red": [0, 3], "blue": [0, 1]},
    ]
    assert page["frames"][1]["chips"]["red"]["red"] == 13  # red's chip paid blue's move (cover.0)
    assert [(e["type"], e["clause"]) for e in page["events"] if e["clause"]] == [
        ("contract_transfer", "cover.0"),
        ("forfeit", "cover.2"),
    ]


def test_view_help_lists_only_the_llm_options_that_find_a_games_recordings():
    """A viewer makes no LLM call: of the LLM options it takes those that key a recorded response, no limits."""
    text = " ".join(ok("view", "--help").split())
    for option in ("--recordings", "--max-tokens", "--base-url", "--effort", "--thinking", "--allow-commands"):
        assert option in text, option
    for option in ("--cost-limit", "--token-limit", "--game-time-limit", "--game-token-limit", "--llm-timeout"):
        assert option not in text, option
    for option in ("--game-message-limit", "--max-connections", "--replay"):
        assert option not in text, option


def test_a_tournament_shows_its_leaderboard_and_bundles_without_an_absolute_path(synthetic, page, tmp_path):
    """`view T` on a tournament's folder: per role, each agent's rating with interval bars, the agent × opponent
    heatmap of mean utility, and who made it (version, agent specs, seeds); `view T --bundle site` holds no path
    of this machine."""
    import contractlang as cl

    out = tmp_path / "T"
    result = cl.tournament(["rcc", "re"], directory=synthetic, out=out, seeds=1, workers=1, resamples=200)
    rep = result.report
    site = tmp_path / "site"
    ok("view", out, "--bundle", site, "--workers", "1")
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".html", ".js"):
            assert str(tmp_path) not in path.read_text(), path
    static, url = static_site(site)
    try:
        tab = page.open(url)
        tab.wait_for_selector("section.leaderboard")
        # the games behind it are listed, each once per role, and open like any other
        assert tab.inner_text("#games-heading") == f"Games ({rep.games})" and tab.locator("#problems").count() == 0
        assert tab.inner_text("section.leaderboard .provenance").startswith(f"contractlang {cl.__version__} · seeds 0")
        assert tab.inner_text("section.leaderboard .specs") == "agents: rcc, re"
        for role in ("customer", "supplier"):
            shown = tab.locator(f"table.ratings[data-role='{role}'] tr[data-agent]")
            assert shown.count() == 2
            for r in (r for r in rep.ratings if r.role == role):
                row = tab.locator(f"table.ratings[data-role='{role}'] tr[data-agent='{r.agent}']")
                for q in ("optimum_regret", "compliant_regret"):
                    iv = getattr(r, q)
                    shown_q = row.locator(f"td[data-q='{q}']").inner_text()
                    assert shown_q.startswith(f"{iv.mean:.2f} [{iv.low:.2f}, {iv.high:.2f}]")
                quantities = ("utility", "optimum", "compliant", "regret", "bt")
                assert row.locator("svg.bar line.interval").count() == len(quantities)
            cells = tab.locator(f"svg.heatmap[data-role='{role}'] rect.cell")
            assert cells.count() == 4  # two agents × two opponents
            fills = {cells.nth(k).get_attribute("fill") for k in range(4)}
            assert len(fills) > 1  # the utilities differ, and so do their shades
        page.shot("leaderboard")
        tab.locator("table.games tbody tr a").first.click()
        tab.wait_for_selector("#weeks")
    finally:
        static.shutdown()
    # a report that is not one this version writes is named, and the rest of the page is drawn
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "tournament.json").write_text(json.dumps({"ratings": [{"role": "customer"}], "cells": 3}))
    httpd, url = serving(Viewer(tmp_path / "odd"))
    try:
        tab = page.open(url)
        assert tab.inner_text("p.error").startswith("tournament.json: not drawn as a leaderboard: ")
        assert tab.locator("#games-heading").count() == 1
    finally:
        httpd.shutdown()
