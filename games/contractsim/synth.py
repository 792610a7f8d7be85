"""Synthetic performance contracts (spec/contractsim.md §12): the base family by multi-start coordinate ascent
[CS-34], its contingency variants [CS-33], and the E14 check (§16.1).

A search point is the [CS-34] parametrisation: one delivery vector used in every production week, three unit
prices and six payments. Each is valued by the exact DP (P_sat and both players' RCC utilities, §9.5); the
valuations are memoised by the terms the DP reads and rounds are shared through `RoundMemo`, because most
coordinate moves change one payment (rounds after it are unchanged) or a price (which a contract without
payment deduction never reads).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from contractlang.files import FileError, read_capped, write_atomically
from contractlang.formatter import format_ir
from contractlang.ir import (Contingencies, ContractSimIR, DeductionTerms, RolloverTerms, SubstitutionTerms,
                             Triple)
from contractlang.render import render
from contractlang.vocab import Frozen
from games.contractsim.environments import environment
from games.runner import Progress, run_phase, stored_records
from solver.dp import RoundMemo, TableCache, Valuation, build_problem, evaluate
from solver.environment import SupplyEnvironment

RHOS = (0.9, 0.8, 0.7, 0.6, 0.5)
SEARCH_ENVS = (3, 4, 5, 6)
REUSED_TERMS = {1: 3, 2: 4}
"""§12.2: Env 1 performs Env 3's written terms and Env 2 Env 4's, re-solved under their own dynamics."""
STARTS = 20
START_SEED = 0
BAND = 0.05
STEPS = (1, -1, 5, -5)
MAX_PRICE = 200
TOLERANCE = 1e-9

Variant = Literal["base", "S", "RO", "S+RO", "S+PD", "S+PD+RO"]
VARIANTS: tuple[Variant, ...] = ("base", "S", "RO", "S+RO", "S+PD", "S+PD+RO")
"""The six retained contingency classes of [CS-33]; {PD} and {PD, RO} without substitution are excluded."""
EXCLUDED_VARIANTS = ("PD", "PD+RO")


def contingencies(variant: str) -> Contingencies:
    """The clauses of a variant with the §12 defaults (K = 2, minima {1,1,1}); grim trigger in every one."""
    parts = set() if variant == "base" else set(variant.split("+"))
    return Contingencies(substitution=SubstitutionTerms() if "S" in parts else None,
                         payment_deduction=DeductionTerms() if "PD" in parts else None,
                         rollover=RolloverTerms() if "RO" in parts else None, grim_trigger=True)


class Terms(Frozen):
    """One point of the [CS-34] search space (Catering dollars)."""

    quantities: Triple
    prices: Triple
    payments: tuple[int, int, int, int, int, int]

    def valid(self, budget: int) -> bool:
        q, m = self.quantities, self.payments
        return (all(1 <= x <= 10 for x in q) and q[0] + q[1] <= 10 and q[0] + q[2] <= 10
                and all(0 <= p <= MAX_PRICE for p in self.prices)
                and min(m) >= 0 and m[0] >= 1 and sum(m) <= budget)

    def contract(self, name: str, variant: str = "base") -> ContractSimIR:
        return ContractSimIR(name=name, setting="catering", parties=("Customer", "Caterer"), prices=self.prices,
                             deliveries=(self.quantities,) * 5, payments=self.payments,
                             contingencies=contingencies(variant))

    def coordinates(self) -> tuple[int, ...]:
        return self.quantities + self.prices + self.payments

    @classmethod
    def of(cls, values) -> Terms:
        v = tuple(int(x) for x in values)
        return cls(quantities=v[:3], prices=v[3:6], payments=v[6:])


def random_terms(rng: np.random.Generator, env: SupplyEnvironment) -> Terms:
    """A random start ([CS-34] fixes the search space, not the starts): quantities uniform over the box among
    those whose ingredients for five weeks at expected prices fit in the budget (no contract beyond that can
    be individually rational for both, since the Supplier's spend must be paid for), a payment total uniform
    between that ingredient cost and the smaller of the budget and the delivered value, spread at random
    over the six weeks with M_1 ≥ 1, and prices in the Customer's 4:2:1 ratio scaled so that the
    price-implied total is near the payment total (a start whose prices agree with its payments reads as a
    plausible contract)."""
    unit_cost = unit_ingredient_cost(env)
    while True:
        q = tuple(int(x) for x in rng.integers(1, 11, size=3))
        cost = 5 * float(np.dot(unit_cost, q))
        if q[0] + q[1] <= 10 and q[0] + q[2] <= 10 and cost <= env.budget:
            break
    value = 5 * int(np.dot(env.values, q))
    low, high = max(1, math.ceil(cost)), min(env.budget, value)
    total = int(rng.integers(low, high + 1)) if low <= high else int(rng.integers(1, env.budget + 1))
    payments = rng.multinomial(total - 1, [1 / 6] * 6)
    payments[0] += 1
    return Terms(quantities=q, prices=tied_prices(q, total), payments=tuple(int(m) for m in payments))


def tied_prices(quantities: Triple, total: int) -> Triple:
    """Integer prices in the Customer's 4:2:1 ratio whose five-week delivered value is nearest `total`, the
    payment total (each capped at MAX_PRICE)."""
    unit = total / (5 * (4 * quantities[0] + 2 * quantities[1] + quantities[2]))
    return tuple(min(MAX_PRICE, round(w * unit)) for w in (4, 2, 1))


def with_tied_prices(terms: Terms) -> Terms:
    """The generator rule that ties prices to payments at the end of a search ([CS-34a]): the search never keeps
    a price move (no base valuation reads prices), so the start's prices are reset against the final payments."""
    return terms.model_copy(update={"prices": tied_prices(terms.quantities, sum(terms.payments))})


def unit_ingredient_cost(env: SupplyEnvironment) -> np.ndarray:
    """Expected ingredient cost of one unit of each product (recipes of §2: A = I1+I2+I3, B = I1+I2, C = I3)."""
    e = [sum(price * prob for price, prob in law) for law in env.price_laws]
    return np.array([e[0] + e[1] + e[2], e[0] + e[1], e[2]])


MOVES = tuple((coordinate, step) for coordinate in range(12) for step in STEPS)
"""[CS-34]'s cyclic coordinate moves: ±1 and ±5 on q_A, q_B, q_C, p_A, p_B, p_C, M_1, …, M_11 in turn."""


def moved(terms: Terms, coordinate: int, step: int, budget: int) -> Terms | None:
    values = list(terms.coordinates())
    values[coordinate] += step
    candidate = Terms.of(values)
    return candidate if candidate.valid(budget) else None


class Evaluator:
    """Valuations of contracts in one environment, memoised by the terms the DP reads. `reuse=False` solves
    every request from scratch (the baseline of bench/synth.py)."""

    def __init__(self, env_id: int, reuse: bool = True):
        self.env = environment(env_id)
        self.reuse = reuse
        self.memo = RoundMemo() if reuse else None
        self._seen: dict[tuple, Valuation] = {}
        self.visited: dict[tuple, tuple[Terms, Valuation]] = {}  # base-family points asked for since `forget_visits`
        self.solves = 0

    def __call__(self, terms: Terms, variant: str = "base") -> Valuation:
        mode = contingencies(variant)
        # prices enter the DP only through deductions and the deduction-weighted production rule (§7.4, §9.2)
        prices = terms.prices if mode.payment_deduction is not None else None
        key = (terms.quantities, prices, terms.payments, variant)
        found = self._seen.get(key)
        if found is None:
            self.solves += 1
            cover = "tail" if self.reuse else "schedule"
            found = evaluate(build_problem(terms.contract("search", variant), self.env, cover), self.memo)
            if self.reuse:
                self._seen[key] = found
        if variant == "base":
            self.visited.setdefault(key, (terms, found))
        return found

    def forget_visits(self) -> None:
        self.visited = {}


SURROGATE = 0.01
"""Weight of completeness in the distance to the P_sat band: P_sat is flat (0 or 1) over wide regions, where
completeness (§14) still says which way satisfaction lies."""


def shortfall(v: Valuation, rho: float, budget: int) -> tuple[float, float]:
    """How far a valuation is from the constraints of eq. 19–20, (0, 0) when it satisfies them: first the
    distance to the P_sat band (nudged by completeness, see SURROGATE), then each role's utility below its
    disagreement payoff. Compared in that order, so that a move toward individual rationality never takes
    the search away from the band."""
    if v.p_sat < rho - BAND - TOLERANCE:
        band = rho - BAND - v.p_sat + SURROGATE * (1 - v.completeness)
    elif v.p_sat > rho + BAND + TOLERANCE:
        band = v.p_sat - rho - BAND + SURROGATE * v.completeness
    else:
        band = 0.0
    return band, max(0.0, budget - v.u_customer - TOLERANCE) + max(0.0, -v.u_supplier - TOLERANCE)


def objective(v: Valuation) -> float:
    """Eq. 18: U_Cust + U_Supp."""
    return v.u_customer + v.u_supplier


def feasible(v: Valuation, rho: float, budget: int) -> bool:
    return shortfall(v, rho, budget) == (0.0, 0.0)


def better(new: Valuation, old: Valuation, rho: float, budget: int) -> bool:
    """A move is kept when it brings an infeasible point closer to the constraints, or, once feasible,
    stays feasible and raises the objective (ties are not moves)."""
    s_new, s_old = shortfall(new, rho, budget), shortfall(old, rho, budget)
    if s_old != (0.0, 0.0):
        return s_new[0] < s_old[0] - 1e-12 or (abs(s_new[0] - s_old[0]) <= 1e-12 and s_new[1] < s_old[1] - 1e-9)
    return s_new == (0.0, 0.0) and objective(new) > objective(old) + TOLERANCE


class Ascent(Frozen):
    """The end of one coordinate ascent."""

    terms: Terms
    valuation: Valuation
    feasible: bool
    passes: int
    moves: int


def coordinate_ascent(evaluate_terms: Evaluator, start: Terms, rho: float) -> Ascent:
    """Cyclic coordinate ascent from `start` until a full pass keeps no move [CS-34]."""
    budget = evaluate_terms.env.budget
    current, value = start, evaluate_terms(start)
    passes = moves = 0
    improved = True
    while improved:
        improved = False
        passes += 1
        for coordinate, step in MOVES:
            candidate = moved(current, coordinate, step, budget)
            if candidate is None:
                continue
            v = evaluate_terms(candidate)
            if better(v, value, rho, budget):
                current, value, improved = candidate, v, True
                moves += 1
    return Ascent(terms=current, valuation=value, feasible=feasible(value, rho, budget), passes=passes,
                  moves=moves)


def starts(env: SupplyEnvironment, count: int = STARTS, seed: int = START_SEED) -> list[Terms]:
    """The random starts of one environment: one generator seeded once ([CS-34]: seed 0)."""
    rng = np.random.default_rng(seed)
    return [random_terms(rng, env) for _ in range(count)]


# --- the generation as jobs ----------------------------------------------------------------------------------

class SynthPlan(Frozen):
    """What a generation covers: the paper's by default; smaller plans are for trials and tests."""

    starts: int = STARTS
    search_envs: tuple[int, ...] = SEARCH_ENVS
    rhos: tuple[float, ...] = RHOS
    seed: int = START_SEED

    def search_jobs(self) -> list[SearchJob]:
        return [SearchJob(env=e, start=k, rhos=self.rhos, starts_seed=self.seed) for e in self.search_envs
                for k in range(self.starts)]

    def terms_env(self, env_id: int) -> int | None:
        """The environment whose search writes `env_id`'s terms (§12.2), None when the plan has none."""
        if env_id in self.search_envs:
            return env_id
        source = REUSED_TERMS.get(env_id)
        return source if source in self.search_envs else None

    @property
    def envs(self) -> tuple[int, ...]:
        return tuple(e for e in range(1, 7) if self.terms_env(e) is not None)


class SearchJob(Frozen):
    """Every target ρ from one random start in one environment: the ascents share one evaluator, since
    the valuations do not depend on ρ (and a start's first pass is the same for all targets)."""

    env: int
    start: int
    rhos: tuple[float, ...] = RHOS
    starts_seed: int = START_SEED


class AscentRecord(Frozen):
    rho: float
    terms: Terms
    valuation: Valuation
    feasible: bool
    passes: int
    moves: int


class Valued(Frozen):
    """A base-family point the search valued exactly; the pool the Pareto frontiers are drawn from."""

    terms: Terms
    valuation: Valuation


class SearchRecord(Frozen):
    job: SearchJob
    start_terms: Terms
    ascents: tuple[AscentRecord, ...]
    valued: tuple[Valued, ...]  # every point this job's ascents valued (whether solved here or remembered)


@lru_cache(maxsize=None)
def _evaluator(env_id: int) -> Evaluator:
    """One evaluator per environment and process: jobs of the same environment that land in one worker
    share its memo (a cache only; every valuation is the exact DP's)."""
    return Evaluator(env_id)


def run_search(job: SearchJob, evaluator: Evaluator | None = None) -> SearchRecord:
    """One search job, by default with this process's evaluator of its environment."""
    evaluator = _evaluator(job.env) if evaluator is None else evaluator
    evaluator.forget_visits()
    start = starts(evaluator.env, job.start + 1, job.starts_seed)[job.start]
    ascents = []
    for rho in job.rhos:
        a = coordinate_ascent(evaluator, start, rho)
        ascents.append(AscentRecord(rho=rho, terms=a.terms, valuation=a.valuation, feasible=a.feasible,
                                    passes=a.passes, moves=a.moves))
    valued = tuple(Valued(terms=t, valuation=v) for t, v in evaluator.visited.values())
    return SearchRecord(job=job, start_terms=start, ascents=tuple(ascents), valued=valued)


class BaseChoice(Frozen):
    """The base contract of one (environment, ρ): the best feasible ascent end over the starts [CS-34]
    (ties: the lower start), or None when no start reached the constraints."""

    env: int
    rho: float
    terms_env: int  # the environment whose search wrote the terms (§12.2)
    start: int | None
    terms: Terms | None
    feasible_starts: int


def choose_bases(records: list[SearchRecord], plan: SynthPlan) -> list[BaseChoice]:
    by_env: dict[int, list[SearchRecord]] = {}
    for r in sorted(records, key=lambda r: (r.job.env, r.job.start)):
        by_env.setdefault(r.job.env, []).append(r)
    out = []
    for env_id in plan.envs:
        source = plan.terms_env(env_id)
        for i, rho in enumerate(plan.rhos):
            ends = [(r.job.start, r.ascents[i]) for r in by_env.get(source, []) if r.ascents[i].feasible]
            best = max(ends, key=lambda e: (objective(e[1].valuation), -e[0]), default=None)
            out.append(BaseChoice(env=env_id, rho=rho, terms_env=source, start=None if best is None else best[0],
                                  terms=None if best is None else best[1].terms, feasible_starts=len(ends)))
    return out


ALL_VARIANTS = VARIANTS + EXCLUDED_VARIANTS


def contract_name(env_id: int, rho: float, variant: str) -> str:
    """One name per (environment, ρ, variant): ρ in Python's shortest form, so 0.9 and 0.95 stay apart."""
    return f"synth-env{env_id}-rho{rho}-{variant.lower().replace('+', '-')}"


class SolveJob(Frozen):
    """One variant of one base contract, solved afresh under its environment (§12.5)."""

    env: int
    rho: float
    variant: str
    terms: Terms

    @property
    def name(self) -> str:
        return contract_name(self.env, self.rho, self.variant)

    def contract(self) -> ContractSimIR:
        return self.terms.contract(self.name, self.variant)


class SolveRecord(Frozen):
    job: SolveJob
    p_sat: float
    u_customer: float
    u_supplier: float
    completeness: float

    @property
    def mutually_beneficial(self) -> bool:
        """MB(ω) of §13 with ε_num = 1e-9: both expected gains ≥ −ε_num."""
        budget = environment(self.job.env).budget
        return self.u_customer - budget >= -TOLERANCE and self.u_supplier >= -TOLERANCE


def run_solve(job: SolveJob, tables: TableCache | None = None) -> SolveRecord:
    """Solve through the on-disk table cache, so that the experiments that play these contracts read the
    same tables instead of solving them again."""
    result, _, _ = (tables or TableCache()).solve(job.contract(), environment(job.env))
    return SolveRecord(job=job, p_sat=result.p_sat, u_customer=result.u_customer, u_supplier=result.u_supplier,
                       completeness=result.completeness)


def solve_jobs(bases: list[BaseChoice]) -> list[SolveJob]:
    return [SolveJob(env=b.env, rho=b.rho, variant=v, terms=b.terms) for b in bases if b.terms is not None
            for v in ALL_VARIANTS]


class ManifestEntry(Frozen):
    """One written contract and its exact figures (money in Catering dollars)."""

    name: str
    env: int
    rho: float
    variant: str
    terms_env: int
    path: str
    prose: str
    p_sat: float
    u_customer: float
    u_supplier: float
    completeness: float
    mutually_beneficial: bool


class E14Row(Frozen):
    """§16.1 E14 for one base contract: |P_sat − ρ| ≤ 0.05 and individual rationality."""

    env: int
    rho: float
    found: bool
    p_sat: float | None
    u_customer: float | None
    u_supplier: float | None
    in_band: bool
    individually_rational: bool
    feasible_starts: int

    @property
    def holds(self) -> bool:
        return self.found and self.in_band and self.individually_rational


class Manifest(Frozen):
    plan: SynthPlan
    contracts: tuple[ManifestEntry, ...]
    excluded: tuple[ManifestEntry, ...]  # the {PD} and {PD, RO} classes, solved to report how many fail MB
    e14: tuple[E14Row, ...]

    @property
    def e14_holds(self) -> int:
        return sum(r.holds for r in self.e14)


def _entry(record: SolveRecord, terms_env: int, path: str, prose: str) -> ManifestEntry:
    j = record.job
    return ManifestEntry(name=j.name, env=j.env, rho=j.rho, variant=j.variant, terms_env=terms_env, path=path,
                         prose=prose, p_sat=record.p_sat, u_customer=record.u_customer,
                         u_supplier=record.u_supplier, completeness=record.completeness,
                         mutually_beneficial=record.mutually_beneficial)


def e14_row(base: BaseChoice, record: SolveRecord | None) -> E14Row:
    budget = environment(base.env).budget
    if record is None:
        return E14Row(env=base.env, rho=base.rho, found=False, p_sat=None, u_customer=None, u_supplier=None,
                      in_band=False, individually_rational=False, feasible_starts=base.feasible_starts)
    return E14Row(env=base.env, rho=base.rho, found=True, p_sat=record.p_sat, u_customer=record.u_customer,
                  u_supplier=record.u_supplier, in_band=abs(record.p_sat - base.rho) <= BAND + TOLERANCE,
                  individually_rational=record.u_customer >= budget - TOLERANCE
                  and record.u_supplier >= -TOLERANCE, feasible_starts=base.feasible_starts)


PROSE_ADAPTERS = {5: ("hotel", "ai-hosting")}
"""§12.6: the cross-setting experiment runs Env 5's contracts in Hotel Cleaning and AI Hosting too."""


def write_outputs(out: Path, bases: list[BaseChoice], solved: dict[SolveJob, SolveRecord], plan: SynthPlan) -> Manifest:
    """The contract files, their prose and manifest.json, each written whole (write_atomically) and in a fixed
    order from the finished records, so equal records give equal bytes however the jobs were scheduled."""
    kept, excluded, e14 = [], [], []
    for base in bases:
        record_of = {j.variant: r for j, r in solved.items() if (j.env, j.rho) == (base.env, base.rho)}
        if base.env == base.terms_env:  # E14 speaks of the searched bases; Envs 1–2 only reuse their terms
            e14.append(e14_row(base, record_of.get("base")))
        for variant in ALL_VARIANTS:
            record = record_of.get(variant)
            if record is None:
                continue
            name = record.job.name
            if variant in EXCLUDED_VARIANTS:
                excluded.append(_entry(record, base.terms_env, "", ""))
                continue
            folder = out / "contracts" / name
            folder.mkdir(parents=True, exist_ok=True)
            ir = record.job.contract()
            write_atomically(folder / "contract.contract", format_ir(ir))
            write_atomically(folder / "contract.txt", render(ir) + "\n")
            for setting in PROSE_ADAPTERS.get(base.env, ()):
                write_atomically(folder / f"contract.{setting}.txt", render(ir, setting=setting) + "\n")
            kept.append(_entry(record, base.terms_env, f"contracts/{name}/contract.contract",
                               f"contracts/{name}/contract.txt"))
    manifest = Manifest(plan=plan, contracts=tuple(kept), excluded=tuple(excluded), e14=tuple(e14))
    write_atomically(out / "manifest.json", manifest.model_dump_json(indent=1) + "\n")
    return manifest


SHIPPED = Path(__file__).resolve().parent / "data" / "synthetic"
"""The paper's plan (20 starts, [CS-34]) generated into the repository; the directory commands take by default.
Its job store is committed as it grows, so the generation resumes across sessions."""


def is_shipped(out: Path) -> bool:
    return out.resolve() == SHIPPED.resolve()


def searches_done(out: Path, plan: SynthPlan) -> int:
    """How many of the plan's search jobs are in `out`'s store."""
    done = stored_records(out / "jobs" / "search.jsonl", SearchRecord, lambda r: r.job, "search")
    return sum(job in done for job in plan.search_jobs())


def read_manifest(out: Path) -> Manifest:
    """The manifest `synth` wrote into `out`, as one error line when it is missing or not ours."""
    path = out / "manifest.json"
    if out.exists() and not out.is_dir():
        raise FileError(f"{out}: a file, not a directory; give the directory `contractlang synth --out` wrote")
    try:
        return Manifest.model_validate_json(read_capped(path), strict=True)
    except FileError:
        if is_shipped(out):
            plan = SynthPlan()
            raise FileError(f"{path}: the shipped synthetic set is incomplete here "
                            f"({searches_done(out, plan)} of {len(plan.search_jobs())} search jobs done); "
                            "`contractlang synth` completes it, or give a directory `synth --out` wrote") from None
        raise FileError(f"{path}: no manifest there; run `contractlang synth --out {out}` first") from None
    except ValueError as exc:
        raise FileError(f"{path}: not a manifest written by `contractlang synth` ({str(exc).splitlines()[0]})") from None


class SynthRun(Frozen):
    manifest: Manifest
    searched: int  # search jobs run now (the rest were in the store)
    solved: int


def synthesize(out: Path, plan: SynthPlan = SynthPlan(), workers: int | None = None,
               ray_address: str | None = None, progress: Progress | None = None) -> SynthRun:
    """§12 end to end, resumable: the searches and the variant solves are jobs whose records go to
    `out/jobs/*.jsonl` as they finish; a rerun runs only the missing ones and writes the same outputs. The
    shipped set takes the paper's plan only, so that no trial's jobs or outputs land in the repository's."""
    if is_shipped(out) and plan != SynthPlan():
        raise FileError(f"{out}: the shipped synthetic set is the paper's plan (20 starts, Envs 3-6, ρ 0.9-0.5); "
                        "give --out for another plan")
    search_jobs = plan.search_jobs()
    searches, searched = run_phase("search", out / "jobs" / "search.jsonl", SearchRecord, run_search, search_jobs,
                                   workers, ray_address, progress)
    bases = choose_bases([searches[j] for j in search_jobs], plan)
    variant_jobs = solve_jobs(bases)
    solves, solved = run_phase("solve", out / "jobs" / "solve.jsonl", SolveRecord, run_solve, variant_jobs,
                               workers, ray_address, progress)
    manifest = write_outputs(out, bases, {j: solves[j] for j in variant_jobs}, plan)
    return SynthRun(manifest=manifest, searched=searched, solved=solved)


def search_records(out: Path, plan: SynthPlan, envs: tuple[int, ...] | None = None) -> list[SearchRecord]:
    """The finished searches of a `synth` directory, all of them or those of the search environments `envs`;
    one error line when any of those is not in its store. Read without the store's lock, so that a generation
    still running into the directory (for other environments) does not stop it."""
    path = out / "jobs" / "search.jsonl"
    stored = stored_records(path, SearchRecord, lambda r: r.job, "search")
    jobs = [j for j in plan.search_jobs() if envs is None or j.env in envs]
    missing = [j for j in jobs if j not in stored]
    which = "" if envs is None else f" of Env{'s' if len(envs) > 1 else ''} {', '.join(map(str, envs))}"
    if missing and is_shipped(out):
        raise FileError(f"{path}: the shipped set's search store is incomplete here "
                        f"({len(jobs) - len(missing)} of {len(jobs)} search jobs{which} done); `contractlang synth` "
                        "completes it, or give a directory `synth --out` wrote")
    if missing:
        raise FileError(f"{path}: {len(missing)} searches{which} of the manifest's are missing; rerun "
                        f"`contractlang synth --out {out}` with the same options")
    return [stored[j] for j in jobs]
