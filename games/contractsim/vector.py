"""Many ContractSim games stepped at once in compiled code, one seat learning: the engine behind the vectorised
RL environment. The game is `game.State`'s, on plain arrays: the week verdicts, next memory, deduction and
required quantities are the interpreter's own round tables (`batch.verdicts`), the shocks the [CS-11] layout of
`shocks.draw_shocks`, and the other seat one of the rational policies of the batch engine (RC, RCC, RE), so a
game played here is the game `State` plays for the same seed and actions (a test checks that game by game)."""

from __future__ import annotations

import numpy as np
from numba import njit

from contractlang.ir import ContractSimIR
from games.contractsim.batch import POLICIES, verdicts
from games.contractsim.game import ContractSimGame
from solver.environment import SupplyEnvironment

# columns of the state array, one row per game
WEEK, PHASE, CASH, LEFT, INV, MU, PENDING, FIRST_C, FIRST_S, PAID, SPEND, VALUE, RECEIVED, SPOILED, UPREV = (
    0,
    1,
    2,
    3,
    4,  # 4, 5, 6
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,  # 14, 15, 16
    17,  # 17, 18, 19
    20,
)
COLUMNS = 21
PAY, ORDER, PRODUCE, OVER = 0, 1, 2, 3
NEVER = 99
SUPPLIER_FEATURES = 26
CUSTOMER_FEATURES = 5


def shock_arrays(env: SupplyEnvironment, uniform: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spoilage, prices and receipt uniforms of games whose (5, 3, 3) uniform blocks are `uniform[g]`, read as
    `draw_shocks` reads one block ([CS-11]): a game seeded `s` has the block `default_rng(s).random((5, 3, 3))`."""
    spoil = np.floor(uniform[..., 0] * (env.spoilage_max + 1)).astype(np.int64)
    prices = np.empty(uniform.shape[:-1], dtype=np.int64)
    for x, law in enumerate(env.price_laws):
        values = np.array([v for v, _ in law], dtype=np.int64)
        k = np.searchsorted(np.cumsum([p for _, p in law]), uniform[..., x, 1], side="right")
        prices[..., x] = values[np.minimum(k, len(law) - 1)]
    return spoil, prices, np.ascontiguousarray(uniform[..., 2])


@njit(cache=True)
def _utility(st, g, supplier_learns, budget):
    if supplier_learns:
        return st[g, PAID] - st[g, SPEND]
    return budget + st[g, VALUE] - st[g, PAID]


@njit(cache=True)
def _pay(st, g, amount, due, week_ok, week_seen):
    """A payment week closes ([CS-05]): the monitor's compliance paid ≥ due, f_Cust, and the next production
    week's spoilage is left to `_start_production`."""
    w = st[g, WEEK]
    st[g, LEFT] -= amount
    st[g, CASH] += amount
    st[g, PAID] += amount
    week_seen[g, w - 1] = st[g, FIRST_S] < w
    week_ok[g, w - 1] = amount >= due
    if amount < due and st[g, FIRST_C] == NEVER:
        st[g, FIRST_C] = w
    st[g, PENDING] = 0


@njit(cache=True)
def _start_production(st, g, spoil):
    """Spoilage hits leftover inventory at the start of every production week ([CS-06])."""
    w = st[g, WEEK] + 1
    t = w // 2 - 1
    st[g, WEEK] = w
    st[g, PHASE] = ORDER
    for x in range(3):
        lost = min(spoil[g, t, x], st[g, INV + x])
        st[g, INV + x] -= lost
        st[g, SPOILED + x] = lost


@njit(cache=True)
def _order(st, g, q0, q1, q2, prices, uniform, receipt_low, inventory_cap):
    """Inputs bought at this week's prices and received as the [CS-11] receipt law draws them."""
    t = st[g, WEEK] // 2 - 1
    cost = q0 * prices[g, t, 0] + q1 * prices[g, t, 1] + q2 * prices[g, t, 2]
    for x in range(3):
        q = q0 if x == 0 else (q1 if x == 1 else q2)
        lo = receipt_low[q]
        got = lo + int(uniform[g, t, x] * (q - lo + 1))
        st[g, RECEIVED + x] = got
        st[g, INV + x] = min(inventory_cap, st[g, INV + x] + got)
    st[g, CASH] -= cost
    st[g, SPEND] += cost
    st[g, PHASE] = PRODUCE


@njit(cache=True)
def _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta):
    """A production week closes: the interpreter's round table gives the verdict, δ and the next memory."""
    w = st[g, WEEK]
    t = w // 2 - 1
    mu = st[g, MU]
    st[g, INV] -= y0 + y1
    st[g, INV + 1] -= y0 + y1
    st[g, INV + 2] -= y0 + y2
    bad = violation[t, mu, y0, y1, y2]
    week_seen[g, w - 1] = st[g, FIRST_C] < w
    week_ok[g, w - 1] = not bad
    if bad and st[g, FIRST_S] == NEVER:
        st[g, FIRST_S] = w
    st[g, PENDING] = deduction[t, mu, y0, y1, y2]
    week_delta[g, t] = st[g, PENDING]
    st[g, MU] = new_memory[t, mu, y0, y1, y2]
    st[g, VALUE] += values[0] * y0 + values[1] * y1 + values[2] * y2
    st[g, WEEK] = w + 1
    st[g, PHASE] = PAY


@njit(cache=True)
def _due(st, g, payments):
    """due_w = M_w − min(δ_w, M_w) (ContractSim paper, Sec. 3), as `rounds.payment_due` computes it."""
    nominal = payments[st[g, WEEK] // 2]
    return nominal - min(st[g, PENDING], nominal)


@njit(cache=True)
def _customer_pays(st, g, policy, payments):
    """The rational Customers (ContractSim paper, App. C.1; eq. 7): RC pays what is due, RCC until it observes a
    Supplier breach, RE nothing."""
    if policy == 2 or (policy == 1 and st[g, FIRST_S] < st[g, WEEK]):
        return 0
    return min(st[g, LEFT], _due(st, g, payments))


@njit(cache=True)
def _supplier_plays(st, g, policy, prices, scenario, uniform, policies, boxes, cash_max, receipt_low, output, cap, t):
    """The rational Suppliers' order (the DP table) and production (the fixed rule [CS-24] it was solved with),
    as the batch engine plays them; RCC and RE order and produce nothing once the Customer breached / always."""
    if policy == 2 or (policy == 1 and st[g, FIRST_C] < st[g, WEEK]):
        _order(st, g, 0, 0, 0, prices, uniform, receipt_low, cap)
        return 0, 0, 0
    box = boxes[t]
    o = policies[t][
        st[g, MU],
        min(st[g, INV], box[0]),
        min(st[g, INV + 1], box[1]),
        min(st[g, INV + 2], box[2]),
        min(st[g, CASH], cash_max[t]),
        scenario[g, t],
    ]
    if o < 0:
        raise ValueError("a game reached a state the order table does not solve")
    _order(st, g, o // 169, (o // 13) % 13, o % 13, prices, uniform, receipt_low, cap)
    side = cap + 1
    rule = output[t, st[g, MU], (st[g, INV] * side + st[g, INV + 1]) * side + st[g, INV + 2]]
    return rule[0], rule[1], rule[2]


@njit(cache=True)
def _legal(st, g, supplier_learns, index, side, prices):
    """Whether the learner's action index is legal now ([CS-05]-[CS-07]), as the environments' masks say."""
    if not supplier_learns:
        return index <= st[g, LEFT]
    q0, q1, q2 = index // (side * side), (index // side) % side, index % side
    if st[g, PHASE] == ORDER:
        t = st[g, WEEK] // 2 - 1
        return q0 * prices[g, t, 0] + q1 * prices[g, t, 1] + q2 * prices[g, t, 2] <= st[g, CASH]
    return q0 + q1 <= min(st[g, INV], st[g, INV + 1]) and q0 + q2 <= st[g, INV + 2]


@njit(cache=True)
def _observe(st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask):
    """The learner's features (the layout of `ContractSimCore.observation`) and action mask."""
    w = st[g, WEEK]
    over = st[g, PHASE] == OVER
    if not supplier_learns:
        acting = st[g, PHASE] == PAY and not over
        left = st[g, LEFT]
        obs[g, 0] = w
        obs[g, 1] = st[g, PAID]
        obs[g, 2] = left
        obs[g, 3] = _due(st, g, payments) if acting else 0
        obs[g, 4] = 0 if over else st[g, FIRST_S] < w
        if with_mask:
            mask[g, :] = 0
            if acting:
                mask[g, : left + 1] = 1
        return
    acting = st[g, PHASE] == ORDER or st[g, PHASE] == PRODUCE
    t = w // 2 - 1 if acting else -1
    mu = st[g, MU]
    obs[g, 0] = w
    obs[g, 1] = st[g, PHASE] == PRODUCE
    obs[g, 2] = t
    obs[g, 3] = st[g, CASH]
    for x in range(3):
        obs[g, 4 + x] = st[g, INV + x]
        obs[g, 7 + x] = prices[g, t, x] if acting else 0
        obs[g, 10 + x] = st[g, SPOILED + x]
        obs[g, 13 + x] = st[g, RECEIVED + x]
        obs[g, 17 + x] = required[t, mu, x] if acting else 0
        obs[g, 20 + x] = memory_states[mu, x]
    obs[g, 16] = order_cap
    obs[g, 23] = 0 if over else st[g, FIRST_C] < w
    obs[g, 24] = st[g, PAID]
    obs[g, 25] = st[g, SPEND]
    if not with_mask:
        return
    mask[g, :] = 0
    if not acting:
        return
    side = order_cap + 1
    if st[g, PHASE] == ORDER:  # q·p ≤ cash: for each (q0, q1) a run of q2 from 0
        p0, p1, p2, cash = prices[g, t, 0], prices[g, t, 1], prices[g, t, 2], st[g, CASH]
        for q0 in range(side):
            for q1 in range(side):
                rest = cash - q0 * p0 - q1 * p1
                if rest < 0:
                    break
                top = side - 1 if p2 == 0 else min(side - 1, rest // p2)
                base = (q0 * side + q1) * side
                mask[g, base : base + top + 1] = 1
        return
    both, third = min(st[g, INV], st[g, INV + 1]), st[g, INV + 2]  # q0 + q1 ≤ min(n0, n1), q0 + q2 ≤ n2
    for q0 in range(min(side - 1, both, third) + 1):
        for q1 in range(min(side - 1, both - q0) + 1):
            base = (q0 * side + q1) * side
            mask[g, base : base + min(side - 1, third - q0) + 1] = 1


@njit(cache=True)
def _advance(
    st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, boxes, cash_max, receipt_low,
    output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """The other seat moves until the learner is asked or the game is over."""
    while True:
        phase = st[g, PHASE]
        if phase == OVER:
            return
        if phase == PAY:
            week_due[g, st[g, WEEK] // 2] = _due(st, g, payments)
            if not supplier_learns:
                return
            _pay(st, g, _customer_pays(st, g, opponent, payments), _due(st, g, payments), week_ok, week_seen)
            if st[g, WEEK] == 11:
                st[g, PHASE] = OVER
                st[g, WEEK] = 12
                return
            _start_production(st, g, spoil)
            continue
        if supplier_learns:
            return
        t = st[g, WEEK] // 2 - 1
        y0, y1, y2 = _supplier_plays(
            st, g, opponent, prices, scenario, uniform, policies, boxes, cash_max, receipt_low, output, cap, t
        )
        _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta)


@njit(cache=True)
def _step(
    actions, st, active, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, boxes, cash_max,
    receipt_low, output, violation, new_memory, deduction, required, memory_states, payments, values, budget,
    cap, order_cap, obs, mask, with_mask, reward, done, fallback, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """Every active game takes its learner's action (a masked one falls back to the zero action, flagged in
    `fallback`), then the other seat moves; rewards are the learner's utility changes."""
    side = order_cap + 1
    for g in range(st.shape[0]):
        if not active[g]:
            continue
        a = actions[g]
        ok = 0 <= a < mask.shape[1] and _legal(st, g, supplier_learns, a, side, prices)
        fallback[g] = not ok
        if not ok:
            a = 0
        phase = st[g, PHASE]
        if phase == PAY:
            _pay(st, g, a, _due(st, g, payments), week_ok, week_seen)
            if st[g, WEEK] == 11:
                st[g, PHASE] = OVER
                st[g, WEEK] = 12
            else:
                _start_production(st, g, spoil)
        elif phase == ORDER:
            _order(st, g, a // (side * side), (a // side) % side, a % side, prices, uniform, receipt_low, cap)
        else:
            y0, y1, y2 = a // (side * side), (a // side) % side, a % side
            _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta)
        _advance(
            st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, boxes, cash_max,
            receipt_low, output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen,
            week_due, week_delta,
        )  # fmt: skip
        u = _utility(st, g, supplier_learns, budget)
        reward[g] = u - st[g, UPREV]
        st[g, UPREV] = u
        done[g] = st[g, PHASE] == OVER
        _observe(st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask)


@njit(cache=True)
def _begin(
    games, st, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, boxes, cash_max,
    receipt_low, output, violation, new_memory, deduction, required, memory_states, payments, values, budget,
    capital, cap, order_cap, obs, mask, with_mask, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """New games in rows `games`: the initial state, then the other seat's first moves."""
    for g in games:
        st[g, :] = 0
        st[g, WEEK] = 1
        st[g, PHASE] = PAY
        st[g, CASH] = capital
        st[g, LEFT] = budget
        st[g, FIRST_C] = NEVER
        st[g, FIRST_S] = NEVER
        week_ok[g, :] = 1
        week_seen[g, :] = 0
        week_due[g, :] = 0
        week_delta[g, :] = 0
        st[g, UPREV] = _utility(st, g, supplier_learns, budget)
        _advance(
            st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, boxes, cash_max,
            receipt_low, output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen,
            week_due, week_delta,
        )  # fmt: skip
        _observe(st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask)


class VectorGames:
    """`n` games of `ir` in `env`, the learner in `role`, the other seat the rational `opponent` (rc, rcc, re).
    Arrays are shared and rewritten in place: `obs`, `mask`, `reward`, `done`, `fallback`; per game and week
    `week_ok` (week-local compliance c_{i,w}) and `week_seen` (D, eq. 16), per payment week `week_due`, per
    production week `week_delta` (the deduction δ it generated)."""

    def __init__(self, ir: ContractSimIR, env: SupplyEnvironment, n: int, role: str, opponent: str, tables=None):
        if role not in ("customer", "supplier"):
            raise ValueError(f"role: {role!r}; customer or supplier")
        if opponent not in POLICIES:
            raise ValueError(f"opponent: {opponent!r}; the vectorised engine plays {', '.join(POLICIES)}")
        compiled = ContractSimGame.make(ir, env).compiled
        self.env, self.ir, self.n = env, ir, n
        self.supplier_learns = role == "supplier"
        self.opponent = POLICIES.index(opponent)
        self.violation, self.new_memory, self.deduction, self.required = verdicts(compiled)
        self.memory_states = np.ascontiguousarray(compiled.memory_states, dtype=np.int64)
        self.payments = np.array(compiled.ir.payments, dtype=np.int64)  # base units, as the game pays
        self.values = np.array(env.values, dtype=np.int64)
        self.receipt_low = np.array([env.receipt_low(o) for o in range(env.order_cap + 1)], dtype=np.int64)
        side = env.order_cap + 1
        self.actions = env.budget + 1 if role == "customer" else side**3
        self.features = SUPPLIER_FEATURES if self.supplier_learns else CUSTOMER_FEATURES
        self._rational_supplier(tables, role)
        self.st = np.zeros((n, COLUMNS), dtype=np.int64)
        self.spoil = np.zeros((n, 5, 3), dtype=np.int64)
        self.prices = np.zeros((n, 5, 3), dtype=np.int64)
        self.uniform = np.zeros((n, 5, 3))
        self.scenario = np.zeros((n, 5), dtype=np.int64)
        self.obs = np.zeros((n, self.features))
        self.mask = np.zeros((n, self.actions), dtype=np.int8)
        self.reward = np.zeros(n)
        self.done = np.zeros(n, dtype=np.bool_)
        self.fallback = np.zeros(n, dtype=np.bool_)
        self.week_ok = np.ones((n, 11), dtype=np.int8)
        self.week_seen = np.zeros((n, 11), dtype=np.int8)
        self.week_due = np.zeros((n, 6), dtype=np.int64)
        self.week_delta = np.zeros((n, 5), dtype=np.int64)
        self.with_mask = True

    def _rational_supplier(self, tables, role: str) -> None:
        """The DP order table an RC or RCC Supplier plays from (a Customer learner's opponent); none otherwise."""
        from solver.dp.induction import scenario_index
        from solver.dp.problem import ORDER_SIDE

        empty = np.zeros((1, 1, 1, 1, 1, 1), dtype=np.int16)
        self.policies = (empty,) * 5
        self.boxes = np.zeros((5, 3), dtype=np.int64)
        self.cash_max = np.zeros(5, dtype=np.int64)
        self.output = np.zeros((5, 1, 1, 3), dtype=np.int64)
        self._scenario_of = None
        if role == "supplier" or POLICIES[self.opponent] == "re":
            return
        if self.env.order_cap + 1 != ORDER_SIDE:
            raise ValueError("the DP's order table covers an order cap of 12")
        from games.contractsim.play import SESSION_TABLES

        _, table, _ = (tables or SESSION_TABLES).solve(self.ir, self.env)
        problem = table.problem
        self.policies = table.policies
        self.boxes = np.array([problem.state_box(t) for t in range(5)], dtype=np.int64)
        self.cash_max = problem.cash_max.astype(np.int64)
        self.output = problem.output
        self._scenario_of = lambda p: scenario_index(problem, p)

    def _args(self):
        return (
            self.spoil,
            self.prices,
            self.scenario,
            self.uniform,
            self.policies,
            self.boxes,
            self.cash_max,
            self.receipt_low,
            self.output,
            self.violation,
            self.new_memory,
            self.deduction,
            self.required,
            self.memory_states,
            self.payments,
            self.values,
            self.env.budget,
        )

    def begin(self, games: np.ndarray, uniform: np.ndarray) -> None:
        """New games in rows `games`, the shocks of each read from its (5, 3, 3) uniform block ([CS-11])."""
        spoil, prices, receipts = shock_arrays(self.env, uniform)
        self.spoil[games], self.prices[games], self.uniform[games] = spoil, prices, receipts
        if self._scenario_of is not None:
            self.scenario[games] = [[self._scenario_of(p) for p in game] for game in prices]
        _begin(
            games.astype(np.int64), self.st, self.supplier_learns, self.opponent, *self._args(), self.env.capital,
            self.env.inventory_cap, self.env.order_cap, self.obs, self.mask, self.with_mask, self.week_ok,
            self.week_seen, self.week_due, self.week_delta,
        )  # fmt: skip

    def step(self, actions: np.ndarray, active: np.ndarray) -> None:
        _step(
            actions, self.st, active, self.supplier_learns, self.opponent, *self._args(), self.env.inventory_cap,
            self.env.order_cap, self.obs, self.mask, self.with_mask, self.reward, self.done, self.fallback,
            self.week_ok, self.week_seen, self.week_due, self.week_delta,
        )  # fmt: skip

    def utilities(self) -> np.ndarray:
        """(U_Cust, U_Supp) of every game now (ContractSim paper, Sec. 3), base units."""
        st = self.st
        return np.stack([self.env.budget + st[:, VALUE] - st[:, PAID], st[:, PAID] - st[:, SPEND]], axis=1)

    def first_violations(self) -> np.ndarray:
        """(f_Cust, f_Supp) of every game (ContractSim paper, App. C.6), 0 for never."""
        first = self.st[:, [FIRST_C, FIRST_S]]
        return np.where(first == NEVER, 0, first)
