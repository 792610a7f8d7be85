"""The simulator against the exact DP: RCC-vs-RCC games on the batch engine compared with
P_sat and the expected utilities, each difference in standard errors of the sample mean."""

from __future__ import annotations

import math

import numpy as np

from contractlang.ir import ContractSimIR
from contractlang.vocab import Frozen
from games.contractsim.batch import play_batch
from games.contractsim.play import SESSION_TABLES
from solver.dp import TableCache
from solver.environment import SupplyEnvironment

MAX_UTILITY = 1_000  # no utility in the bundled settings reaches $1,000 in base units


class Agreement(Frozen):
    """One quantity: the exact value, the sample mean, their difference in standard errors, and whether
    it is within 3 of them (allowing for events too rare to have shown up in the sample)."""

    exact: float
    sample: float
    z: float | None  # None when the sample has no variance
    agrees: bool


class CrossCheck(Frozen):
    contract: str
    env: int
    games: int
    violation_free: Agreement  # share of games without a violation vs P_sat
    u_customer: Agreement | None  # None when the schedule exceeds the budget (the DP leaves U to the simulator)
    u_supplier: Agreement | None

    @property
    def agrees(self) -> bool:
        return all(a is None or a.agrees for a in (self.violation_free, self.u_customer, self.u_supplier))


def _agreement(sample: np.ndarray, exact: float, se: float, slack: float) -> Agreement:
    gap = float(sample.mean()) - exact
    rounding = 1e-9 * max(1.0, abs(exact))  # the enumeration's float error on figures up to $270,000
    return Agreement(
        exact=exact,
        sample=float(sample.mean()),
        z=gap / se if se > 0 else None,
        agrees=abs(gap) <= 3 * se + slack + rounding,
    )


def cross_check(
    ir: ContractSimIR, env: SupplyEnvironment, games: int, tables: TableCache = SESSION_TABLES
) -> CrossCheck:
    """Play `games` seeded RCC-vs-RCC games and compare them with the table's exact figures. When violations
    are too rare to expect even 3 in the sample ((1 − P_sat) · games < 3) they may be missing from it, which
    then has no variance for them; they move a mean utility by at most (1 − P_sat) × MAX_UTILITY, which is
    allowed for in that case only."""
    result, _, _ = tables.solve(ir, env)
    runs = play_batch(ir, env, "rcc", "rcc", range(games), tables=tables)
    ok = np.array([all(w.compliant for w in r.weeks) for r in runs], float)
    rare = 1.0 - result.p_sat
    too_rare = rare * games < 3
    share = _agreement(ok, result.p_sat, math.sqrt(result.p_sat * rare / games), 0.0)
    if ok.all() and too_rare:
        share = share.model_copy(update={"agrees": True})
    m = ir.setting_info.multiplier
    utilities = []
    for exact, column in ((result.u_customer, "u_customer"), (result.u_supplier, "u_supplier")):
        if exact is None:
            utilities.append(None)
            continue
        sample = np.array([getattr(r, column) for r in runs], float) * m
        se = float(sample.std(ddof=1)) / math.sqrt(games)
        utilities.append(_agreement(sample, exact, se, rare * MAX_UTILITY * m if too_rare else 0.0))
    return CrossCheck(
        contract=ir.name,
        env=env.id,
        games=games,
        violation_free=share,
        u_customer=utilities[0],
        u_supplier=utilities[1],
    )
