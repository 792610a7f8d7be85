"""Issue #46: which floor rule set ([CS-14a]) and which price rule ([CS-34a]) reproduce the ContractSim paper best.

The base searches read no floor and no price (their contracts are grim-only), so each combination reuses the
shipped searches and reruns only what it changes: the variant solves (the 240 contracts of the 30 bases, with the
excluded PD and PD+RO classes) and the nine rational games of each retained contract. A contract whose terms and
effective floors equal the shipped one's keeps the shipped records (the rule sets only differ where
`RoundRules.floor_min` differs). Everything lands in a scratch directory (never the shipped set), in job stores,
so an interrupted run resumes; one JSON per combination holds its screening count and its Tables 7–10 cells
classified against the paper's (`games/experiments/data/paper_performance.json`).

Usage: python3 bench/fidelity.py [--out DIR] [--combo NAME]...   (default: every combination, most telling first)
       python3 bench/fidelity.py --out DIR --report                (the Markdown table of the finished combinations)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contractlang.interpreter.rounds import FLOOR_RULES, RoundRules
from contractlang.vocab import Frozen
from games.contractsim.batch import play_batch
from games.contractsim.environments import environment
from games.experiments.paper import paper_tables
from games.experiments.performance import parse_cell
from games.experiments.rational import (
    PAIRINGS,
    RationalJob,
    RationalRecord,
    row_cells,
    tables,
)
from games.experiments.synth import (
    EXCLUDED_VARIANTS,
    SHIPPED,
    VARIANTS,
    SolveJob,
    SolveRecord,
    SynthPlan,
    choose_bases,
    search_records,
    solve_jobs,
    with_tied_prices,
)
from games.runner import run_phase, stored_records
from solver.dp import TableCache

COMBOS = {
    "cs14": ("cs14", False),
    "a": ("no-deduction-floor", False),
    "a+b": ("no-deduction-floor+rollover-lifts-floors", False),
    "b": ("rollover-lifts-floors", False),
    "tied": ("cs14", True),
    "a+b+tied": ("no-deduction-floor+rollover-lifts-floors", True),
    "a+tied": ("no-deduction-floor", True),
}
"""Combination name → (floor rule set, prices tied to payments): the issue's most telling first, then those that
reuse their tables (`b` solves nothing `a+b` has not)."""
DEFAULT_OUT = Path("/tmp/fidelity")


class FidelitySolveJob(Frozen):
    combo: str
    solve: SolveJob


class FidelitySolveRecord(Frozen):
    job: FidelitySolveJob
    record: SolveRecord


class FidelityGameJob(Frozen):
    combo: str
    rational: RationalJob


class FidelityGameRecord(Frozen):
    job: FidelityGameJob
    record: RationalRecord


def _env(env_id: int, combo: str):
    return environment(env_id).model_copy(update={"floors": FLOOR_RULES[COMBOS[combo][0]]})


def _tables(out: Path) -> TableCache:
    return TableCache(out / "dp")


def run_solve(job: FidelitySolveJob, out: Path = DEFAULT_OUT) -> FidelitySolveRecord:
    result, _, _ = _tables(out).solve(job.solve.contract(), _env(job.solve.env, job.combo))
    return FidelitySolveRecord(
        job=job,
        record=SolveRecord(
            job=job.solve,
            p_sat=result.p_sat,
            u_customer=result.u_customer,
            u_supplier=result.u_supplier,
            completeness=result.completeness,
        ),
    )


def run_games(job: FidelityGameJob, out: Path = DEFAULT_OUT) -> FidelityGameRecord:
    r = job.rational
    env, cache = _env(r.env, job.combo), _tables(out)
    runs = tuple(play_batch(r.contract, env, c, s, [r.seed], cache)[0] for c, s in PAIRINGS)
    return FidelityGameRecord(job=job, record=RationalRecord(job=r, runs=runs))


def _unchanged(solve: SolveJob, shipped: SolveJob | None, combo: str) -> bool:
    """The shipped record holds: the same terms (prices aside in a contract without deduction, the only clause
    that reads them, ContractSim paper, App. C.1), and the rule set floors the same minimums as [CS-14] here."""
    if shipped is None:
        return False
    base = solve.contract().base_units()
    reads_prices = base.contingencies.payment_deduction is not None
    terms = solve.terms if reads_prices else solve.terms.model_copy(update={"prices": shipped.terms.prices})
    if shipped.terms != terms:
        return False
    return RoundRules.from_ir(base, FLOOR_RULES[COMBOS[combo][0]]).floor_min == RoundRules.from_ir(base).floor_min


class Work:
    """Picklable job functions bound to the scratch directory (the worker processes fork from here)."""

    def __init__(self, out: Path):
        self.out = out

    def solve(self, job: FidelitySolveJob) -> FidelitySolveRecord:
        return run_solve(job, self.out)

    def games(self, job: FidelityGameJob) -> FidelityGameRecord:
        return run_games(job, self.out)


def evaluate(combo: str, out: Path, workers: int, screen_only: bool = False) -> dict:
    """One combination end to end (resumable): solves, screening, games, Tables 7–10 against the paper; with
    `screen_only` just the excluded PD and PD+RO classes' solves and their mutual-benefit count."""
    started = time.time()
    plan = SynthPlan()
    floors, tied = COMBOS[combo]
    bases = choose_bases(search_records(SHIPPED, plan), plan)
    if tied:
        bases = [b if b.terms is None else b.model_copy(update={"terms": with_tied_prices(b.terms)}) for b in bases]
    shipped_solves = {
        r.job.name: r
        for r in stored_records(SHIPPED / "jobs" / "solve.jsonl", SolveRecord, lambda r: r.job, "solve").values()
    }
    shipped_games = {
        r.job.contract.name: r
        for r in stored_records(SHIPPED / "jobs" / "rational.jsonl", RationalRecord, lambda r: r.job, "games").values()
    }
    work = Work(out)
    solves: dict[str, SolveRecord] = {}
    todo, jobs = [], solve_jobs(bases)
    for job in jobs:
        if screen_only and job.variant not in EXCLUDED_VARIANTS:
            continue
        shipped = shipped_solves.get(job.name)
        if _unchanged(job, shipped.job if shipped else None, combo):
            solves[job.name] = shipped
        else:
            todo.append(FidelitySolveJob(combo=combo, solve=job))
    done, solved_now = run_phase(
        f"{combo} solves", out / "jobs" / "solve.jsonl", FidelitySolveRecord, work.solve, todo, workers
    )
    solves.update({j.solve.name: done[j].record for j in todo})
    records, games_todo = {}, []
    for name, s in solves.items():
        if screen_only or s.job.variant not in VARIANTS:
            continue
        shipped = shipped_games.get(name)
        if name not in {j.solve.name for j in todo} and shipped is not None:
            records[name] = shipped
        else:
            games_todo.append(
                FidelityGameJob(combo=combo, rational=RationalJob(contract=s.job.contract(), env=s.job.env))
            )
    played, games_now = run_phase(
        f"{combo} games", out / "jobs" / "games.jsonl", FidelityGameRecord, work.games, games_todo, workers
    )
    records.update({j.rational.contract.name: played[j].record for j in games_todo})
    ordered = [records[k] for k in sorted(records)]
    not_mb = {
        v: sum(1 for s in solves.values() if s.job.variant == v and not s.mutually_beneficial)
        for v in (*VARIANTS, *EXCLUDED_VARIANTS)
    }
    result = {
        "combo": combo,
        "floors": floors,
        "tied_prices": tied,
        "screen_only": screen_only,
        "solved_now": solved_now,
        "games_jobs_now": games_now,
        "changed_contracts": len(todo),
        "contracts": len(ordered),
        "not_mutually_beneficial": not_mb,
        "not_mutually_beneficial_pd_pdro": not_mb["PD"] + not_mb["PD+RO"],
        "prices_agree": sum(1 for j in jobs if j.variant in VARIANTS and _price_total(j) == sum(j.terms.payments)),
        "conventions": {} if screen_only else {c: compare(ordered, c) for c in ("cs19", "paper-tables")},
        "seconds": round(time.time() - started, 1),
    }
    path = out / "results" / f"{combo}{'.screen' if screen_only else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(path)
    return result


def _price_total(job: SolveJob) -> int:
    return sum(p * q for p, q in zip(job.terms.prices, job.terms.quantities)) * 5


def classify(ours: str, theirs: list | None, n: int) -> str:
    """equal (the same printed value), 2se (|Δ| ≤ 2·SE, SE = √(s₁²/n + s₂²/n)), 1sd (|Δ| ≤ the larger
    SD), far; undef when one side prints a rate the other leaves undefined ('–': no eligible week in any case)."""
    mine = parse_cell(ours)
    if mine is None or theirs is None:
        return "equal" if mine is None and theirs is None else "undef"
    (m, s), (pm, ps) = mine, theirs
    delta = abs(round(m, 1) - pm)
    if delta < 0.05 + 1e-9:
        return "equal"
    if delta <= 2 * math.sqrt((s * s + ps * ps) / max(n, 1)) + 1e-9:
        return "2se"
    return "1sd" if delta <= max(s, ps) + 1e-9 else "far"


def compare(records: list[RationalRecord], convention: str) -> dict:
    """Per paper table (7–10), how many of its 99 rational cells ours reproduce, by class."""
    rows = {(r.role, r.counterparty, r.policy): r for r in tables(records, convention)}
    out = {}
    for table in paper_tables():
        counts = {"equal": 0, "2se": 0, "1sd": 0, "far": 0, "undef": 0}
        far = []
        for prow in table.rows:
            if not prow.rational:
                continue
            ours = rows[(table.role, prow.counterparty, prow.agent)]
            cells = row_cells(ours.summary, table.aggregation == "micro")
            for col, mine, theirs in zip(table.columns, cells, prow.cells):
                verdict = classify(mine, None if theirs is None else list(theirs), ours.summary.runs)
                counts[verdict] += 1
                if verdict in ("far", "undef"):
                    far.append(f"{prow.counterparty}/{prow.agent} {col}: {mine} vs {theirs}")
        out[f"table{table.table}"] = {**counts, "far_cells": far}
    return out


def report(out: Path) -> str:
    lines = [
        (
            "| combination | floors | prices tied | PD, PD+RO not MB (paper 46) | prices agree (of 180) | "
            "T7 eq/2SE/1SD/far/undef | T8 | T9 | T10 | convention |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for combo in COMBOS:
        path = out / "results" / f"{combo}.json"
        screen = path.with_name(f"{combo}.screen.json")
        if not path.exists() and screen.exists():
            r = json.loads(screen.read_text())
            lines.append(
                f"| {combo} | {r['floors']} | {'yes' if r['tied_prices'] else 'no'} | "
                f"{r['not_mutually_beneficial_pd_pdro']} | {r['prices_agree']} | not run | | | | |"
            )
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        for conv, tabs in r["conventions"].items():
            cells = [f"{t['equal']}/{t['2se']}/{t['1sd']}/{t['far']}/{t['undef']}" for t in tabs.values()]
            lines.append(
                f"| {combo} | {r['floors']} | {'yes' if r['tied_prices'] else 'no'} | "
                f"{r['not_mutually_beneficial_pd_pdro']} | {r['prices_agree']} | {' | '.join(cells)} | "
                f"{conv} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--combo", action="append", choices=tuple(COMBOS))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--screen-only", action="store_true", help="solve only the PD and PD+RO classes")
    args = parser.parse_args()
    if args.out.resolve() == SHIPPED.resolve() or SHIPPED.resolve() in args.out.resolve().parents:
        parser.error("--out must be a scratch directory, not the shipped set")
    if args.report:
        print(report(args.out))
        return
    for combo in args.combo or list(COMBOS):
        r = evaluate(combo, args.out, args.workers, args.screen_only)
        print(json.dumps({k: v for k, v in r.items() if k != "conventions"}), flush=True)
        for conv, tabs in r["conventions"].items():
            print(conv, {t: {k: v for k, v in c.items() if k != "far_cells"} for t, c in tabs.items()}, flush=True)


if __name__ == "__main__":
    main()
