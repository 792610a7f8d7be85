"""The tournament's statistics (docs/explanation/tournaments.md), from `SeatOutcome` outcomes alone: per-cell means with
Student-t intervals, ratings per role with a paired bootstrap over the shared units, "A beats B in the same seat"
probabilities, a Bradley–Terry fit, the quality gates, the sequential stopping rule and the power plan."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from operator import attrgetter

import numpy as np
from scipy import optimize, special, stats

from contractlang.vocab import Frozen
from games.tournament.seats import SeatOutcome

LEVEL = 0.95
RESAMPLES = 1000
BT_RESAMPLES = 200  # each resample is one optimisation; the interval needs fewer draws than the means
POWER = 0.8


class Interval(Frozen):
    """A mean and its two-sided `LEVEL` interval over `n` independent values (None where there is no value)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)

    def text(self, digits: int = 2) -> str:
        if self.mean is None:
            return "–"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def t_interval(values: Iterable[float | None], level: float = LEVEL) -> Interval:
    """Student-t interval of the mean; one value has no spread, so its interval is the value itself."""
    xs = np.array([v for v in values if v is not None], dtype=float)
    if not len(xs):
        return Interval(mean=None, low=None, high=None, n=0)
    mean = float(xs.mean())
    if len(xs) == 1 or np.all(xs == xs[0]):
        return Interval(mean=mean, low=mean, high=mean, n=len(xs))
    half = float(stats.t.ppf((1 + level) / 2, len(xs) - 1) * xs.std(ddof=1) / math.sqrt(len(xs)))
    return Interval(mean=mean, low=mean - half, high=mean + half, n=len(xs))


class Gate(Frozen):
    """A cell kept out of the ratings, and why."""

    role: str
    agent: str
    opponent: str
    reason: str


class Gates(Frozen):
    """Quality gates for LLM agents (HoMM3 Arena's batch gates): a cell whose share of answers that fell back to
    the default action, or of games whose model calls failed, is above its limit is marked and left out."""

    max_fallback: float = 0.2
    max_errors: float = 0.1

    def check(self, seats: list[SeatOutcome], errored: dict[tuple[str, str, str], int]) -> list[Gate]:
        cells: dict[tuple[str, str, str], list[SeatOutcome]] = defaultdict(list)
        for s in seats:
            cells[(s.role, s.agent, s.opponent)].append(s)
        out = []
        for key in sorted(set(cells) | set(errored)):
            mine = [s for s in cells.get(key, []) if s.llm]
            failed = errored.get(key, 0)
            decisions = sum(s.decisions for s in mine)
            reasons = []
            if decisions and sum(s.fallbacks for s in mine) / decisions > self.max_fallback:
                share = sum(s.fallbacks for s in mine) / decisions
                reasons.append(f"{share:.0%} of its answers fell back to the default (limit {self.max_fallback:.0%})")
            if failed and failed / (failed + len(cells.get(key, []))) > self.max_errors:
                share = failed / (failed + len(cells.get(key, [])))
                reasons.append(f"{share:.0%} of its games errored at the provider (limit {self.max_errors:.0%})")
            if reasons:
                out.append(Gate(role=key[0], agent=key[1], opponent=key[2], reason="; ".join(reasons)))
        return out


class Cell(Frozen):
    """One agent in one seat against one opponent: its games' means with t intervals over the seeds × units."""

    role: str
    agent: str
    opponent: str
    games: int
    utility: Interval
    compliant_regret: Interval
    regret: Interval
    gap: Interval
    metrics: dict[str, Interval]
    gated: str | None = None


def cells(seats: list[SeatOutcome], gates: list[Gate]) -> list[Cell]:
    groups: dict[tuple[str, str, str], list[SeatOutcome]] = defaultdict(list)
    for s in seats:
        groups[(s.role, s.agent, s.opponent)].append(s)
    why = {(g.role, g.agent, g.opponent): g.reason for g in gates}
    return [
        Cell(
            role=role,
            agent=agent,
            opponent=opponent,
            games=len(group),
            utility=t_interval(s.utility for s in group),
            compliant_regret=t_interval(s.compliant_regret for s in group),
            regret=t_interval(s.regret for s in group),
            gap=t_interval(s.gap for s in group),
            metrics={m: t_interval(s.metrics.get(m) for s in group) for m in group[0].metrics},
            gated=why.get((role, agent, opponent)),
        )
        for (role, agent, opponent), group in groups.items()
    ]


class Rating(Frozen):
    """An agent in one role: mean utility against the field; regret against the exact optimum (the headline:
    compliant regret, ContractSim paper, App. C.6, eq. 36, in its games against the opponent the optimum is
    solved for, where the rational counterfactual is that optimum); compliant and plain regret (eqs. 35–36)
    against the field and the gap to the optimum's exact expected value, all with paired-bootstrap intervals
    over the shared units; its Bradley–Terry strength, its rank (1 + the agents whose utility interval lies
    wholly above its own) and the agents it is tied with (overlapping utility intervals)."""

    role: str
    agent: str
    rank: int
    utility: Interval
    optimum_regret: Interval
    compliant_regret: Interval
    regret: Interval
    gap: Interval
    strength: Interval
    tied_with: tuple[str, ...]


class Pairwise(Frozen):
    """A against B in the same seat, against the same opponents on the same units: the probability that A
    scores more (a tie counts one half) with a paired-bootstrap interval, and the paired mean difference A − B
    with a t interval over the units; `separated` when that interval excludes zero."""

    role: str
    a: str
    b: str
    comparisons: int
    p_beats: Interval
    difference: Interval
    separated: bool


def _by_unit(seats: list[SeatOutcome], value) -> dict[tuple[str, str], float]:
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in seats:
        v = value(s)
        if v is not None:
            sums[(s.agent, s.unit)].append(v)
    return {k: float(np.mean(v)) for k, v in sums.items()}


def _matrix(agents: list[str], units: list[str], values: dict[tuple[str, str], float]) -> np.ndarray:
    m = np.full((len(agents), len(units)), np.nan)
    for i, a in enumerate(agents):
        for j, u in enumerate(units):
            if (a, u) in values:
                m[i, j] = values[(a, u)]
    return m


def _bootstrap_means(m: np.ndarray, draws: np.ndarray, level: float) -> list[Interval]:
    """Each row's mean over the units, with the percentile interval of the means over resampled units (the same
    resamples for every row: the differences between agents stay paired)."""
    out = []
    for row in m:
        seen = ~np.isnan(row)
        if not seen.any():
            out.append(Interval(mean=None, low=None, high=None, n=0))
            continue
        resampled = row[draws]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample may hold none of the agent's units
            means = np.nanmean(resampled, axis=1)
        means = means[~np.isnan(means)]
        lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
        out.append(Interval(mean=float(np.nanmean(row)), low=float(lo), high=float(hi), n=int(seen.sum())))
    return out


def _wins(seats: list[SeatOutcome], agents: list[str], units: list[str]) -> np.ndarray:
    """wins[u, a, b]: on unit u, how often a scored more than b against the same opponent (ties one half)."""
    index = {a: i for i, a in enumerate(agents)}
    where = {u: j for j, u in enumerate(units)}
    score: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for s in seats:
        score[(s.unit, s.opponent)][s.agent] = s.utility
    wins = np.zeros((len(units), len(agents), len(agents)))
    for (unit, _), played in score.items():
        for a, ua in played.items():
            for b, ub in played.items():
                if a != b:
                    wins[where[unit], index[a], index[b]] += 1.0 if ua > ub else 0.5 if ua == ub else 0.0
    return wins


def bradley_terry(wins: np.ndarray) -> np.ndarray:
    """Strengths θ (log-odds scale, mean 0) maximising Σ w_ab log σ(θ_a − θ_b) (Bradley–Terry), by BFGS; a
    small ridge keeps an agent that wins every comparison finite."""
    n = len(wins)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = theta[:, None] - theta[None, :]
        ll = -(wins * special.log_expit(d)).sum() + 1e-3 * (theta**2).sum()
        p = special.expit(-d)
        g = -(wins * p).sum(axis=1) + (wins * p).sum(axis=0) + 2e-3 * theta
        return float(ll), g

    theta = optimize.minimize(loss, np.zeros(n), jac=True, method="BFGS").x
    return theta - theta.mean()


def ratings(seats: list[SeatOutcome], role: str, seed: int = 0, resamples: int = RESAMPLES, level: float = LEVEL):
    """`Rating`s and `Pairwise` comparisons of one role, from the seats not gated out."""
    mine = [s for s in seats if s.role == role]
    agents = sorted({s.agent for s in mine})
    units = sorted({s.unit for s in mine})
    if not agents:
        return [], []
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(units), size=(resamples, len(units)))
    utility, optimum_regret, compliant_regret, regret, gap = (
        _bootstrap_means(_matrix(agents, units, _by_unit(mine, attrgetter(q))), draws, level)
        for q in ("utility", "optimum_regret", "compliant_regret", "regret", "gap")
    )
    wins = _wins(mine, agents, units)
    theta = bradley_terry(wins.sum(axis=0))
    spread = np.array([bradley_terry(wins[d].sum(axis=0)) for d in draws[:BT_RESAMPLES]])
    lo, hi = np.percentile(spread, [100 * (1 - level) / 2, 100 * (1 + level) / 2], axis=0)
    strength = [
        Interval(mean=float(theta[i]), low=float(lo[i]), high=float(hi[i]), n=len(units)) for i in range(len(agents))
    ]
    out = []
    for i, a in enumerate(agents):
        u = utility[i]
        above = [b for j, b in enumerate(agents) if j != i and u.high is not None and utility[j].low > u.high]
        tied = tuple(
            b
            for j, b in enumerate(agents)
            if j != i and u.low is not None and utility[j].low <= u.high and u.low <= utility[j].high
        )
        out.append(
            Rating(
                role=role,
                agent=a,
                rank=1 + len(above),
                utility=u,
                optimum_regret=optimum_regret[i],
                compliant_regret=compliant_regret[i],
                regret=regret[i],
                gap=gap[i],
                strength=strength[i],
                tied_with=tied,
            )
        )
    out.sort(key=lambda r: (r.rank, -(r.utility.mean or -math.inf), r.agent))
    pairs = []
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            if j <= i:
                continue
            count = wins[:, i, j] + wins[:, j, i]
            if not count.sum():
                continue
            resampled = wins[draws][:, :, i, j].sum(axis=1) / np.maximum(count[draws].sum(axis=1), 1e-12)
            p_lo, p_hi = np.percentile(resampled, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
            diff = t_interval(paired_differences(mine, a, b), level)
            pairs.append(
                Pairwise(
                    role=role,
                    a=a,
                    b=b,
                    comparisons=int(count.sum()),
                    p_beats=Interval(
                        mean=float(wins[:, i, j].sum() / count.sum()),
                        low=float(p_lo),
                        high=float(p_hi),
                        n=int((count > 0).sum()),
                    ),
                    difference=diff,
                    separated=diff.excludes_zero(),
                )
            )
    return out, pairs


def paired_differences(seats: list[SeatOutcome], a: str, b: str) -> list[float]:
    """Per shared unit, the mean over common opponents of a's utility minus b's (one value per unit: the units
    are the independent draws)."""
    score: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for s in seats:
        score[(s.unit, s.opponent)][s.agent] = s.utility
    per_unit: dict[str, list[float]] = defaultdict(list)
    for (unit, _), played in score.items():
        if a in played and b in played:
            per_unit[unit].append(played[a] - played[b])
    return [float(np.mean(v)) for _, v in sorted(per_unit.items())]


class Sequential(Frozen):
    """Repeated paired t-tests with Bonferroni α-spending: a pair is looked at after each of at most `looks`
    batches of seeds and declared separated when its two-sided p falls below α / looks. By the union bound the
    chance of ever declaring a difference that is not there is at most α, however the looks fall."""

    alpha: float = 0.05
    looks: int = 5

    @property
    def name(self) -> str:
        return f"repeated paired t-tests, Bonferroni α-spending: α = {self.alpha:g} over {self.looks} looks"

    @property
    def per_look(self) -> float:
        return self.alpha / self.looks

    def separated(self, differences):
        """Whether the paired differences (the last axis; several runs at once along the others) are declared
        different from zero at this look; differences with no spread are separated when they are not zero."""
        xs = np.asarray(differences, dtype=float)
        if xs.shape[-1] < 2:
            return np.zeros(xs.shape[:-1], dtype=bool) if xs.ndim > 1 else False
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no spread: p is NaN, decided below
            p = stats.ttest_1samp(xs, 0.0, axis=-1).pvalue
        p = np.where(np.isnan(p), np.where(xs.mean(axis=-1) != 0, 0.0, 1.0), p)
        out = p < self.per_look
        return bool(out) if out.ndim == 0 else out

    def needed(self, seats: list[SeatOutcome], roles: tuple[str, ...]) -> dict[str, set[str]]:
        """By role, the agents in a pair not separated yet: their games go on."""
        out: dict[str, set[str]] = {}
        for role in roles:
            mine = [s for s in seats if s.role == role]
            agents = sorted({s.agent for s in mine})
            out[role] = {
                x
                for i, a in enumerate(agents)
                for b in agents[i + 1 :]
                if not self.separated(paired_differences(mine, a, b))
                for x in (a, b)
            }
        return out


class PlanRow(Frozen):
    """How many seeds a pair needs for its paired difference to be detected at `POWER` (a two-sided paired t-test
    at `alpha`), from the pilot's standard deviation of the per-unit differences."""

    role: str
    a: str
    b: str
    sd: float | None
    detect: float | None
    units_per_seed: int
    seeds: int | None  # None: no spread or no difference to detect


def units_needed(sd: float, detect: float, alpha: float = 0.05, power: float = POWER) -> int:
    """The fewest units n at which a two-sided one-sample t-test of effect `detect` / `sd` reaches `power`
    (noncentral t)."""
    effect = abs(detect) / sd
    n = 2
    while n < 10_000_000:
        df = n - 1
        crit = stats.t.ppf(1 - alpha / 2, df)
        nc = effect * math.sqrt(n)
        if stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc) >= power:
            return n
        n = n + 1 if n < 100 else int(n * 1.05)
    return n


def plan(seats: list[SeatOutcome], role: str, seeds: int, detect: float | None, alpha: float = 0.05) -> list[PlanRow]:
    mine = [s for s in seats if s.role == role]
    agents = sorted({s.agent for s in mine})
    units = {s.unit for s in mine}
    per_seed = max(1, len(units) // max(1, seeds))
    out = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            diffs = paired_differences(mine, a, b)
            sd = float(np.std(diffs, ddof=1)) if len(diffs) > 1 else None
            delta = detect if detect is not None else (float(np.mean(diffs)) if diffs else None)
            need = math.ceil(units_needed(sd, delta, alpha) / per_seed) if sd and delta else None
            out.append(PlanRow(role=role, a=a, b=b, sd=sd, detect=delta, units_per_seed=per_seed, seeds=need))
    return out
