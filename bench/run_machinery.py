"""Benchmark: requests in flight and memory of an LLM `experiment performance` run (issue #47), against a
loopback Messages API whose Customer answers after `--delay` seconds. Part 1: for each N of `--connections`,
the most requests the server saw at once (ratio to N) with --workers 2. Part 2: RSS of the whole process tree
(the command, its game process and workers) when the store holds game 100 and game `--games`, with replies at
once. Small set: bench/performance.py's 15 Env-1 contracts, the LLM as the Customer against RCC, RC and RE.
Usage: python3 bench/run_machinery.py [--connections 10,64] [--delay 0.5] [--games 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402
from performance import VARIANTS, build_set  # noqa: E402

MODEL = "claude-haiku-4-5"
GAMES_A_SEED = 15 * 3  # contracts × counterparties, the Customer role only


class Customer:
    """Pays $18 a payment week after `delay` seconds; counts requests and the most in flight at once."""

    def __init__(self, delay: float):
        self.delay, self.lock = delay, threading.Lock()
        self.requests = self.in_flight = self.most = 0

    def reply(self, body: dict) -> dict:
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(self.delay)
        with self.lock:
            self.in_flight -= 1
        prompt = body["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else "".join(b.get("text", "") for b in prompt)
        week = int(re.findall(r"Week (\d+) \(a payment week\)", prompt)[-1])
        text = json.dumps({"payment": 18 if week <= 9 else 0})
        return {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 100, "output_tokens": 50},
        }


def serve(customer: Customer) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's naming
            data = json.dumps(customer.reply(json.loads(self.rfile.read(int(self.headers["content-length"]))))).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def tree_rss(pid: int) -> int:
    """RSS in bytes of `pid` and every process under it."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024
            todo += [int(c) for t in Path(f"/proc/{p}/task").iterdir() for c in (t / "children").read_text().split()]
        except (OSError, AttributeError):
            continue
    return total


def run(work: Path, env: dict, url: str, connections: int, seeds: int, watch=None) -> None:
    command = [
        sys.executable,
        "-m",
        "contractlang",
        "experiment",
        "performance",
        str(work),
        "--agent",
        f"llm:{MODEL}",
        "--role",
        "customer",
        "--seeds",
        ",".join(map(str, range(seeds))),
        "--base-url",
        url,
        "--recordings",
        str(work.parent / f"r{connections}.sqlite"),
        "--max-connections",
        str(connections),
        "--workers",
        "2",
        "--json",
    ]
    proc = subprocess.Popen(
        command, cwd=work.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    while proc.poll() is None:
        if watch is not None:
            watch(proc.pid)
        time.sleep(0.2)
    out, err = proc.communicate()
    assert proc.returncode == 0, (out + err)[-2000:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="10,64")
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args()
    results: dict = {"set": f"15 Env-1 contracts ({', '.join(VARIANTS)}), LLM Customer", "in_flight": {}}
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "ANTHROPIC_API_KEY": "sk-bench-not-a-real-key",
            "CONTRACTLANG_DP_CACHE": str(Path(tmp) / "dp"),
        }
        os.environ["CONTRACTLANG_DP_CACHE"] = env["CONTRACTLANG_DP_CACHE"]
        build_set(Path(tmp) / "set")
        for n in map(int, args.connections.split(",")):
            work = Path(tmp) / f"n{n}" / "set"
            shutil.copytree(Path(tmp) / "set", work)
            customer = Customer(args.delay)
            httpd = serve(customer)
            seeds = max(1, -(-4 * n // GAMES_A_SEED))  # enough games for 4 rounds of N at once
            start = time.perf_counter()
            run(work, env, f"http://127.0.0.1:{httpd.server_address[1]}", n, seeds)
            httpd.shutdown()
            results["in_flight"][str(n)] = {
                "most": customer.most,
                "ratio": round(customer.most / n, 3),
                "requests": customer.requests,
                "games": seeds * GAMES_A_SEED,
                "seconds": round(time.perf_counter() - start, 1),
            }
            print(n, results["in_flight"][str(n)], flush=True)
        work = Path(tmp) / "rss" / "set"
        shutil.copytree(Path(tmp) / "set", work)
        customer = Customer(0.0)
        httpd = serve(customer)
        store = work / "jobs" / "performance.jsonl"
        rss: dict[int, int] = {}

        def watch(pid: int) -> None:
            games = store.read_text().count("\n") if store.exists() else 0
            for mark in (100, args.games):
                if games >= mark and mark not in rss:
                    rss[mark] = tree_rss(pid)

        run(work, env, f"http://127.0.0.1:{httpd.server_address[1]}", 16, -(-args.games // GAMES_A_SEED), watch)
        httpd.shutdown()
        results["rss_mb"] = {str(k): round(v / 2**20, 1) for k, v in rss.items()}
        if len(rss) == 2:
            results["rss_growth"] = round(rss[args.games] / rss[100] - 1, 3)
    print(json.dumps(results, indent=1))
    write_result("run_machinery", results)


if __name__ == "__main__":
    main()
