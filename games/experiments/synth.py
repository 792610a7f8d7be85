"""Synthetic performance contracts (ContractSim paper, App. C.4): the base family by multi-start coordinate ascent
[CS-34], its contingency variants [CS-33], and the E14 check (the identities of docs/rules/checks.md).

A search point is the [CS-34] parametrisation: one delivery vector used in every production week, three unit
prices and six payments. Each is valued by the exact DP (P_sat and both players' RCC utilities, ContractSim paper, App. C.1); the
valuations are memoised by the terms the DP reads and rounds are shared through `RoundMemo`, because most
coordinate moves change one payment (rounds after it are unchanged) or a price (which a contract without
payment deduction never reads).
"""

from __future__ import annotations

import hashlib
import math
from functools import cache
from pathlib import Path
from typing import Literal

import numpy as np

from contractlang.files import MAX_CONTRACT_BYTES, FileError, make_folder, read_capped, write_atomically
from contractlang.formatter import format_ir
from contractlang.ir import Contingencies, ContractSimIR, DeductionTerms, RolloverTerms, SubstitutionTerms, Triple
from contractlang.render import render
from contractlang.source import check_source
from contractlang.vocab import Frozen
from games.contractsim.environments import environment
from games.runner import Progress, run_phase, shared_store, stored_records
from solver.dp import RoundMemo, TableCache, Valuation, build_problem, evaluate
from solver.environment import SupplyEnvironment

RHOS = (0.9, 0.8, 0.7, 0.6, 0.5)
SEARCH_ENVS = (3, 4, 5, 6)
REUSED_TERMS = {1: 3, 2: 4}
"""ContractSim paper, App. C.4: Env 1 performs Env 3's written terms and Env 2 Env 4's, re-solved under their own dynamics."""
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
    """The clauses of a variant with the ContractSim paper, App. C.4 defaults (K = 2, minima {1,1,1}); grim trigger in every one."""
    parts = set() if variant == "base" else set(variant.split("+"))
    return Contingencies(
        substitution=SubstitutionTerms() if "S" in parts else None,
        payment_deduction=DeductionTerms() if "PD" in parts else None,
        rollover=RolloverTerms() if "RO" in parts else None,
        grim_trigger=True,
    )


class Terms(Frozen):
    """One point of the [CS-34] search space (Catering dollars)."""

    quantities: Triple
    prices: Triple
    payments: tuple[int, int, int, int, int, int]

    def valid(self, budget: int) -> bool:
        q, m = self.quantities, self.payments
        return (
            all(1 <= x <= 10 for x in q)
            and q[0] + q[1] <= 10
            and q[0] + q[2] <= 10
            and all(0 <= p <= MAX_PRICE for p in self.prices)
            and min(m) >= 0
            and m[0] >= 1
            and sum(m) <= budget
        )

    def contract(self, name: str, variant: str = "base") -> ContractSimIR:
        return ContractSimIR(
            name=name,
            setting="catering",
            parties=("Customer", "Caterer"),
            prices=self.prices,
            deliveries=(self.quantities,) * 5,
            payments=self.payments,
            contingencies=contingencies(variant),
        )

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
    """Expected ingredient cost of one unit of each product (recipes of ContractSim paper, App. A.1–A.2: A = I1+I2+I3, B = I1+I2, C = I3)."""
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
        # prices enter the DP only through deductions and the deduction-weighted production rule (ContractSim paper, App. C.1)
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
completeness (ContractSim paper, App. C.5) still says which way satisfaction lies."""


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
    return Ascent(terms=current, valuation=value, feasible=feasible(value, rho, budget), passes=passes, moves=moves)


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
        return [
            SearchJob(env=e, start=k, rhos=self.rhos, starts_seed=self.seed)
            for e in self.search_envs
            for k in range(self.starts)
        ]

    def terms_env(self, env_id: int) -> int | None:
        """The environment whose search writes `env_id`'s terms (ContractSim paper, App. C.4), None when the plan has none."""
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


@cache
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
        ascents.append(
            AscentRecord(
                rho=rho, terms=a.terms, valuation=a.valuation, feasible=a.feasible, passes=a.passes, moves=a.moves
            )
        )
    valued = tuple(Valued(terms=t, valuation=v) for t, v in evaluator.visited.values())
    return SearchRecord(job=job, start_terms=start, ascents=tuple(ascents), valued=valued)


class BaseChoice(Frozen):
    """The base contract of one (environment, ρ): the best feasible ascent end over the starts [CS-34]
    (ties: the lower start), or None when no start reached the constraints."""

    env: int
    rho: float
    terms_env: int  # the environment whose search wrote the terms (ContractSim paper, App. C.4)
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
            out.append(
                BaseChoice(
                    env=env_id,
                    rho=rho,
                    terms_env=source,
                    start=None if best is None else best[0],
                    terms=None if best is None else best[1].terms,
                    feasible_starts=len(ends),
                )
            )
    return out


ALL_VARIANTS = VARIANTS + EXCLUDED_VARIANTS


def contract_name(env_id: int, rho: float, variant: str) -> str:
    """One name per (environment, ρ, variant): ρ in Python's shortest form, so 0.9 and 0.95 stay apart."""
    return f"synth-env{env_id}-rho{rho}-{variant.lower().replace('+', '-')}"


class SolveJob(Frozen):
    """One variant of one base contract, solved afresh under its environment (ContractSim paper, App. C.4)."""

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
        """MB(ω) of ContractSim paper, App. C.5 with ε_num = 1e-9: both expected gains ≥ −ε_num."""
        budget = environment(self.job.env).budget
        return self.u_customer - budget >= -TOLERANCE and self.u_supplier >= -TOLERANCE


def run_solve(job: SolveJob, tables: TableCache | None = None) -> SolveRecord:
    """Solve through the on-disk table cache, so that the experiments that play these contracts read the
    same tables instead of solving them again."""
    result, _, _ = (tables or TableCache()).solve(job.contract(), environment(job.env))
    return SolveRecord(
        job=job,
        p_sat=result.p_sat,
        u_customer=result.u_customer,
        u_supplier=result.u_supplier,
        completeness=result.completeness,
    )


def solve_jobs(bases: list[BaseChoice]) -> list[SolveJob]:
    return [
        SolveJob(env=b.env, rho=b.rho, variant=v, terms=b.terms)
        for b in bases
        if b.terms is not None
        for v in ALL_VARIANTS
    ]


class ManifestEntry(Frozen):
    """One written contract and its exact figures (money in Catering dollars)."""

    name: str
    env: int
    rho: float
    variant: str
    terms_env: int
    path: str  # inside the set, always contracts/NAME/contract.contract ("" for an excluded class)
    sha256: str  # of the contract file's bytes, checked on load ("" for an excluded class)
    prose: str
    p_sat: float
    u_customer: float
    u_supplier: float
    completeness: float
    mutually_beneficial: bool


class E14Row(Frozen):
    """identity E14 of docs/rules/checks.md for one base contract: |P_sat − ρ| ≤ 0.05 and individual rationality."""

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
    digest: str = ""  # SHA-256 of the fields above as written (`content_digest`): a hand edit shows on load

    def content_digest(self) -> str:
        return hashlib.sha256(self.model_dump_json(exclude={"digest"}).encode()).hexdigest()

    def sealed(self) -> Manifest:
        return self.model_copy(update={"digest": self.content_digest()})

    @property
    def e14_holds(self) -> int:
        return sum(r.holds for r in self.e14)


def _entry(record: SolveRecord, terms_env: int, source: str | None) -> ManifestEntry:
    """The manifest line of a solved variant; `source` is its contract file's text, None for an excluded class."""
    j = record.job
    path, prose = _paths(j.name) if source is not None else ("", "")
    sha256 = "" if source is None else hashlib.sha256(source.encode()).hexdigest()
    return ManifestEntry(
        name=j.name,
        env=j.env,
        rho=j.rho,
        variant=j.variant,
        terms_env=terms_env,
        path=path,
        sha256=sha256,
        prose=prose,
        p_sat=record.p_sat,
        u_customer=record.u_customer,
        u_supplier=record.u_supplier,
        completeness=record.completeness,
        mutually_beneficial=record.mutually_beneficial,
    )


def e14_row(base: BaseChoice, record: SolveRecord | None) -> E14Row:
    budget = environment(base.env).budget
    if record is None:
        return E14Row(
            env=base.env,
            rho=base.rho,
            found=False,
            p_sat=None,
            u_customer=None,
            u_supplier=None,
            in_band=False,
            individually_rational=False,
            feasible_starts=base.feasible_starts,
        )
    return E14Row(
        env=base.env,
        rho=base.rho,
        found=True,
        p_sat=record.p_sat,
        u_customer=record.u_customer,
        u_supplier=record.u_supplier,
        in_band=abs(record.p_sat - base.rho) <= BAND + TOLERANCE,
        individually_rational=record.u_customer >= budget - TOLERANCE and record.u_supplier >= -TOLERANCE,
        feasible_starts=base.feasible_starts,
    )


PROSE_ADAPTERS = {5: ("hotel", "ai-hosting")}
"""ContractSim paper, App. C.4: the cross-setting experiment runs Env 5's contracts in Hotel Cleaning and AI Hosting too."""


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
                excluded.append(_entry(record, base.terms_env, None))
                continue
            folder = out / "contracts" / name
            make_folder(folder)
            ir = record.job.contract()
            source = format_ir(ir)
            write_atomically(folder / "contract.contract", source)
            write_atomically(folder / "contract.txt", render(ir) + "\n")
            for setting in PROSE_ADAPTERS.get(base.env, ()):
                write_atomically(folder / f"contract.{setting}.txt", render(ir, setting=setting) + "\n")
            kept.append(_entry(record, base.terms_env, source))
    manifest = Manifest(plan=plan, contracts=tuple(kept), excluded=tuple(excluded), e14=tuple(e14)).sealed()
    write_atomically(out / "manifest.json", manifest.model_dump_json(indent=1) + "\n")
    return manifest


def _paths(name: str) -> tuple[str, str]:
    """Where a contract of the set and its prose live, relative to the set: the only places a manifest may name."""
    return f"contracts/{name}/contract.contract", f"contracts/{name}/contract.txt"


SHIPPED = Path(__file__).resolve().parent / "data" / "synthetic"
"""The paper's plan (20 starts, [CS-34]) generated into the repository: the set commands read by default, as
read-only input (their outputs go to ./contractlang-out unless told). It grows only by an explicit
`contractlang synth --out games/experiments/data/synthetic`; its job store is committed as it grows."""


def is_shipped(out: Path) -> bool:
    return out.resolve() == SHIPPED.resolve()


UNTIED_PRICES_NOTE = (
    "expected of a synthetic contract: the search keeps its start's prices while the payments move ([CS-34a]); "
    "the paper's synthetic contracts are parse-complete by construction, which \"does not mean that the terms are "
    'necessarily economically feasible or arithmetically consistent" (ContractSim paper, App. C.1), and such '
    'disagreements are "retained as contract outcomes rather than silently repaired" (App. C.3). Why the set '
    'keeps them: docs/explanation/fidelity.md, "Prices that disagree with payments".'
)
"""What `verify` adds to a refuted `arithmetic.totals` ([CS-31]) of a contract `synth` wrote."""


def in_synthetic_set(path: Path) -> bool:
    """Whether `path` is a contract file of a set `synth` wrote (the shipped one or another): `contracts/NAME/
    contract.contract` in a folder with a manifest."""
    path = path.resolve()
    return (
        path.name == "contract.contract"
        and path.parent.parent.name == "contracts"
        and (path.parent.parent.parent / "manifest.json").is_file()
    )


def searches_done(out: Path, plan: SynthPlan) -> int:
    """How many of the plan's search jobs are in `out`'s store."""
    done = stored_records(out / "jobs" / "search.jsonl", SearchRecord, lambda r: r.job, "search")
    return sum(job in done for job in plan.search_jobs())


def read_manifest(out: Path) -> Manifest:
    """The manifest `synth` wrote into `out`, checked against itself, its plan and the set's contract files
    (`check_manifest`); one error line when it is missing, not ours, or not what `synth` wrote."""
    path = out / "manifest.json"
    if out.exists() and not out.is_dir():
        raise FileError(f"{out}: a file, not a directory; give the directory `contractlang synth --out` wrote")
    try:
        manifest = Manifest.model_validate_json(_set_file(out, "manifest.json", read_capped), strict=True)
    except FileError as exc:
        if path.is_symlink() or path.exists():
            raise exc from None
        if is_shipped(out):
            plan = SynthPlan()
            raise FileError(
                f"{path}: the shipped synthetic set is incomplete here "
                f"({searches_done(out, plan)} of {len(plan.search_jobs())} search jobs done); "
                "`contractlang synth` completes it, or give a directory `synth --out` wrote"
            ) from None
        raise FileError(f"{path}: no manifest there; run `contractlang synth --out {out}` first") from None
    except ValueError as exc:
        raise FileError(
            f"{path}: not a manifest written by `contractlang synth` ({str(exc).splitlines()[0]})"
        ) from None
    problem = manifest_problem(manifest)
    if problem is not None:
        raise FileError(f"{path}: {problem}; rerun `contractlang synth` to write the set again")
    for entry in manifest.contracts:
        data = _set_file(out, entry.path, lambda p: read_capped(p, MAX_CONTRACT_BYTES))
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise FileError(
                f"{out / entry.path}: not the contract the manifest names (its SHA-256 differs: "
                "changed after `contractlang synth` wrote it)"
            )
    return manifest


def _set_file(out: Path, relative: str, read):
    """A file of the set, read with `read` only when no part of `relative` is a link (a set's files are its
    own: a link could lead to any file on the machine)."""
    path = out
    for part in relative.split("/"):
        path = path / part
        if path.is_symlink():
            raise FileError(f"{path}: a symbolic link; a synthetic set's files are its own, not links (not read)")
    return read(path)


def _expected_keys(manifest: Manifest) -> tuple[list[tuple[int, float, str]], list[tuple[int, float, str]]]:
    """The (environment, ρ, variant) of every kept and excluded entry `write_outputs` may write, in its order,
    for the bases the manifest's E14 rows say were found."""
    plan = manifest.plan
    found = {(r.env, r.rho) for r in manifest.e14 if r.found}
    bases = [(e, rho) for e in plan.envs for rho in plan.rhos if (plan.terms_env(e), rho) in found]
    return (
        [(e, rho, v) for e, rho in bases for v in VARIANTS],
        [(e, rho, v) for e, rho in bases for v in EXCLUDED_VARIANTS],
    )


def manifest_problem(manifest: Manifest) -> str | None:
    """What in a manifest contradicts its own digest, its plan or the figures it states (None when nothing).
    Checked: the digest; the plan's ranges; the entries, at most one per variant of each base the E14 rows
    found, in the writer's order (no duplicate or extra entry); each entry's name, terms
    environment, path and prose path as the writer derives them; probabilities in [0, 1]; utilities finite;
    MB as the utilities give it; each E14 row's figures equal to its base entry's. Not checked here: that
    the figures are the DP's (`set_contracts` compares them with the set's solve store when it is there)."""
    if manifest.digest != manifest.content_digest():
        return "its digest does not match its content (edited after `contractlang synth` wrote it)"
    plan = manifest.plan
    if (
        plan.starts < 1
        or not plan.search_envs
        or len(set(plan.search_envs)) != len(plan.search_envs)
        or any(e not in range(1, 7) for e in plan.search_envs)
        or not plan.rhos
        or len(set(plan.rhos)) != len(plan.rhos)
        or any(not 0 <= r <= 1 for r in plan.rhos)
    ):
        return "its plan is not one `synth` takes (starts >= 1, environments 1..6 and ρ in [0, 1], each once)"
    e14_keys = [(r.env, r.rho) for r in manifest.e14]
    if e14_keys != [(e, rho) for e in plan.envs if e in plan.search_envs for rho in plan.rhos]:
        return "its E14 rows are not one per searched environment and ρ of its plan"
    kept, excluded = _expected_keys(manifest)
    for entries, expected, what in ((manifest.contracts, kept, "contracts"), (manifest.excluded, excluded, "excluded")):
        problem = _entries_problem([(x.env, x.rho, x.variant) for x in entries], expected)
        if problem is not None:
            return f"{what}: {problem}"
    e14 = {(r.env, r.rho): r for r in manifest.e14}
    for _i, x in enumerate(manifest.contracts + manifest.excluded):
        where = f"entry {x.name!r}"
        if x.name != contract_name(x.env, x.rho, x.variant) or x.terms_env != plan.terms_env(x.env):
            return f"{where}: its name or terms environment is not the one its environment, ρ and variant give"
        paths = _paths(x.name) if x.variant in VARIANTS else ("", "")
        if (x.path, x.prose) != paths or (x.variant in VARIANTS) != (len(x.sha256) == 64):
            return (
                f"{where}: its path {x.path[:80]!r} is not {paths[0]!r} (a set's contracts are inside it, "
                "at contracts/NAME/contract.contract), or it has no SHA-256"
            )
        if not all(0 <= p <= 1 for p in (x.p_sat, x.completeness)) or not all(
            math.isfinite(u) for u in (x.u_customer, x.u_supplier)
        ):
            return f"{where}: P_sat and completeness must be in [0, 1] and the utilities finite"
        budget = environment(x.env).budget
        if x.mutually_beneficial != (x.u_customer - budget >= -TOLERANCE and x.u_supplier >= -TOLERANCE):
            return f"{where}: mutually_beneficial contradicts its utilities"
        row = e14.get((x.env, x.rho))
        if (
            x.variant == "base"
            and row is not None
            and (row.p_sat, row.u_customer, row.u_supplier) != (x.p_sat, x.u_customer, x.u_supplier)
        ):
            return f"{where}: its figures differ from its E14 row's"
    return None


def _job(entry: ManifestEntry, terms: Terms) -> SolveJob:
    return SolveJob(env=entry.env, rho=entry.rho, variant=entry.variant, terms=terms)


def _entries_problem(keys: list, expected: list) -> str | None:
    """Why `keys` is not a part of `expected` in its order (None when it is): a run that solved only some
    variants writes only those, but never one twice, one its plan lacks, or out of order."""
    position = {k: i for i, k in enumerate(expected)}
    seen: set = set()
    last = -1
    for key in keys:
        where = f"Env {key[0]}, ρ {key[1]}, variant {key[2]}"
        if key in seen:
            return f"{where} is listed more than once"
        seen.add(key)
        if key not in position:
            return f"{where} is not a contract of its plan and E14 rows"
        if position[key] < last:
            return f"{where} is out of the order `contractlang synth` writes"
        last = position[key]
    return None


def set_contracts(out: Path) -> tuple[Manifest, list[tuple[ManifestEntry, ContractSimIR]]]:
    """The manifest of a `synth` directory and each contract read back from its file, checked beyond
    `read_manifest`: each file is exactly what the writer writes for its variant of its base's terms (so the
    variants of one base, and Envs 1-2 with the environments whose terms they reuse, agree), and when the set's
    solve store is there, every entry's figures are its record's and every variant it solved is listed. A file that is not a contract is named in one
    line, its content never shown."""
    manifest = read_manifest(out)
    store = out / "jobs" / "solve.jsonl"
    solved = _set_file(out, "jobs/solve.jsonl", lambda p: stored_records(p, SolveRecord, lambda r: r.job, "solve"))
    base_terms: dict[tuple[int, float], Terms] = {}
    contracts = []
    for entry in manifest.contracts:
        path = out / entry.path
        data = _set_file(out, entry.path, lambda p: read_capped(p, MAX_CONTRACT_BYTES))
        result = check_source(data, str(path))
        ir = result.contracts[0].ir if result.ok and len(result.contracts) == 1 else None
        if not isinstance(ir, ContractSimIR) or not ir.deliveries:
            raise FileError(
                f"{path}: not one ContractSim contract that checks (`contractlang check {path}` shows "
                "why); the manifest names it as one"
            )
        terms = base_terms.setdefault(
            (entry.terms_env, entry.rho), Terms(quantities=ir.deliveries[0], prices=ir.prices, payments=ir.payments)
        )
        if data != format_ir(_job(entry, terms).contract()).encode():
            raise FileError(
                f"{path}: not the {entry.variant} variant of its base's terms that `contractlang synth` "
                "writes (the variants of one base share their terms, and Envs 1-2 reuse Envs 3-4's)"
            )
        contracts.append((entry, ir))
    listed = {(x.env, x.rho, x.variant) for x in manifest.contracts + manifest.excluded}
    in_store = {(j.env, j.rho, j.variant) for j in solved}
    kept, excluded = _expected_keys(manifest)
    unlisted = [k for k in kept + excluded if k in in_store and k not in listed]
    if unlisted:
        env, rho, variant = unlisted[0]
        raise FileError(
            f"{out / 'manifest.json'}: Env {env}, ρ {rho}, variant {variant} is solved in {store} but "
            "not listed (a manifest lists every variant `contractlang synth` solved)"
        )
    for entry in manifest.contracts + manifest.excluded if store.exists() else ():
        terms = base_terms.get((entry.terms_env, entry.rho))
        record = None if terms is None else solved.get(_job(entry, terms))
        if record is None or (record.p_sat, record.u_customer, record.u_supplier, record.completeness) != (
            entry.p_sat,
            entry.u_customer,
            entry.u_supplier,
            entry.completeness,
        ):
            raise FileError(f"{out / 'manifest.json'}: {entry.name}'s figures are not its solve record's in {store}")
    return manifest, contracts


class SynthRun(Frozen):
    manifest: Manifest
    searched: int  # search jobs run now (the rest were in the store)
    solved: int


def synthesize(
    out: Path,
    plan: SynthPlan = SynthPlan(),
    workers: int | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
    reuse: Path | None = None,
) -> SynthRun:
    """ContractSim paper, App. C.4 end to end, resumable: the searches and the variant solves are jobs whose records go to
    `out/jobs/*.jsonl` as they finish; a rerun runs only the missing ones and writes the same outputs. The
    shipped set takes the paper's plan only, so that no trial's jobs or outputs land in the repository's. The
    finished jobs of the set `reuse` (read-only: the shipped one) are taken as they are."""
    if is_shipped(out) and plan != SynthPlan():
        raise FileError(
            f"{out}: the shipped synthetic set is the paper's plan (20 starts, Envs 3-6, ρ 0.9-0.5); "
            "give --out for another plan"
        )
    search_jobs = plan.search_jobs()
    searches, searched = run_phase(
        "search",
        out / "jobs" / "search.jsonl",
        SearchRecord,
        run_search,
        search_jobs,
        workers,
        ray_address,
        progress,
        shared_store(reuse, out, "search.jsonl"),
    )
    bases = choose_bases([searches[j] for j in search_jobs], plan)
    variant_jobs = solve_jobs(bases)
    solves, solved = run_phase(
        "solve",
        out / "jobs" / "solve.jsonl",
        SolveRecord,
        run_solve,
        variant_jobs,
        workers,
        ray_address,
        progress,
        shared_store(reuse, out, "solve.jsonl"),
    )
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
        raise FileError(
            f"{path}: the shipped set's search store is incomplete here "
            f"({len(jobs) - len(missing)} of {len(jobs)} search jobs{which} done); `contractlang synth` "
            "completes it, or give a directory `synth --out` wrote"
        )
    if missing:
        raise FileError(
            f"{path}: {len(missing)} searches{which} of the manifest's are missing; rerun "
            f"`contractlang synth --out {out}` with the same options"
        )
    return [stored[j] for j in jobs]
