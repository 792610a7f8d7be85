"""Many ContractSim games stepped at once in compiled code, one seat learning: the engine behind the vectorised
RL environment. The game is `game.State`'s, on plain arrays: the week verdicts, next memory, deduction and
required quantities are the interpreter's own round tables (`batch.verdicts`), the shocks the [CS-11] layout of
`shocks.draw_shocks`, and the other seat one of the rational policies of the batch engine (RC, RCC, RE), so a
game played here is the game `State` plays for the same seed and actions (a test checks that game by game)."""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from contractlang.ir import ContractSimIR
from games.contractsim.batch import POLICIES, verdicts
from games.contractsim.game import ContractSimGame
from solver.environment import SupplyEnvironment

# columns of the state array, one row per game
WEEK, PHASE, CASH, LEFT, INV, MU, PENDING, FIRST_C, FIRST_S, PAID, SPEND, VALUE, RECEIVED, SPOILED, UPREV, COVER = (
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
    21,  # the rational Supplier's table: 0 the schedule's, 1 the budget's once the Customer left the schedule
)
COLUMNS = 22
PAY, ORDER, PRODUCE, OVER = 0, 1, 2, 3
NEVER = 99
SUPPLIER_FEATURES = 26
CUSTOMER_FEATURES = 5


def shock_arrays(env: SupplyEnvironment, uniform: np.ndarray) -> tuple[np.ndarray, ...]:
    """Spoilage, prices, receipt uniforms and price scenarios (indices into `price_triples(env)`) of games whose
    (5, 3, 3) uniform blocks are `uniform[g]`, read as `draw_shocks` reads one block ([CS-11]): a game seeded `s`
    has the block `default_rng(s).random((5, 3, 3))`."""
    spoil = np.floor(uniform[..., 0] * (env.spoilage_max + 1)).astype(np.int64)
    prices = np.empty(uniform.shape[:-1], dtype=np.int64)
    scenario = np.zeros(uniform.shape[:-2], dtype=np.int64)
    for x, law in enumerate(env.price_laws):
        values = np.array([v for v, _ in law], dtype=np.int64)
        k = np.minimum(np.searchsorted(np.cumsum([p for _, p in law]), uniform[..., x, 1], side="right"), len(law) - 1)
        prices[..., x] = values[k]
        scenario = scenario * len(law) + k
    return spoil, prices, np.ascontiguousarray(uniform[..., 2]), scenario


def price_triples(env: SupplyEnvironment) -> np.ndarray:
    """Every price triple the laws can draw, in the order of `shock_arrays`' scenario index."""
    return np.array(list(itertools.product(*([v for v, _ in law] for law in env.price_laws))), dtype=np.int64)


@njit(cache=True, inline="always")
def _utility(st, g, supplier_learns, budget):
    if supplier_learns:
        return st[g, PAID] - st[g, SPEND]
    return budget + st[g, VALUE] - st[g, PAID]


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _start_production(st, g, spoil):
    """Spoilage hits leftover inventory at the start of every production week ([CS-06])."""
    w = st[g, WEEK] + 1
    t = (w >> 1) - 1
    st[g, WEEK] = w
    st[g, PHASE] = ORDER
    for x in range(3):
        lost = min(spoil[g, t, x], st[g, INV + x])
        st[g, INV + x] -= lost
        st[g, SPOILED + x] = lost


@njit(cache=True, inline="always")
def _order(st, g, q0, q1, q2, prices, uniform, receipt_low, inventory_cap):
    """Inputs bought at this week's prices and received as the [CS-11] receipt law draws them."""
    t = (st[g, WEEK] >> 1) - 1
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


@njit(cache=True, inline="always")
def _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta):
    """A production week closes: the interpreter's round table gives the verdict, δ and the next memory."""
    w = st[g, WEEK]
    t = (w >> 1) - 1
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


@njit(cache=True, inline="always")
def _due(st, g, payments):
    """due_w = M_w − min(δ_w, M_w) (ContractSim paper, Sec. 3), as `rounds.payment_due` computes it."""
    nominal = payments[(st[g, WEEK] >> 1)]
    return nominal - min(st[g, PENDING], nominal)


@njit(cache=True, inline="always")
def _customer_pays(st, g, policy, payments):
    """The rational Customers (ContractSim paper, App. C.1; eq. 7): RC pays what is due, RCC until it observes a
    Supplier breach, RE nothing."""
    if policy == 2 or (policy == 1 and st[g, FIRST_S] < st[g, WEEK]):
        return 0
    return min(st[g, LEFT], _due(st, g, payments))


@njit(cache=True, inline="always")
def _entry(st, g, c, t, offsets, shapes, boxes, cash_max):
    """Where the orders of the state (one per price scenario) start in table `c`'s flattened round `t`, the
    inventory and cash clamped to the table's box as `OrderTable._entry` clamps them."""
    i = st[g, MU] * shapes[c, t, 1] + min(st[g, INV], boxes[c, t, 0])
    i = i * shapes[c, t, 2] + min(st[g, INV + 1], boxes[c, t, 1])
    i = i * shapes[c, t, 3] + min(st[g, INV + 2], boxes[c, t, 2])
    i = i * shapes[c, t, 4] + min(st[g, CASH], cash_max[c, t])
    return offsets[c, t] + i * shapes[c, t, 5]


@njit(cache=True, inline="always")
def _solved(st, g, c, t, policies, offsets, shapes, boxes, cash_max, whole):
    """`OrderTable.solved`: the table covers the cash (`whole`: every cash acts alike beyond its top) and
    holds an order for every price scenario of the state."""
    if not (whole[c, t] or st[g, CASH] <= cash_max[c, t]):
        return False
    start = _entry(st, g, c, t, offsets, shapes, boxes, cash_max)
    for k in range(shapes[c, t, 5]):
        if policies[start + k] < 0:
            return False
    return True


@njit(cache=True, inline="always")
def _supplier_plays(
    st, g, policy, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole, receipt_low, output,
    cap, t,
):  # fmt: skip
    """The rational Suppliers' order (the DP table) and production (the fixed rule [CS-24] it was solved with),
    as the batch engine plays them; RCC and RE order and produce nothing once the Customer breached / always."""
    if policy == 2 or (policy == 1 and st[g, FIRST_C] < st[g, WEEK]):
        _order(st, g, 0, 0, 0, prices, uniform, receipt_low, cap)
        return 0, 0, 0
    c = st[g, COVER]
    if c == 0 and not _solved(st, g, 0, t, policies, offsets, shapes, boxes, cash_max, whole):
        c = 1  # the Customer paid off schedule: the budget's table from now on, as the RC agent switches
        st[g, COVER] = 1
    o = policies[_entry(st, g, c, t, offsets, shapes, boxes, cash_max) + scenario[g, t]]
    if o < 0:
        raise ValueError("a game reached a state the order table does not solve")
    _order(st, g, o // 169, (o // 13) % 13, o % 13, prices, uniform, receipt_low, cap)
    side = cap + 1
    k = (st[g, INV] * side + st[g, INV + 1]) * side + st[g, INV + 2]
    mu = st[g, MU]
    return output[c, t, mu, k, 0], output[c, t, mu, k, 1], output[c, t, mu, k, 2]


@njit(cache=True, inline="always")
def _legal(st, g, supplier_learns, index, price_id, costs, producible):
    """Whether the learner's action index is legal now ([CS-05]-[CS-07]), as the environments' masks say."""
    if not supplier_learns:
        return index <= st[g, LEFT]
    if st[g, PHASE] == ORDER:
        return costs[price_id[g, (st[g, WEEK] >> 1) - 1], index] <= min(st[g, CASH], 32767)
    return producible[min(st[g, INV], st[g, INV + 1]), st[g, INV + 2], index] == 1


@njit(cache=True, inline="always")
def _observe(
    st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask, price_id,
    costs, producible,
):  # fmt: skip
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
            out = mask[g]
            for i in range(out.shape[0]):
                out[i] = acting and i <= left
        return
    acting = st[g, PHASE] == ORDER or st[g, PHASE] == PRODUCE
    t = (w >> 1) - 1 if acting else -1
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
    if not acting:
        out = mask[g]
        for i in range(out.shape[0]):
            out[i] = 0
    elif st[g, PHASE] == ORDER:  # q·p ≤ cash, over the costs of every order at this week's prices
        row, cash = costs[price_id[g, t]], np.int16(min(st[g, CASH], 32767))
        out = mask[g]
        for i in range(row.shape[0]):
            out[i] = row[i] <= cash
    else:  # q0 + q1 ≤ min(n0, n1), q0 + q2 ≤ n2, tabulated by those two bounds
        row, out = producible[min(st[g, INV], st[g, INV + 1]), st[g, INV + 2]], mask[g]
        for i in range(row.shape[0]):  # an explicit loop: numba's slice assignment copies element by element slowly
            out[i] = row[i]


@njit(cache=True, inline="always")
def _advance(
    st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole, receipt_low,
    output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """The other seat moves until the learner is asked or the game is over."""
    while True:
        phase = st[g, PHASE]
        if phase == OVER:
            return
        if phase == PAY:
            week_due[g, (st[g, WEEK] >> 1)] = _due(st, g, payments)
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
        t = (st[g, WEEK] >> 1) - 1
        y0, y1, y2 = _supplier_plays(
            st,
            g,
            opponent,
            prices,
            scenario,
            uniform,
            policies,
            offsets,
            shapes,
            boxes,
            cash_max,
            whole,
            receipt_low,
            output,
            cap,
            t,
        )
        _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta)


# The two kernels allocate nothing, so they run without numba's reference counting: with it, every array handed
# to an inlined helper is counted up and down per game with atomic operations, which cost more than the game.
@njit(cache=True, _nrt=False)
def _step(
    actions, st, active, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole,
    receipt_low, output, violation, new_memory, deduction, required, memory_states, payments, values, budget,
    price_id, costs, producible, triples, cap, order_cap, obs, mask, with_mask, reward, done, fallback, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """Every active game takes its learner's action (a masked one falls back to the zero action, flagged in
    `fallback`), then the other seat moves; rewards are the learner's utility changes."""
    for g in range(st.shape[0]):
        if not active[g] or st[g, PHASE] == OVER:  # an ended game waits for `begin`
            done[g] = st[g, PHASE] == OVER
            reward[g] = 0.0
            continue
        a = actions[g]
        ok = 0 <= a < mask.shape[1] and _legal(st, g, supplier_learns, a, price_id, costs, producible)
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
            _order(st, g, triples[a, 0], triples[a, 1], triples[a, 2], prices, uniform, receipt_low, cap)
        else:
            y0, y1, y2 = triples[a, 0], triples[a, 1], triples[a, 2]
            _produce(st, g, y0, y1, y2, violation, new_memory, deduction, values, week_ok, week_seen, week_delta)
        _advance(
            st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole,
            receipt_low, output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen,
            week_due, week_delta,
        )  # fmt: skip
        u = _utility(st, g, supplier_learns, budget)
        reward[g] = u - st[g, UPREV]
        st[g, UPREV] = u
        done[g] = st[g, PHASE] == OVER
        _observe(
            st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask,
            price_id, costs, producible,
        )  # fmt: skip


@njit(cache=True, _nrt=False)
def _begin(
    games, st, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole,
    receipt_low, output, violation, new_memory, deduction, required, memory_states, payments, values, budget,
    price_id, costs, producible, triples, capital, cap, order_cap, obs, mask, with_mask, week_ok, week_seen, week_due, week_delta,
):  # fmt: skip
    """New games in rows `games`: the initial state, then the other seat's first moves."""
    for g in games:
        for k in range(st.shape[1]):  # explicit loops: numba's slice assignment is slow per row
            st[g, k] = 0
        st[g, WEEK] = 1
        st[g, PHASE] = PAY
        st[g, CASH] = capital
        st[g, LEFT] = budget
        st[g, FIRST_C] = NEVER
        st[g, FIRST_S] = NEVER
        for w in range(11):
            week_ok[g, w] = 1
            week_seen[g, w] = 0
        for k in range(6):
            week_due[g, k] = 0
        for k in range(5):
            week_delta[g, k] = 0
        st[g, UPREV] = _utility(st, g, supplier_learns, budget)
        _advance(
            st, g, supplier_learns, opponent, spoil, prices, scenario, uniform, policies, offsets, shapes, boxes, cash_max, whole,
            receipt_low, output, violation, new_memory, deduction, payments, values, cap, week_ok, week_seen,
            week_due, week_delta,
        )  # fmt: skip
        _observe(
            st, g, supplier_learns, obs, mask, prices, payments, required, memory_states, order_cap, with_mask,
            price_id, costs, producible,
        )  # fmt: skip


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
        # the masks' two tables ([CS-05]-[CS-07]): each order's cost at every price triple the laws draw, and which
        # productions an inventory allows by its two bounds min(n1, n2) and n3 (the recipes of App. A.1–A.2)
        q = np.array(list(itertools.product(range(side), repeat=3)), dtype=np.int64)
        self.triples = q  # action index → the quantities (q1, q2, q3) it names
        costs = price_triples(env) @ q.T if self.supplier_learns else np.zeros((1, 1), np.int64)
        self.costs = np.ascontiguousarray(np.minimum(costs, 32767), dtype=np.int16)  # int16: compared in SIMD
        bound = np.arange(env.inventory_cap + 1)
        self.producible = (
            ((q[:, 0] + q[:, 1])[None, None, :] <= bound[:, None, None])
            & ((q[:, 0] + q[:, 2])[None, None, :] <= bound[None, :, None])
        ).astype(np.int8)
        self.st = np.zeros((n, COLUMNS), dtype=np.int64)
        self.spoil = np.zeros((n, 5, 3), dtype=np.int64)
        self.prices = np.zeros((n, 5, 3), dtype=np.int64)
        self.uniform = np.zeros((n, 5, 3))
        self.scenario = np.zeros((n, 5), dtype=np.int64)
        self.price_id = np.zeros((n, 5), dtype=np.int64)
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

        # the order tables of both covers and five rounds, flattened into one array (a tuple of arrays indexed by
        # the round costs the compiled loop a copy of the tuple per game)
        self.policies = np.zeros(1, dtype=np.int16)
        self.offsets = np.zeros((2, 5), dtype=np.int64)
        self.shapes = np.ones((2, 5, 6), dtype=np.int64)
        self.boxes = np.zeros((2, 5, 3), dtype=np.int64)
        self.cash_max = np.zeros((2, 5), dtype=np.int64)
        self.whole = np.ones((2, 5), dtype=np.bool_)
        self.output = np.zeros((2, 5, 1, 1, 3), dtype=np.int64)
        self._scenario_of = None
        if role == "supplier" or POLICIES[self.opponent] == "re":
            return
        if self.env.order_cap + 1 != ORDER_SIDE:
            raise ValueError("the DP's order table covers an order cap of 12")
        from games.contractsim.play import SESSION_TABLES

        solved = [(tables or SESSION_TABLES).solve(self.ir, self.env, cover)[1] for cover in ("schedule", "budget")]
        flat = [p.ravel() for table in solved for p in table.policies]
        self.policies = np.concatenate(flat)
        self.offsets = np.cumsum([0] + [p.size for p in flat[:-1]]).astype(np.int64).reshape(2, 5)
        self.shapes = np.array([[p.shape for p in table.policies] for table in solved], dtype=np.int64)
        self.boxes = np.array([[t.problem.state_box(r) for r in range(5)] for t in solved], dtype=np.int64)
        self.cash_max = np.array([t.problem.cash_max for t in solved], dtype=np.int64)
        self.whole = np.array(
            [
                [t.problem.cover == "budget" or t.problem.cash_max[r] < t.problem.cash_reach[r] for r in range(5)]
                for t in solved
            ]
        )
        self.output = np.stack([t.problem.output for t in solved])
        problem = solved[0].problem
        triples = price_triples(self.env)
        if any(scenario_index(problem, p) != scenario_index(t.problem, p) for t in solved for p in triples):
            raise ValueError("the two covers' tables number the price scenarios differently")
        self._scenario_of = lambda p: scenario_index(problem, p)

    def _args(self):
        return (
            self.spoil,
            self.prices,
            self.scenario,
            self.uniform,
            self.policies,
            self.offsets,
            self.shapes,
            self.boxes,
            self.cash_max,
            self.whole,
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
            self.price_id,
            self.costs,
            self.producible,
            self.triples,
        )

    def begin(self, games: np.ndarray, uniform: np.ndarray) -> None:
        """New games in rows `games`, the shocks of each read from its (5, 3, 3) uniform block ([CS-11])."""
        spoil, prices, receipts, price_id = shock_arrays(self.env, uniform)
        rows = slice(None) if len(games) == self.n else games  # every game at once: plain copies, no fancy index
        self.spoil[rows], self.prices[rows], self.uniform[rows], self.price_id[rows] = spoil, prices, receipts, price_id
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

    def outcomes(self) -> dict[str, np.ndarray]:
        """What an ended game reports, one row per game: its `utilities` and `first_violations`."""
        return {"utilities": self.utilities(), "first_violations": self.first_violations()}
