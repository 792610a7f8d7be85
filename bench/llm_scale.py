"""Benchmark (issue #47): an LLM Supplier's performance games at scale against a loopback Messages API that
answers in 2 s (bench/loopback_llm.py). For N connections it runs `experiment performance --agent
llm:anthropic/MODEL --role supplier` as a real process and measures the requests in flight at the server
(time-weighted mean over the steady part: from WARMUP seconds after the first request until fewer than N
games are left; target >= 0.9 N), the PSS of the whole process tree (the CLI and every descendant,
/proc/PID/smaps_rollup, every 0.5 s; target <= 3 GB at N = 256), its RSS when the store holds game 100 and
game 1,000 (target: growth <= 10 %) and the wall time; then a burst of 429s and an outage of 529s (the run
must finish with every game completed, its in-flight limit lowered then recovered). Ratios are to the N = 10
case of the same run.

With `--max-connections` in the CLI (issue #47) N is that; without it (the code before #47) N is `--workers`,
one process per request in flight — the "before" figures. The DP tables are solved first by a rational
agent's run of the same games (into CONTRACTLANG_DP_CACHE, default bench/results/local/dp), so only the
network phase differs between cases. Writes llm_scale.json and llm_scale.md (bench/results/ with
BENCH_UPDATE=1, else bench/results/local/).
Usage: python3 bench/llm_scale.py [--connections 10,64,256] [--faults burst429,outage529] [--json]
The committed figures: the first 90 contracts × 4 seeds, tables and rational games from an earlier run —
  CONTRACTLANG_DP_CACHE=DIR python3 bench/llm_scale.py --max-contracts 90 --no-warm --rational RATIONAL.jsonl \
      --recordings-dir /dev/shm/bench-llm
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LOCAL, ROOT, write_result  # noqa: E402
from loopback_llm import Fault, LoopbackLlm  # noqa: E402

from games.runner import limits_path  # noqa: E402

MODEL = "claude-haiku-4-5"
AGENT = f"llm:anthropic/{MODEL}"
KEY = "sk-loopback-not-a-real-key"
SAMPLE_SECONDS = 0.5
WARMUP = 10.0  # seconds after the first request left out of the steady part: the limiter's ramp to N
STORE = Path("jobs") / "performance.jsonl"
SHIPPED_CONTRACTS = 180  # the shipped synthetic set, in the order --limit takes them


def has_connections() -> bool:
    """Whether this CLI has issue #47's --max-connections (else concurrency is --workers processes)."""
    done = subprocess.run(
        [sys.executable, "-m", "contractlang", "experiment", "performance", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    return "--max-connections" in done.stdout


def process_tree(root: int) -> list[int]:
    """`root` and every descendant alive now (by the parent field of /proc/PID/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def tree_memory(root: int) -> tuple[int, int, int]:
    """(PSS, RSS, processes) of the tree at `root`, in bytes: PSS counts a page shared by k processes as 1/k."""
    pss = rss = count = 0
    for pid in process_tree(root):
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        count += 1
        for line in text.splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1]) * 1024
            elif line.startswith("Rss:"):
                rss += int(line.split()[1]) * 1024
    return pss, rss, count


def lines_of(path: Path) -> int:
    try:
        with path.open("rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return 0


def slice_args(contracts: int, seeds: int) -> list[str]:
    return ["--limit", str(contracts), "--seeds", ",".join(str(42 + i) for i in range(seeds))]


def warm(contracts: int, seeds: int, env: dict, work: Path) -> float:
    """Solve the tables of the slice (and play its rational games) by a run of the rational RCC as the agent."""
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "contractlang",
            "experiment",
            "performance",
            "--agent",
            "rcc",
            "--role",
            "supplier",
            "--out",
            str(work / "warm"),
            *slice_args(contracts, seeds),
            "--json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - start


def limit_recovery(out: Path, n: int) -> dict | None:
    """From the in-flight limit's history the run wrote beside its store (`runner.limits_path`): its changes,
    the lowest limit, when it first fell and when it first stood at 0.9 N or more again after its lowest point
    (seconds since the run's client started); None when the run wrote no history."""
    path = limits_path(out / STORE)
    if not path.exists():
        return None
    changes = [c for model in json.loads(path.read_text())["limit_history"].values() for c in model]
    lowest = min(changes, key=lambda c: (c["limit"], c["t"]))
    fell = next((c["t"] for c in changes if c["limit"] < n), None)
    back = next((c["t"] for c in changes if c["t"] >= lowest["t"] and c["limit"] >= 0.9 * n), None)
    return {
        "changes": len(changes),
        "lowest": lowest["limit"],
        "first_lowered_at": fell,
        "lowest_at": lowest["t"],
        "back_to_0.9n_at": back,
        "lowered_then_recovered": fell is not None and back is not None,
    }


def run_case(
    n: int,
    contracts: int,
    seeds: int,
    env: dict,
    work: Path,
    connections: bool,
    delay: float,
    fault: Fault | None = None,
    label: str = "",
    quiet: bool = False,
    recordings_dir: Path | None = None,
    rational: Path | None = None,
) -> dict:
    """One run of the agent's games against a fresh loopback server (playing `fault`, if any); its figures."""
    fault = fault or Fault()
    out, recordings = work / f"run-{label or n}", (recordings_dir or work) / f"run-{label or n}.sqlite"
    recordings.unlink(missing_ok=True)
    rational = rational or work / "warm" / "jobs" / "rational.jsonl"
    if rational.exists():  # the rational games of seeds the set lacks, played already: the run only waits on the API
        (out / "jobs").mkdir(parents=True, exist_ok=True)
        shutil.copy(rational, out / "jobs" / "rational.jsonl")
    games = 3 * contracts * seeds
    concurrency = ["--max-connections", str(n)] if connections else ["--workers", str(n)]
    with LoopbackLlm(delay, fault) as server:
        command = [
            sys.executable,
            "-m",
            "contractlang",
            "experiment",
            "performance",
            "--agent",
            AGENT,
            "--role",
            "supplier",
            "--out",
            str(out),
            "--recordings",
            str(recordings),
            "--base-url",
            server.url,
            *slice_args(contracts, seeds),
            *concurrency,
            "--json",
        ]
        stderr = (work / f"run-{label or n}.stderr").open("w")
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        samples, at_game, peak = [], {}, (0, 0, 0)
        tail_from = None
        last_note = 0.0
        while process.poll() is None:
            time.sleep(SAMPLE_SECONDS)
            pss, rss, count = tree_memory(process.pid)
            done = lines_of(out / STORE)
            now = time.perf_counter() - start
            samples.append((round(now, 1), done, pss, rss, server.counts.in_flight))
            peak = max(peak, (pss, rss, count))
            for mark in (100, 1000):
                if done >= mark and mark not in at_game and rss:
                    at_game[mark] = rss
            if tail_from is None and done > games - n and server.counts.first is not None:
                tail_from = time.monotonic() - server.counts.first
            if not quiet and now - last_note >= 10:
                last_note = now
                eta = f", ETA {(now / done) * (games - done):.0f} s" if done else ""
                print(
                    f"  N={n}{' ' + label if label else ''}: {done}/{games} games, {server.counts.in_flight} in "
                    f"flight, {pss / 2**20:,.0f} MB PSS, {now:.0f} s{eta}",
                    file=sys.stderr,
                    flush=True,
                )
        wall = time.perf_counter() - start
        stdout = process.stdout.read()
        stderr.close()
    try:
        report = json.loads(stdout)
    except ValueError:
        report = {"error": stdout.strip()[-500:]}
    busy = server.busy_seconds()
    steady_end = tail_from if tail_from is not None else busy
    steady = server.mean_in_flight(WARMUP, steady_end) if steady_end > WARMUP else None
    counts = server.counts
    figures = {
        "n": n,
        "concurrency": "--max-connections" if connections else "--workers",
        "games": games,
        "games_completed": lines_of(out / STORE),
        "exit_code": process.returncode,
        "error": report.get("error") if isinstance(report, dict) else None,
        "wall_seconds": round(wall, 1),
        "busy_seconds": round(busy, 1),
        "steady_seconds": [WARMUP, round(steady_end, 1)],
        "in_flight_mean_steady": round(steady, 1) if steady is not None else None,
        "in_flight_to_n": round(steady / n, 3) if steady is not None else None,
        "in_flight_mean_busy": round(server.mean_in_flight(0, busy), 1),
        "in_flight_max": counts.max_in_flight,
        "requests": dict(sorted((str(k), v) for k, v in counts.by_status.items())),
        "requests_per_second": round(counts.by_status.get(200, 0) / busy, 1) if busy else None,
        "pss_peak_mb": round(peak[0] / 2**20),
        "rss_peak_mb": round(peak[1] / 2**20),
        "processes_peak": peak[2],
        "rss_at_game_mb": {str(k): round(v / 2**20) for k, v in at_game.items()},
        "rss_growth_100_to_1000": round(at_game[1000] / at_game[100] - 1, 3) if len(at_game) == 2 else None,
        "in_flight_per_second": server.series(1.0),
    }
    if fault.kind != "none":
        figures["fault"] = {"kind": fault.kind, "at_seconds": fault.at, "seconds": fault.seconds}
        figures["limit"] = limit_recovery(out, n)
        figures["every_game_completed"] = figures["games_completed"] == games and process.returncode == 0
        figures["server_side"] = recovery(figures["in_flight_per_second"], figures["fault"], n)
    if not quiet:
        print(
            f"N={n}{' ' + label if label else ''}: {figures['games_completed']}/{games} games, exit "
            f"{process.returncode}, {wall:.0f} s; in flight {figures['in_flight_mean_steady']} steady (max "
            f"{counts.max_in_flight}); PSS peak {figures['pss_peak_mb']:,} MB over {peak[2]} processes; RSS at "
            f"games 100/1000 {figures['rss_at_game_mb']}",
            file=sys.stderr,
            flush=True,
        )
    return figures


def recovery(series: list[int], fault: dict, n: int) -> dict:
    """What the server saw around a fault, from its in-flight count each second: the most in flight before it,
    the mean during it, and the seconds from its end until N/2 and 0.9 N were in flight again (None: never)."""
    start, end = int(fault["at_seconds"]), int(fault["at_seconds"] + fault["seconds"])
    during = series[start:end]

    def back_to(level: float):
        return next((i - end for i in range(end, len(series)) if series[i] >= level), None)

    return {
        "in_flight_max_before": max(series[:start], default=0),
        "in_flight_mean_during": round(sum(during) / len(during), 1) if during else None,
        "seconds_to_half_n_after": back_to(n / 2),
        "seconds_to_0.9n_after": back_to(0.9 * n),
    }


def ratios(cases: dict, base: str) -> dict:
    """Each case's figures against the base case's of the same run."""
    b = cases[base]
    out = {}
    for name, c in cases.items():
        out[name] = {
            "n": c["n"] / b["n"],
            "in_flight": (c["in_flight_mean_steady"] or 0) / (b["in_flight_mean_steady"] or 1),
            "requests_per_second": (c["requests_per_second"] or 0) / (b["requests_per_second"] or 1),
            "pss_peak": c["pss_peak_mb"] / max(b["pss_peak_mb"], 1),
        }
        out[name] = {k: round(v, 2) for k, v in out[name].items()}
    return out


def markdown(payload: dict) -> str:
    lines = [
        "# LLM runs at scale (issue #47)",
        "",
        payload["note"],
        "",
        (
            "| case | games (completed) | exit | wall s | in flight (steady mean / N) | max | req/s | PSS peak MB "
            "| processes | RSS game 100 → 1,000 MB | × N=10: in flight | req/s | PSS |"
        ),
        "|" + "---|" * 13,
    ]
    for name, c in payload["cases"].items():
        r = payload["ratios"].get(name, {})
        rss = c["rss_at_game_mb"]
        lines.append(
            f"| {name} | {c['games']} ({c['games_completed']}) | {c['exit_code']} | {c['wall_seconds']} | "
            f"{c['in_flight_mean_steady']} / {c['n']} = {c['in_flight_to_n']} | {c['in_flight_max']} | "
            f"{c['requests_per_second']} | {c['pss_peak_mb']:,} | {c['processes_peak']} | "
            f"{rss.get('100', '–')} → {rss.get('1000', '–')} | {r.get('in_flight', '–')} | "
            f"{r.get('requests_per_second', '–')} | {r.get('pss_peak', '–')} |"
        )
    for name, c in payload["faults"].items():
        lines += [
            "",
            f"**{name}** ({c['fault']['kind']} for {c['fault']['seconds']:g} s from "
            f"{c['fault']['at_seconds']:g} s, N = {c['n']} by {c['concurrency']}): "
            f"{c['games_completed']}/{c['games']} games, exit {c['exit_code']}"
            + (f" ({c['error']})" if c["error"] else "")
            + f"; every game completed: {c['every_game_completed']}; the run's in-flight limit: "
            f"{c['limit'] or 'no history written'}; requests "
            f"{c['requests']}; at the server: "
            f"{c.get('server_side') or recovery(c['in_flight_per_second'], c['fault'], c['n'])}; "
            f"in flight each second: {c['in_flight_per_second']}",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="10,64,256", help="the N to measure (comma-separated)")
    parser.add_argument(
        "--games",
        default="10:60,64:192,256:1080",
        help="games per N as N:GAMES (a multiple of 3: contracts × 3 counterparties × seeds)",
    )
    parser.add_argument("--faults", default="burst429,outage529", help="fault cases to run ('' for none)")
    parser.add_argument("--fault-n", type=int, default=64, help="N of the fault cases")
    parser.add_argument("--fault-games", type=int, default=192, help="games of each fault case")
    parser.add_argument("--fault-at", type=float, default=10.0, help="seconds after the first request")
    parser.add_argument("--burst", type=float, default=30.0, help="seconds of 429s")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds of 529s")
    parser.add_argument(
        "--max-contracts",
        type=int,
        default=SHIPPED_CONTRACTS,
        help="the first contracts of the shipped set to use at most (more seeds instead)",
    )
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the server takes to answer")
    parser.add_argument(
        "--workers",
        action="store_true",
        help="N is --workers even when the CLI has --max-connections (the processes model)",
    )
    parser.add_argument(
        "--no-warm",
        action="store_true",
        help="the tables are in CONTRACTLANG_DP_CACHE already: each run plays its rational games "
        "(unless --rational gives them)",
    )
    parser.add_argument(
        "--rational",
        type=Path,
        help="a job store (jsonl) holding the slice's rational games, copied into each run's store",
    )
    parser.add_argument(
        "--recordings-dir",
        type=Path,
        help="where the runs' recordings files go (default: the temporary directory; /dev/shm "
        "takes the disk's commit latency out)",
    )
    parser.add_argument("--name", default="llm_scale", help="the results' file name (e.g. llm_scale_before)")
    parser.add_argument("--note", default="", help="a line kept with the figures")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on stdout")
    args = parser.parse_args()
    connections = has_connections() and not args.workers
    per_n = dict(tuple(map(int, item.split(":"))) for item in args.games.split(","))
    ns = [int(n) for n in args.connections.split(",") if n]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ANTHROPIC_API_KEY": KEY,
        "NUMBA_NUM_THREADS": "1",
        "CONTRACTLANG_DP_CACHE": os.environ.get("CONTRACTLANG_DP_CACHE") or str(LOCAL / "dp"),
    }
    env.pop("ANTHROPIC_BASE_URL", None)
    plan = {n: per_n.get(n, 3 * n) for n in ns}
    faults = [f for f in args.faults.split(",") if f]
    shapes = [*plan.values(), *([args.fault_games] if faults else [])]

    def shape(games: int) -> tuple[int, int]:
        seeds = -(-games // (3 * min(args.max_contracts, SHIPPED_CONTRACTS)))
        return games // (3 * seeds), seeds

    load_before = os.getloadavg()[0]  # the machine is shared: the figures say how busy it was
    with tempfile.TemporaryDirectory(prefix="llm-scale-") as tmp:
        work = Path(tmp)
        widest = max((shape(g) for g in shapes), key=lambda s: s[0] * s[1])
        seeds_needed = max(shape(g)[1] for g in shapes)
        if not args.no_warm:
            print(
                f"solving the tables and rational games of {widest[0]} contracts × {seeds_needed} seed(s)",
                file=sys.stderr,
                flush=True,
            )
        warm_seconds = 0.0 if args.no_warm else warm(max(s[0] for s in map(shape, shapes)), seeds_needed, env, work)
        cases = {}
        for n, games in plan.items():
            contracts, seeds = shape(games)
            cases[f"N={n}"] = run_case(
                n,
                contracts,
                seeds,
                env,
                work,
                connections,
                args.delay,
                recordings_dir=args.recordings_dir,
                rational=args.rational,
            )
        fault_cases = {}
        for kind in faults:
            contracts, seeds = shape(args.fault_games)
            seconds = args.burst if kind == "burst429" else args.outage
            fault_cases[kind] = run_case(
                args.fault_n,
                contracts,
                seeds,
                env,
                work,
                connections,
                args.delay,
                Fault(kind, args.fault_at, seconds, 2.0 if kind == "burst429" else None),
                label=kind,
                recordings_dir=args.recordings_dir,
                rational=args.rational,
            )
    base = "N=10" if "N=10" in cases else next(iter(cases), None)
    payload = {
        "note": args.note
        or (
            f"{time.strftime('%Y-%m-%d')}: loopback Messages API answering in {args.delay:g} s, "
            f"`experiment performance --agent {AGENT} --role supplier` on the shipped synthetic "
            f"set; N = {'--max-connections' if connections else '--workers (before issue #47)'}; "
            + (
                "tables solved before (CONTRACTLANG_DP_CACHE), rational games "
                + ("copied into each run's store" if args.rational else "played by each run")
                if args.no_warm
                else f"tables solved first ({warm_seconds:.0f} s)"
            )
            + (f"; recordings in {args.recordings_dir}" if args.recordings_dir else "")
            + "."
        ),
        "agent": AGENT,
        "delay_seconds": args.delay,
        "model": "connections" if connections else "workers",
        "warm_seconds": round(warm_seconds, 1),
        "load_average_before_after": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "summary": {
            f"{name}.{k}": c[k]
            for name, c in cases.items()
            for k in ("in_flight_to_n", "pss_peak_mb", "rss_growth_100_to_1000", "wall_seconds")
        }
        | {f"{name}.completed": c.get("every_game_completed") for name, c in fault_cases.items()}
        | {
            f"{name}.limit_recovered": (c["limit"] or {}).get("lowered_then_recovered")
            for name, c in fault_cases.items()
        },
        "cases": cases,
        "ratios": ratios(cases, base) if base else {},
        "faults": fault_cases,
    }
    path = write_result(args.name, payload)
    path.with_suffix(".md").write_text(markdown(payload))
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print(f"-> {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
