"""Pareto frontiers of the formalised contract space (ContractSim paper, App. C.5, [CS-35], Figure 2 / Figures 6–8).

ω*(η) = argmax U_i(ω) s.t. U_{−i}(ω) ≥ η and P_sat ≥ 0.95 is taken over a pool of contracts valued exactly by
the DP; sweeping η over the pool traces its nondominated set, the points the paper draws as open circles
("sampled nondominated contracts"; the segments between them are visual guides, not claims). F1 draws from
grim-only contracts, F2 from every contingency combination.

Pools: in Envs 3–6 every base-family point the `synth` searches valued (F1), plus every contingency variant
of the most valuable of them in each reliability band from the threshold down (F2, `f2_seeds`). Envs 1–2 have
no search (their terms are reused, ContractSim paper, App. C.4) and are deterministic, so their frontier is exact, by enumeration in
closed form (`enumeration`); E13 makes F1 = F2 there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from contractlang.files import FileError, make_folder, read_capped
from contractlang.vocab import Frozen
from games.contractsim.environments import environment
from games.experiments.synth import ALL_VARIANTS, Evaluator, SearchRecord, Terms, unit_ingredient_cost
from games.figures import pyplot, save_png, write_json
from games.runner import Progress, run_phase

THRESHOLD = 0.95  # [CS-26]: inclusive
TOLERANCE = 1e-9
F2_SEEDS = 8
"""How many grim-only contracts of a stochastic environment's pool get every contingency variant for F2."""
BAND = 0.05
"""Width of the P_sat bands F2's seeds are drawn from, counted down from the threshold (`f2_seeds`)."""


class Point(Frozen):
    """One contract of a pool with its exact valuation (Catering dollars)."""

    terms: Terms
    variant: str
    p_sat: float
    u_customer: float
    u_supplier: float

    @property
    def joint_utility(self) -> float:
        """U_Cust + U_Supp, what a frontier's best point maximises."""
        return self.u_customer + self.u_supplier


def pareto(points: Iterable[Point]) -> list[Point]:
    """The nondominated points with P_sat ≥ 0.95, by increasing U_Cust (ties: the first in pool order)."""
    ok = [p for p in points if p.p_sat >= THRESHOLD - TOLERANCE]
    ok.sort(key=lambda p: (-p.u_customer, -p.u_supplier))
    front, best_supplier = [], float("-inf")
    for p in ok:
        if p.u_supplier > best_supplier + TOLERANCE:
            front.append(p)
            best_supplier = p.u_supplier
    return front[::-1]


def sweep(points: list[Point], role: str, etas: list[float]) -> list[tuple[float, Point | None]]:
    """ω*(η) for `role` at each floor η on the counterparty's utility (None: nothing reaches the floor)."""
    own = "u_customer" if role == "customer" else "u_supplier"
    other = "u_supplier" if role == "customer" else "u_customer"
    ok = [p for p in points if p.p_sat >= THRESHOLD - TOLERANCE]
    return [
        (eta, max((p for p in ok if getattr(p, other) >= eta - TOLERANCE), key=lambda p: getattr(p, own), default=None))
        for eta in etas
    ]


class PoolJob(Frozen):
    """Exact valuations of one environment's extra pool: the enumeration of a deterministic environment, or
    the contingency variants of given contracts."""

    env: int
    terms: tuple[Terms, ...]
    variants: tuple[str, ...]


class PoolRecord(Frozen):
    job: PoolJob
    points: tuple[Point, ...]


def run_pool(job: PoolJob) -> PoolRecord:
    evaluator = Evaluator(job.env)
    points = []
    for terms in job.terms:
        for variant in job.variants:
            v = evaluator(terms, variant)
            points.append(
                Point(terms=terms, variant=variant, p_sat=v.p_sat, u_customer=v.u_customer, u_supplier=v.u_supplier)
            )
    return PoolRecord(job=job, points=tuple(points))


def enumeration(env_id: int) -> list[Point]:
    """Envs 1–2, every delivery vector of the [CS-34] box, in closed form. Prices, receipts and spoilage are
    fixed there, so with the whole total T paid in week 1 (the most cash at every order) the RCC Supplier buys
    each week's ingredients just in time (a purchase ahead costs the same and ties go to the cheaper order,
    [CS-25]) and spends s = 5·c·q; it is satisfiable exactly when capital + T ≥ s, and then U_Supp = T − s and
    U_Cust = B + 5·v·q − T. A contract's points thus form one segment of slope −1 from its smallest
    satisfiable total to B, given here by its two ends (tests check them against the DP)."""
    env = environment(env_id)
    unit = unit_ingredient_cost(env)
    out = []
    for a in range(1, 11):
        for b in range(1, 11 - a):
            for c in range(1, 11 - a):
                q = (a, b, c)
                spend = round(5 * float(unit @ q))
                value = 5 * int(np.dot(env.values, q))
                low = max(1, spend - env.capital)
                for total in sorted({low, env.budget}):
                    if total <= env.budget:
                        out.append(
                            Point(
                                terms=Terms(quantities=q, prices=(0, 0, 0), payments=(total, 0, 0, 0, 0, 0)),
                                variant="base",
                                p_sat=1.0,
                                u_customer=env.budget + value - total,
                                u_supplier=total - spend,
                            )
                        )
    return out


def search_pool(records: list[SearchRecord], env_id: int) -> list[Point]:
    """Every base-family point the searches of one environment valued, once each, in job order."""
    seen: dict[tuple, Point] = {}
    for r in sorted(records, key=lambda r: r.job.start):
        if r.job.env != env_id:
            continue
        for v in r.valued:
            key = (v.terms.quantities, v.terms.payments)
            seen.setdefault(
                key,
                Point(
                    terms=v.terms,
                    variant="base",
                    p_sat=v.valuation.p_sat,
                    u_customer=v.valuation.u_customer,
                    u_supplier=v.valuation.u_supplier,
                ),
            )
    return list(seen.values())


DETERMINISTIC = (1, 2)


def f2_seeds(pool: list[Point], seeds: int = F2_SEEDS) -> list[Point]:
    """The most valuable grim-only contract (U_Cust + U_Supp; ties: pool order) of each of `seeds` P_sat bands
    [0.95, 1], [0.90, 0.95), [0.85, 0.90), …, skipping empty ones. Rollover lifts P_sat by up to about 0.25
    (payment deduction further, at a cost), so contracts near the threshold are the ones whose variants can
    reach F2 above F1; and one seed per band keeps the near-copies an ascent values around one target from
    taking every seed (the 8 most valuable contracts of Env 6's 20-start pool are one contract at P_sat 0.415,
    out of any variant's reach)."""
    edges = [THRESHOLD - BAND * k for k in range(seeds)]
    best: dict[int, Point] = {}
    for p in pool:
        band = next((k for k, edge in enumerate(edges) if p.p_sat >= edge - TOLERANCE), None)
        if band is not None and (band not in best or p.joint_utility > best[band].joint_utility):
            best[band] = p
    return [best[k] for k in sorted(best)]


def pool_jobs(search: list[SearchRecord], envs: tuple[int, ...], seeds: int = F2_SEEDS) -> list[PoolJob]:
    """F2's extra contracts in the stochastic environments: every contingency variant of the search pool's
    `f2_seeds`."""
    return [
        PoolJob(env=env_id, terms=(p.terms,), variants=tuple(v for v in ALL_VARIANTS if v != "base"))
        for env_id in envs
        if env_id not in DETERMINISTIC
        for p in f2_seeds(search_pool(search, env_id), seeds)
    ]


class Frontier(Frozen):
    env: int
    f1: tuple[Point, ...]
    f2: tuple[Point, ...]
    pool_f1: int  # grim-only contracts considered
    pool_f2: int


def frontiers(search: list[SearchRecord], pools: list[PoolRecord], envs: tuple[int, ...]) -> list[Frontier]:
    out = []
    for env_id in envs:
        extra = [p for r in pools if r.job.env == env_id for p in r.points]
        base = enumeration(env_id) if env_id in DETERMINISTIC else search_pool(search, env_id)
        everything = base + extra
        out.append(
            Frontier(
                env=env_id,
                f1=tuple(pareto(base)),
                f2=tuple(pareto(everything)),
                pool_f1=len(base),
                pool_f2=len(everything),
            )
        )
    return out


def pool_records(
    jobs: list[PoolJob],
    store_path: Path,
    workers: int | None,
    ray_address: str | None,
    progress: Progress | None,
    shared: Path | None = None,
) -> tuple[list[PoolRecord], int]:
    records, ran = run_phase("pools", store_path, PoolRecord, run_pool, jobs, workers, ray_address, progress, shared)
    return [records[j] for j in jobs], ran


def draw(ax, frontier: Frontier) -> None:
    """Figure-2 style on `ax`: U_Cust against U_Supp, F1 and F2 as open circles joined by guide lines, the
    disagreement point marked."""
    env = environment(frontier.env)
    for points, label, style in ((frontier.f2, "F2 (contingent)", "-o"), (frontier.f1, "F1 (grim only)", "--o")):
        if points:
            ax.plot([p.u_customer for p in points], [p.u_supplier for p in points], style, mfc="none", label=label)
    ax.plot([env.budget], [0], "kx", label="disagreement (B, 0)")
    ax.set_xlabel("U_Cust")
    ax.set_ylabel("U_Supp")
    ax.grid(alpha=0.3)


def plot(frontier: Frontier, path: Path) -> None:
    fig, ax = pyplot().subplots(figsize=(5.5, 4.2), dpi=120)
    draw(ax, frontier)
    ax.set_title(f"Environment {frontier.env}: Pareto frontiers, P_sat ≥ 0.95")
    ax.legend(fontsize=8)
    save_png(fig, path)


class Sweep(Frozen):
    """ω*(η) for one role on an η grid (the counterparty's utility floor): the role's best utility, or None."""

    role: str
    frontier: str
    etas: tuple[float, ...]
    best: tuple[float | None, ...]


def sweeps(frontier: Frontier, steps: int = 9) -> list[Sweep]:
    out = []
    for name, points in (("F1", list(frontier.f1)), ("F2", list(frontier.f2))):
        for role in ("customer", "supplier"):
            other = [p.u_supplier if role == "customer" else p.u_customer for p in points]
            if not other:
                out.append(Sweep(role=role, frontier=name, etas=(), best=()))
                continue
            lo, hi = min(other), max(other)
            etas = [round(lo + (hi - lo) * k / (steps - 1), 6) for k in range(steps)]
            own = "u_customer" if role == "customer" else "u_supplier"
            best = tuple(None if p is None else getattr(p, own) for _, p in sweep(points, role, etas))
            out.append(Sweep(role=role, frontier=name, etas=tuple(etas), best=best))
    return out


class FrontierReport(Frozen):
    frontiers: tuple[Frontier, ...]
    sweeps: tuple[tuple[Sweep, ...], ...]  # per frontier, in the same order


def read_frontiers(out: Path) -> tuple[Frontier, ...]:
    """The frontiers `experiment frontier` wrote into a synthetic set (none when it has not been run there)."""
    path = out / "frontiers" / "frontiers.json"
    if not path.exists():
        return ()
    try:
        return FrontierReport.model_validate_json(read_capped(path), strict=True).frontiers
    except ValueError as exc:
        raise FileError(
            f"{path}: not written by `contractlang experiment frontier` ({str(exc).splitlines()[0]})"
        ) from None


def write_report(out: Path, found: list[Frontier], keep: tuple[int, ...] = (), source: Path | None = None) -> Path:
    """`out/frontiers/frontiers.json` and a PNG per environment drawn now, each written whole; returns the folder.
    The frontiers an earlier run drew for the environments `keep` stay (read from `out`, else from the set
    `source` the run reads), so that a set whose searches land environment by environment (the shipped one)
    gains its frontiers the same way."""
    folder = out / "frontiers"
    drawn = {f.env for f in found}
    earlier = read_frontiers(out) or (read_frontiers(source) if source is not None else ())
    kept = [f for f in earlier if f.env in keep and f.env not in drawn] if keep else []
    every = sorted([*kept, *found], key=lambda f: f.env)
    make_folder(folder)
    write_json(
        folder / "frontiers.json", FrontierReport(frontiers=tuple(every), sweeps=tuple(tuple(sweeps(f)) for f in every))
    )
    for f in found:
        plot(f, folder / f"env{f.env}.png")
    return folder
