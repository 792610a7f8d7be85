"""Benchmark: games per second of a ContractSim tournament (`cl.tournament`), against the batched rational engine
(`play_batch`) on the same contracts and seeds in the same run.

The field: RCC, RC, RE, random and two Python agents (bench/tournament_agents.py), each in both roles, so 36
pairings per contract × seed: on all 180 shipped contracts × 5 seeds, 32,400 games. DP tables come from the
cache (CONTRACTLANG_DP_CACHE, else .contractlang-cache): fill it first, the timing is of playing, not solving; a
first pass with one seed (untimed) solves what is missing. `--contracts GLOB` plays a slice (the result names
it). Without `--record` the result is tournament.partial.json.

The machine is shared, so beside the wall time the result holds the CPU seconds of this process and its workers
and the games per second they would give on two cores of their own (`cpu_games_per_second_2_cores`: the games
over half the CPU seconds), the load average before and after, and the time split between playing the games and
ranking them (the ratings' bootstrap runs after the last game).
Usage: PYTHONPATH=. python3 bench/tournament.py [--contracts GLOB] [--seeds 5] [--workers N] [--record]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_result  # noqa: E402

AGENTS = (
    "rcc",
    "rc",
    "re",
    "random",
    f"greedy=py:{ROOT / 'bench' / 'tournament_agents.py'}:Greedy",
    f"halfway=py:{ROOT / 'bench' / 'tournament_agents.py'}:Halfway",
)
RATIONAL = ("rc", "rcc", "re")


def batched(contracts: str | None, seeds: list[int]) -> tuple[int, float]:
    """Games and seconds of the nine rational pairings on every contract, all seeds in one batch each."""
    from contractlang.api.experiments import contract_slice, sliced_contracts, synthetic_set
    from games.contractsim.batch import play_batch
    from games.contractsim.environments import environment
    from solver.dp import TableCache

    tables = TableCache()
    chosen, _ = sliced_contracts(synthetic_set(None), contract_slice(contracts))
    for entry, ir in chosen:  # read the tables into memory and compile the engine first, as a warm worker has
        tables.solve(ir, environment(entry.env))
        play_batch(ir, environment(entry.env), "rcc", "rcc", seeds[:1], tables)
    start = time.perf_counter()
    games = 0
    for entry, ir in chosen:
        env = environment(entry.env)
        for c in RATIONAL:
            for s in RATIONAL:
                games += len(play_batch(ir, env, c, s, seeds, tables))
    return games, time.perf_counter() - start


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    import contractlang as cl

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", help="a glob of contract names (default: all 180)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--record", action="store_true", help="write tournament.json, not tournament.partial.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cl.tournament(list(AGENTS), contracts=args.contracts, seeds=1, out=Path(tmp) / "warm", workers=args.workers)
        load_before = os.getloadavg()[0]
        played: list[float] = []

        def progress(name, done, total, *note):
            if done == total and not played:
                played.append(time.perf_counter())

        start, cpu = time.perf_counter(), _cpu()
        result = cl.tournament(
            list(AGENTS),
            contracts=args.contracts,
            seeds=args.seeds,
            out=Path(tmp) / "run",
            workers=args.workers,
            progress=progress,
        )
        seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    games, batch_seconds = batched(args.contracts, list(range(args.seeds)))
    payload = {
        "contracts": args.contracts or "all",
        "seeds": args.seeds,
        "agents": len(AGENTS),
        "games": result.played,
        "seconds": round(seconds, 2),
        "seconds_playing": round(played[0] - start, 2) if played else None,
        "seconds_ranking": round(start + seconds - played[0], 2) if played else None,
        "cpu_seconds": round(cpu, 2),  # this process and its workers: the share of a loaded machine it had
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],  # before and after the timed run
        "games_per_second": round(result.played / seconds, 1),
        "cpu_games_per_second_2_cores": round(result.played / (cpu / 2), 1),
        "batched_rational": {
            "games": games,
            "seconds": round(batch_seconds, 3),
            "games_per_second": round(games / batch_seconds, 1),
        },
    }
    print(payload)
    print(write_result("tournament", payload, partial=not args.record))


if __name__ == "__main__":
    main()
