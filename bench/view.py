"""Benchmark: `contractlang view` over an experiment of 10,000 games (issue #44 target: the page opens in ≤ 2 s and
stays under 500 MB in the browser). The store is real in shape and size: one `experiment performance` record
(Example 1's terms in Env 1, a random Customer against RCC, no events kept, as the store writes them), copied
with each copy's seed, agent, counterparty and contract label varied, so the list has many distinct rows.
Measured in headless Chromium: from `contractlang view DIR` started to its URL, to the first rows drawn and to all
10,000 listed (the server reads the store in the background); with the store read, from navigation to the list
drawn (best of 3), the JS heap then (CDP Performance.getMetrics), a filter over all rows, and opening one game
(rebuilt from its seed).

`--bundle` writes the same store as a static site: every game page is built (each rebuilt from its seed, with
RCC beside every decision). Timed in this run on the whole store: the baseline (the viewer as of BASELINE_COMMIT,
run from a copy of that commit), then this tree with one process and with the default workers."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import ROOT, write_result

GAMES = int(os.environ.get("VIEW_GAMES", "10000"))
BASELINE_COMMIT = "dc4a4db"  # the viewer before the bundle wrote its site in worker processes into a new folder
TARGET_S, TARGET_MB = 2.0, 500
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def store(directory: Path, games: int) -> Path:
    """`jobs/performance.jsonl` with `games` records, as `experiment performance` writes them."""
    from contractlang import load
    from games.experiments.performance import PerformanceJob, run_performance

    ir = load(ROOT / "examples" / "worked-example-1.contract")[0].ir
    line = json.loads(
        run_performance(
            PerformanceJob(contract=ir, env=1, seed=0, role="customer", counterparty="rcc", agent="random")
        ).model_dump_json()
    )
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
    process = subprocess.Popen(
        [sys.executable, "-m", "contractlang", "view", str(root), "--json"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
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
    return {
        "url_printed_seconds": round(printed, 3),
        "first_rows_seconds": round(first, 3),
        "all_listed_seconds": round(every, 3),
    }


def _bundle_seconds(tree: Path, root: Path, out: Path, *options: str) -> float:
    """`contractlang view ROOT --bundle OUT` run from `tree`'s code (a fresh process, as a person runs it)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "contractlang", "view", str(root), "--bundle", str(out), "--json", *options],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bundle from {tree} failed: {done.stderr.strip()[-500:]}")
    return round(time.perf_counter() - start, 2)


def bundled(tmp: Path, store_root: Path) -> dict:
    """The --bundle figures on the whole store: the baseline, then this tree with one process and with the
    default workers."""
    base = tmp / "baseline-tree"
    base.mkdir()
    archive = subprocess.run(["git", "archive", BASELINE_COMMIT], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tree:
        tree.extractall(base, filter="data")
    if (ROOT / ".contractlang-cache" / "dp").is_dir():  # the same solved tables: neither run times a solve
        shutil.copytree(ROOT / ".contractlang-cache" / "dp", base / ".contractlang-cache" / "dp")
    warm = tmp / "warm"
    store(warm, 12)
    _bundle_seconds(base, warm, tmp / "warm-base")  # compiled kernels and tables on disk before any timing
    _bundle_seconds(ROOT, warm, tmp / "warm-this")
    site = tmp / "site"
    result = {
        "games": GAMES,
        "baseline_commit": BASELINE_COMMIT,
        "baseline_seconds": _bundle_seconds(base, store_root, tmp / "site-base"),
        "one_process_seconds": _bundle_seconds(ROOT, store_root, tmp / "site-1", "--workers", "1"),
        "workers": os.cpu_count() or 1,
        "workers_seconds": _bundle_seconds(ROOT, store_root, site),
    }
    files = [p for p in site.rglob("*") if p.is_file()]
    result["site_files"] = len(files)
    result["site_mb"] = round(sum(p.stat().st_size for p in files) / 2**20, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", action="store_true", help="Also time --bundle (minutes: every page is built).")
    parser.add_argument("--json", action="store_true", help="Print the result as JSON only.")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from contractlang.api.view.index import ViewIndex
    from contractlang.api.view.site import Viewer, server

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
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
            page.wait_for_selector(f"#count:text-matches('^{GAMES // 4:,} game')")
            filter_s = time.perf_counter() - start
            start = time.perf_counter()
            page.locator("table.games tbody tr a").first.click()
            page.wait_for_selector("#weeks")
            game_s = time.perf_counter() - start
            browser.close()
        httpd.shutdown()
        heap_mb = metrics["JSHeapUsedSize"] / 2**20
        result = {
            "games": GAMES,
            "store_mb": round(path.stat().st_size / 2**20, 1),
            "index_seconds": round(index_s, 3),
            "cold_start": started,
            "open_seconds_best_of_3": round(min(opens), 3),
            "open_seconds": [round(s, 3) for s in opens],
            "js_heap_used_mb": round(heap_mb, 1),
            "js_heap_total_mb": round(metrics["JSHeapTotalSize"] / 2**20, 1),
            "dom_nodes": int(metrics["Nodes"]),
            "filter_seconds": round(filter_s, 3),
            "open_one_game_seconds": round(game_s, 3),
            "target": f"open ≤ {TARGET_S} s, browser memory < {TARGET_MB} MB",
            "met": min(opens) <= TARGET_S and heap_mb < TARGET_MB,
        }
        if args.bundle:
            (Path(tmp) / "bundle").mkdir()
            result["bundle"] = bundled(Path(tmp) / "bundle", root)
    path = write_result("view", result)
    print(json.dumps(result, indent=2))
    if not args.json:
        print(path)


if __name__ == "__main__":
    main()
