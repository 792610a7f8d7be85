"""Benchmark: `contractlang view` over an experiment of 10,000 games (issue #44 target: the page opens in ≤ 2 s and
stays under 500 MB in the browser). The store is real in shape and size: one `experiment performance` record
(Example 1's terms in Env 1, a random Customer against RCC, no events kept, as the store writes them), copied
with each copy's seed, agent, counterparty and contract label varied, so the list has many distinct rows.
Measured in headless Chromium: from `contractlang view DIR` started to its URL, to the first rows drawn and to all
10,000 listed (the server reads the store in the background); with the store read, from navigation to the list
drawn (best of 3), the JS heap then (CDP Performance.getMetrics), a filter over all rows, and opening one game
(rebuilt from its seed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import ROOT, write_result

GAMES = int(os.environ.get("VIEW_GAMES", "10000"))
TARGET_S, TARGET_MB = 2.0, 500
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def store(directory: Path, games: int) -> Path:
    """`jobs/performance.jsonl` with `games` records, as `experiment performance` writes them."""
    from contractlang import load
    from games.contractsim.performance import PerformanceJob, run_performance

    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    line = json.loads(run_performance(PerformanceJob(contract=ir, env=1, seed=0, role="customer",
                                                     counterparty="rcc", agent="random")).model_dump_json())
    agents, others = ("random", "rc", "re", "rcc"), ("rcc", "rc", "re")
    path = directory / "jobs" / "performance.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as out:
        for k in range(games):
            agent, other = agents[k % 4], others[(k // 4) % 3]
            line["job"].update(seed=k, agent=agent, counterparty=other)
            line["run"].update(seed=k, customer=agent, supplier=other, contract=f"{ir.name}-{k % 50}")
            out.write(json.dumps(line) + "\n")
    return path


def cold(browser, root: Path) -> dict:
    """From `contractlang view DIR` started to its URL printed, to the first rows drawn, and to every game listed
    (the directory is read in the background while the page is open)."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "contractlang", "view", str(root), "--json"], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(process.stdout.readline())["url"]
        printed = time.perf_counter() - start
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("table.games tbody tr")
        first = time.perf_counter() - start
        page.wait_for_selector(f"#count:text-matches('^{GAMES:,} game')", timeout=60_000)
        every = time.perf_counter() - start
        page.close()
    finally:
        process.terminate()
        process.wait()
    return {"url_printed_seconds": round(printed, 3), "first_rows_seconds": round(first, 3),
            "all_listed_seconds": round(every, 3)}


def main() -> None:
    from playwright.sync_api import sync_playwright

    from contractlang.api.view.index import ViewIndex
    from contractlang.api.view.site import Viewer, server

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = store(root, GAMES)
        start = time.perf_counter()
        ViewIndex(root)
        index_s = time.perf_counter() - start
        viewer = Viewer(root, live=False)
        httpd = server(viewer)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            started = cold(browser, root)
            opens = []
            for _ in range(3):
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("body[data-ready='1'] table.games tbody tr")
                opens.append(time.perf_counter() - start)
                if len(opens) < 3:
                    page.close()
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            start = time.perf_counter()
            page.select_option("select[data-filter='agent']", "re")
            page.wait_for_selector("#count:text-matches('^2,500 game')")
            filter_s = time.perf_counter() - start
            start = time.perf_counter()
            page.locator("table.games tbody tr a").first.click()
            page.wait_for_selector("#weeks")
            game_s = time.perf_counter() - start
            browser.close()
        httpd.shutdown()
        heap_mb = metrics["JSHeapUsedSize"] / 2**20
        result = {
            "games": GAMES, "store_mb": round(path.stat().st_size / 2**20, 1),
            "index_seconds": round(index_s, 3), "cold_start": started,
            "open_seconds_best_of_3": round(min(opens), 3), "open_seconds": [round(s, 3) for s in opens],
            "js_heap_used_mb": round(heap_mb, 1), "js_heap_total_mb": round(metrics["JSHeapTotalSize"] / 2**20, 1),
            "dom_nodes": int(metrics["Nodes"]), "filter_seconds": round(filter_s, 3),
            "open_one_game_seconds": round(game_s, 3),
            "target": f"open ≤ {TARGET_S} s, browser memory < {TARGET_MB} MB",
            "met": min(opens) <= TARGET_S and heap_mb < TARGET_MB,
        }
    print(json.dumps(result, indent=2))
    print(write_result("view", result))


if __name__ == "__main__":
    main()
