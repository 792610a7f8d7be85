"""The ContractSim paper's published performance rows (Tables 7–10, App. D.3–D.4; Tables 1–2 repeat part of
7–8) as data, and the test that says whether an agent's row differs from a published one."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from contractlang.vocab import Frozen

PAPER_DATA = Path(__file__).resolve().parent / "data" / "paper_performance.json"
RATIONAL = ("rc", "rcc", "re")
LLM_AGENTS = ("Claude Opus 5", "Gemini 3.6 Flash", "GPT–5.6-Sol")
PAPER_N = 180
"""Environment–contract cases behind every published row (Tables 1–2, 7–10)."""


class PaperRow(Frozen):
    """One published row: `agent` scored in the table's role against the rational `counterparty`."""

    counterparty: str
    agent: str
    cells: tuple[tuple[float, float] | None, ...]  # (mean, sample SD) per column; None for the paper's '–'

    @property
    def rational(self) -> bool:
        return self.agent in RATIONAL


class PaperTable(Frozen):
    table: int
    section: str
    role: str
    aggregation: str  # "macro" (Tables 7–8) or "micro" (pooled weeks, Tables 9–10)
    n: int
    columns: tuple[str, ...]
    rows: tuple[PaperRow, ...]

    @property
    def title(self) -> str:
        return f"Table {self.table} ({self.section})"


@lru_cache(maxsize=1)
def paper_tables() -> tuple[PaperTable, ...]:
    """Tables 7, 8, 9, 10 as printed (rates in percent, money in Catering dollars)."""
    raw = json.loads(PAPER_DATA.read_text(encoding="utf-8"))
    return tuple(
        PaperTable(
            n=raw["n"],
            columns=tuple(raw["columns"]),
            **{k: v for k, v in t.items() if k != "rows"},
            rows=tuple(PaperRow(**r) for r in t["rows"]),
        )
        for t in raw["tables"]
    )


def cell_text(cell: tuple[float, float] | None) -> str:
    """A published cell as the tables print theirs: mean ± SD to one decimal, '–' for an undefined rate."""
    return "–" if cell is None else f"{cell[0]:.1f} ± {cell[1]:.1f}"


def paper_table(role: str, micro: bool) -> PaperTable:
    return next(t for t in paper_tables() if t.role == role and (t.aggregation == "micro") == micro)


ELIGIBLE_ONLY = ("Cond.", "Expl.", "Uni.", "Rec.")
"""The rates taken over the eligible runs only (ContractSim paper, App. C.6): conditional compliance and
unilateral defection over the runs with a week before any breach by the counterparty, exploited compliance and
reciprocal defection over those with a week after one. The paper prints no n for them."""


def eligible_n(cell: tuple[float, float]) -> int | None:
    """The cases behind a published percentage of 0/1 outcomes (mean 100·k/n, SD the sample SD of k ones among
    n): the smallest n ≤ PAPER_N whose k fits both printed numbers to their rounding, the most cautious reading
    for a test; None when no n fits (a mean of fractions) or every n does (0 % or 100 %, SD 0). 66.7 ± 57.7 is
    2 of 3."""
    mean, sd = cell
    if sd == 0:
        return None
    for n in range(2, PAPER_N + 1):
        k = round(mean * n / 100)
        exact_sd = 100 * math.sqrt(k * (n - k) / (n * (n - 1)))
        if abs(100 * k / n - mean) <= 0.05 + 1e-9 and abs(exact_sd - sd) <= 0.05 + 1e-9:
            return n
    return None


def paper_n(column: str, cell: tuple[float, float]) -> int | None:
    """The n behind a published cell: PAPER_N, or for a rate over the eligible runs the n its numbers imply
    (`eligible_n`), None when they imply none."""
    return eligible_n(cell) if column in ELIGIBLE_ONLY else PAPER_N


def welch_p(mean1: float, sd1: float, n1: int, mean2: float, sd2: float, n2: int) -> float | None:
    """Two-sided p of Welch's two-sample t-test from summary statistics (Welch–Satterthwaite degrees of freedom);
    None when both samples have no spread (the test is undefined) or a sample has fewer than two values."""
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = sd1 * sd1 / n1, sd2 * sd2 / n2
    if v1 + v2 == 0:
        return None if mean1 == mean2 else 0.0
    t = (mean1 - mean2) / math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / ((v1 * v1 / (n1 - 1) if v1 else 0.0) + (v2 * v2 / (n2 - 1) if v2 else 0.0))
    return _student_two_sided(abs(t), df)


def _student_two_sided(t: float, df: float) -> float:
    """P(|T| ≥ t) for Student's t with `df` degrees of freedom: the regularised incomplete beta I_x(df/2, 1/2)."""
    return _betainc(df / 2, 0.5, df / (df + t * t))


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes' Lentz form)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return front * f / a
