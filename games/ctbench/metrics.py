"""CT-Bench metrics (CT-Bench paper, Sec. 2.3): per game, then per condition with 95% Student-t intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable

from contractlang.vocab import Frozen
from games.agents import agent_name
from games.ctbench.board import MAX_JOINT_REWARD
from games.ctbench.play import GameRecord


class GameMetrics(Frozen):
    normalised_reward: float
    joint_reward: int
    gini: float
    both_finished: float
    bbb: float | None  # Asymmetric boards only
    defection: float | None  # games with no coverage attempt are excluded ([CT-35])
    trade_volume: int  # chips exchanged in executed trades: the paper's Trade Vol (its logs' chips received)
    contract_active: float
    contract_moves: int
    arrangements_proposed: int
    arrangements_accepted: int


def gini(r1: int, r2: int) -> float:
    """e = (r_high − r_low) / (2 (r_high + r_low)); 0 when both are 0 ([CT-34])."""
    lo, hi = sorted((r1, r2))
    return 0.0 if hi + lo == 0 else (hi - lo) / (2 * (hi + lo))


def game_metrics(g: GameRecord) -> GameMetrics:
    red, blue = g.scores
    attempts = g.stats.honoured + g.stats.unfulfilled
    return GameMetrics(
        normalised_reward=(red + blue) / MAX_JOINT_REWARD,
        joint_reward=red + blue,
        gini=gini(red, blue),
        both_finished=float(len(g.finished) == 2),
        bbb=float(red > g.baselines[0] and blue > g.baselines[1]) if g.board_class == "asymmetric" else None,
        defection=g.stats.unfulfilled / attempts if attempts else None,
        trade_volume=g.stats.chips_traded,
        contract_active=float(g.contract_active),
        contract_moves=g.stats.contract_moves,
        arrangements_proposed=g.stats.arrangements_proposed,
        arrangements_accepted=g.stats.arrangements_accepted,
    )


class Interval(Frozen):
    mean: float | None
    half_width: float | None
    n: int

    def text(self, digits: int = 2) -> str:
        if self.mean is None:
            return "–"
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def t_interval(values: Iterable[float | None]) -> Interval:
    """Mean ± t_{0.975, n−1} · s / √n over the defined values ([CT-38])."""
    xs = [float(v) for v in values if v is not None]
    n = len(xs)
    if n == 0:
        return Interval(mean=None, half_width=None, n=0)
    mean = sum(xs) / n
    if n == 1:
        return Interval(mean=mean, half_width=0.0, n=1)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    # imported here: scipy.stats takes over a second to import, and most commands that load this module
    # (every CT-Bench sweep, replay and report) reach a t-quantile only after their real work
    from scipy import stats

    return Interval(mean=mean, half_width=float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n), n=n)


COLUMNS = {
    "pfp": ("normalised_reward", "gini", "both_finished", "bbb", "defection", "contract_active"),
    "trade": ("normalised_reward", "gini", "both_finished", "bbb", "trade_volume", "contract_active"),
}
TITLES = {
    "normalised_reward": "R̂",
    "gini": "Gini",
    "both_finished": "Both Fin",
    "bbb": "BBB",
    "defection": "Defection",
    "trade_volume": "Trade Vol",
    "contract_active": "Contract Acc",
    "contract_moves": "Contract moves",
}


class TableRow(Frozen):
    condition: str
    mode: str
    agents: str
    rules: str  # the rule set the games' contracts were enforced by ([CT-24a])
    games: int
    cells: dict[str, Interval]


def summarise(records: list[GameRecord]) -> list[TableRow]:
    """One row per (condition, mode, agent pairing, rule set), columns as in the paper's Tables 1–8."""
    groups: dict[tuple[str, str, str, str], list[GameMetrics]] = {}
    for g in records:
        key = (g.condition, g.mode, f"{agent_name(g.red_agent)} vs {agent_name(g.blue_agent)}", g.rules)  # labels
        groups.setdefault(key, []).append(game_metrics(g))
    rows = []
    for (condition, mode, agents, rules), ms in sorted(groups.items()):
        cols = COLUMNS[mode] + ("contract_moves",)
        if condition == "none":
            cols = tuple(c for c in cols if c != "contract_active")
        cells = {c: t_interval(getattr(m, c) for m in ms) for c in cols}
        rows.append(TableRow(condition=condition, mode=mode, agents=agents, rules=rules, games=len(ms), cells=cells))
    return rows
