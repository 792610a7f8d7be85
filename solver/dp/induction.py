"""Exact backward induction for the RC Supplier (ContractSim paper, App. C.1) and exact forward enumeration (ContractSim paper, App. C.1, App. C.5).

Backward: for t = 5..1 and every memory state, continuation arrays over post-receipt inventory and
cash after ordering are assembled from round t+1 (production rule, verdict, capped deduction,
spoilage), then `kernels.solve_round` takes expectations over receipts and applies eq. 12's selection.
Forward: the mass of every (inventory, cash, memory) state is pushed through the table once, with both
players RCC ([CS-28]) for the expected utilities; its breach-free phase is the RC Customer's enumeration
with violations absorbed into DEAD (survival S_t, completeness, the forward P_sat).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple, Optional

import numba
import numpy as np
from pydantic import ConfigDict

from contractlang.ir import ContractSimIR
from contractlang.vocab import Frozen
from solver.dp import kernels
from solver.dp.problem import ORDER_GRID, ROUNDS, Cover, DPProblem, build_problem, flat
from solver.environment import SupplyEnvironment

UNSOLVED = -1
POLICY_DTYPE = np.int16
"""The table entry of a state no play can reach (see `problem._reachable_holdings`) or cash a holding rules out."""


class OrderTable(Frozen):
    """π(t, n, c, μ, p): one order index (o1·169 + o2·13 + o3) per round, memory, clamped inventory,
    cash at ordering time ([CS-23]) and price scenario; UNSOLVED where no play can be."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    problem: DPProblem
    policies: tuple[np.ndarray, ...]  # per round: (n_mem, B1+1, B2+1, B3+1, C+1, S) int16

    def covers(self, round_index: int, cash: int) -> bool:
        """False when a Customer paid ahead of schedule beyond this table's cash range."""
        p = self.problem
        saturated = p.cash_max[round_index] < p.cash_reach[round_index]  # every higher cash acts alike
        return p.cover == "budget" or cash <= p.cash_max[round_index] or saturated

    def memory_index(self, memory) -> int:
        return int(self.problem.compiled.rules.memory_index(np.asarray(memory)))

    def production(self, round_index: int, memory_index: int, inventory) -> tuple[int, int, int]:
        """The fixed rule's output [CS-24] for post-receipt `inventory`, as the table was solved with."""
        m = flat(self.problem.side, *(int(v) for v in inventory))
        return tuple(int(v) for v in self.problem.output[round_index, memory_index, m])

    def _entry(self, round_index: int, inventory, cash: int, memory_index: int) -> np.ndarray:
        """The orders of one state, one per price scenario (UNSOLVED where no play under this cover can be)."""
        p = self.problem
        box = p.state_box(round_index)
        n = [min(int(v), b) for v, b in zip(inventory, box)]
        c = min(int(cash), int(p.cash_max[round_index]))
        return self.policies[round_index][memory_index, n[0], n[1], n[2], c]

    def solved(self, round_index: int, inventory, cash: int, memory_index: int) -> bool:
        """False for a state this table left unsolved: a Customer who paid off schedule can lead outside
        the 'schedule' cover's cash bounds even below its top cash level."""
        return self.covers(round_index, cash) and bool(
            (self._entry(round_index, inventory, cash, memory_index) != UNSOLVED).all()
        )

    def order(self, round_index: int, inventory, cash: int, memory_index: int, prices) -> tuple[int, int, int]:
        p = self.problem
        if not self.covers(round_index, cash):
            raise ValueError(f"cash {cash} in round {round_index + 1} is outside this table; solve with cover='budget'")
        n = [min(int(v), b) for v, b in zip(inventory, p.state_box(round_index))]
        o = int(self._entry(round_index, inventory, cash, memory_index)[scenario_index(p, prices)])
        if o == UNSOLVED:
            raise ValueError(
                f"round {round_index + 1} cannot start with memory state {memory_index}, inventory "
                f"{tuple(n)} and cash {cash} under this contract; the table has no order there"
            )
        return tuple(int(v) for v in ORDER_GRID[o])


def scenario_index(problem: DPProblem, prices) -> int:
    match = np.flatnonzero((problem.prices == np.asarray(prices)).all(axis=1))
    if len(match) == 0:
        raise ValueError(f"prices {tuple(prices)} are impossible in environment {problem.env.id}")
    return int(match[0])


class SolveResult(Frozen):
    """What `contractlang solve` reports; money in the contract's setting dollars."""

    contract: str
    env: int
    p_sat: float  # backward P_1(s_1)
    p_sat_forward: float  # the same probability by forward enumeration (must agree to 1e-9)
    u_customer: float | None  # E[u_Cust] with both players RCC ([CS-28]); None when the schedule exceeds the budget
    u_supplier: float | None
    v_supplier: float  # V_1(s_1): the Supplier's DP value under the RC-Customer assumption
    v_supplier_forward: float
    completeness: float  # ContractSim paper, App. C.5
    survival: tuple[float, float, float, float, float]  # S_1..S_5
    states: int  # (round, memory, inventory, cash) entries solved
    seconds: float
    note: str = ""


def _expand(problem: DPProblem, round_index: int) -> list[np.ndarray]:
    """E_x[n, j] = 1 when inventory n is stored at clamped index j = min(n, B_x) in round `round_index`."""
    box = problem.state_box(round_index)
    side = problem.side
    mats = []
    for b in box:
        e = np.zeros((side, b + 1))
        e[np.arange(side), np.minimum(np.arange(side), b)] = 1.0
        mats.append(e)
    return mats


def _through_spoilage(problem: DPProblem, next_round: int, array: np.ndarray, push: bool) -> np.ndarray:
    """T_x = S·E_x maps leftover inventory L to the next round's stored state (spoilage, then clamp).
    Backward (push=False): Q(L) = Σ_j T(L, j)·value(j). Forward (push=True): mass(j) = Σ_L mass(L)·T(L, j).
    Axes 1..3 of `array` are the three inputs."""
    out = array
    for axis, e in enumerate(_expand(problem, next_round)):
        t = problem.spoilage @ e
        t = t if push else t.T
        out = np.moveaxis(np.tensordot(out, t, axes=([axis + 1], [0])), -1, axis + 1)
    return out


def _continuation(problem: DPProblem, t: int, mu: int, q_p, q_v) -> tuple[np.ndarray, np.ndarray]:
    """G_t(m, c̃): value of post-receipt inventory m and cash after ordering c̃ (before production)."""
    n_cash = int(problem.cash_max[t]) + 1
    bad = problem.violation[t, mu]
    ded = problem.deduction[t, mu].astype(float)
    if t == ROUNDS - 1:
        gp = np.where(bad, 0.0, 1.0)
        gv = -ded + np.where(bad, 0.0, float(problem.payments[ROUNDS]))
        gp = np.repeat(gp[:, None], n_cash, axis=1)
        gv = np.repeat(gv[:, None], n_cash, axis=1)
    else:
        arrive = problem.due[t, mu]
        cash = np.minimum(np.arange(n_cash)[None, :] + arrive[:, None], int(problem.cash_max[t + 1]))
        nm = problem.next_memory[t, mu][:, None]
        left = problem.leftover[t, mu][:, None]
        gp = np.where(bad[:, None], 0.0, q_p[nm, left, cash])
        gv = -ded[:, None] + np.where(bad[:, None], 0.0, q_v[nm, left, cash])
    side = problem.side
    return (
        np.ascontiguousarray(gp.reshape(side, side, side, n_cash)),
        np.ascontiguousarray(gv.reshape(side, side, side, n_cash)),
    )


Progress = Optional[Callable[[int, int], None]]  # (steps done, steps in all)


class _Scratch:
    """Work arrays for `kernels.solve_round`, sized for the largest round and allocated once per solve: the
    expectation stages a3 (m1, window3, m2) and a2 (window2, window3, m1), laid out so that the holding
    summed over next sits just before cash, and one slab of P̂/V̂ rows (window1 × window2 × slots for the
    windows of input 3 in use at one holding, see `_windows_in_use`) with their maxima over each block of
    BLOCK cash levels, and from each block up."""

    def __init__(self, problem: DPProblem):
        w = problem.window_count.max(axis=0)
        n_cash = int(problem.cash_max.max()) + 1
        in_use = max(_windows_in_use(problem.window_span[t, 2], problem.state_box(t)[2]) for t in range(ROUNDS))
        rows = int(w[0] * w[1]) * in_use
        side = problem.side
        a3, a2 = (side, int(w[2]), side, n_cash), (int(w[1]), int(w[2]), side, n_cash)
        slab, peaks = (rows, n_cash), (rows, n_cash // kernels.BLOCK + 1, 4)
        self.arrays = (
            np.empty(a3),
            np.empty(a3),
            np.empty(a2),
            np.empty(a2),
            np.empty(slab),
            np.empty(slab),
            np.empty(peaks),
        )


def _windows_in_use(window_span: np.ndarray, held_max: int) -> int:
    """The most receipt windows of input 3 in use at once when holdings 0..held_max are solved in turn: a
    window is in use from the first holding that reaches it to the last (`kernels.solve_round` keeps its
    rows that long)."""
    held = np.arange(held_max + 1)[:, None]
    return int(((window_span[:, 0] <= held) & (held <= window_span[:, 1])).sum(axis=1).max())


class Backward(NamedTuple):
    policies: tuple[np.ndarray, ...]
    p_sat: float  # P_1(s_1)
    v_supplier: float  # V_1(s_1), base units
    states: int
    values: tuple[tuple[np.ndarray, np.ndarray], ...]  # per round (P_t, V_t) when kept, else ()


class RoundMemo:
    """Solved rounds kept between solves. Round t reads the contract's terms other than payments, the
    environment, its cash bounds and the payments M_{2t+1..11} still to come, nothing else, so contracts that
    differ only in earlier payments share rounds t..5: a move of M_1 re-solves nothing, a move of M_5 rounds
    1–2. A round solved with every cash bound δ ≥ 0 higher (under the `tail` cover: a schedule whose total is
    in a higher bucket) serves too, cut down by `_narrowed`. Entries are dropped oldest first beyond
    `max_bytes`; `wider=False` takes only rounds solved with the same bounds (the baseline of bench/synth.py)."""

    def __init__(self, max_bytes: int = 768 << 20, wider: bool = True):
        self.max_bytes = max_bytes
        self.wider = wider
        self._rounds: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = OrderedDict()
        self._reaches: dict[tuple, set[int]] = {}  # key → the cash reaches at t it is stored with
        self._bytes = 0
        self.hits = self.misses = self.narrowed = 0

    @staticmethod
    def key(problem: DPProblem, t: int) -> tuple:
        """What round t reads besides its cash reach at t: the later bounds enter as offsets from it."""
        terms = problem.ir.model_dump_json(exclude={"name", "parties", "asserts", "payments"})
        reach = problem.cash_reach[t:]
        return (
            terms,
            problem.env.model_dump_json(),
            t,
            tuple(int(m) for m in problem.payments[t + 1 :]),
            tuple(int(c - reach[0]) for c in reach),
        )

    def get(self, problem: DPProblem, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
        key, reach = self.key(problem, t), int(problem.cash_reach[t])
        wider = [r for r in self._reaches.get(key, ()) if r > reach] if self.wider else []
        stored = (key, reach) if (key, reach) in self._rounds else (key, min(wider)) if wider else None
        if stored is None:
            self.misses += 1
            return None
        self.hits += 1
        self._rounds.move_to_end(stored)
        if stored[1] == reach:
            return self._rounds[stored]
        self.narrowed += 1
        return _narrowed(problem, t, self._rounds[stored])

    def put(self, problem: DPProblem, t: int, entry: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> None:
        key, reach = self.key(problem, t), int(problem.cash_reach[t])
        self._rounds[(key, reach)] = entry
        self._reaches.setdefault(key, set()).add(reach)
        self._bytes += sum(a.nbytes for a in entry[:3])
        while self._bytes > self.max_bytes and len(self._rounds) > 1:
            (old_key, old_reach), old = self._rounds.popitem(last=False)
            self._reaches[old_key].discard(old_reach)
            self._bytes -= sum(a.nbytes for a in old[:3])


def _narrowed(
    problem: DPProblem, t: int, entry: tuple[np.ndarray, np.ndarray, np.ndarray, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Round t of `problem` from the same round solved with every cash bound δ ≥ 0 higher, bit for bit. The
    values there agree on every state `problem` solves: such a state's plays stay within its own bounds (the
    solved set is closed under the transition, see `kernels.solve_round`), and where a bound is saturated it
    is saturated in both, at the same level (`problem._cash_saturation` does not depend on the payments); the
    selection's shortcuts are exact, so looser row maxima change what is skipped, never what is chosen. What
    `problem` leaves unsolved (cash above its reach less the holding's worth at the lowest prices) is reset as
    its own solve leaves it: P = V = 0 and no order."""
    out_p, out_v, policy, states = entry
    n_cash = int(problem.cash_max[t]) + 1
    box = problem.state_box(t)
    floor = np.array(problem.env.price_bounds()[0], dtype=np.int64)
    worth = sum(np.arange(b + 1).reshape([-1 if a == x else 1 for a in range(3)]) * floor[x] for x, b in enumerate(box))
    valid = np.maximum(1, np.minimum(n_cash, int(problem.cash_reach[t]) + 1 - worth))
    unsolved = np.arange(n_cash) >= valid[..., None]  # (B1+1, B2+1, B3+1, C+1), as `kernels._valid`
    p, v, pol = out_p[..., :n_cash].copy(), out_v[..., :n_cash].copy(), policy[..., :n_cash, :].copy()
    p[:, unsolved] = 0.0
    v[:, unsolved] = 0.0
    pol[:, unsolved] = UNSOLVED
    for a in (p, v, pol):
        a.setflags(write=False)
    return p, v, pol, states // out_p.shape[-1] * n_cash


def backward(
    problem: DPProblem,
    progress: Progress = None,
    keep_values: bool = False,
    memo: RoundMemo | None = None,
    lazy_rows: bool | None = None,
) -> Backward:
    """The order table, P_1(s_1), V_1(s_1), the number of states solved and, if asked, every P_t and V_t
    (indexed like the policies, without the price axis). With a memo, rounds solved before for the same
    later payments are taken from it. `lazy_rows` (`kernels.solve_round`'s `lazy`; default: when numba runs
    one thread) changes the work done, never the result."""
    lazy = numba.get_num_threads() == 1 if lazy_rows is None else lazy_rows
    if lazy and numba.get_num_threads() != 1:
        raise ValueError("lazy receipt-window rows need numba to run one thread")
    scratch: _Scratch | None = None
    n_mem = problem.n_memory
    policies: list[np.ndarray] = [np.empty(0)] * ROUNDS
    values: list[tuple[np.ndarray, np.ndarray]] = []
    floor = np.array(problem.env.price_bounds()[0], dtype=np.int64)
    states = 0
    steps, done = int(problem.reachable.sum()), 0
    later: tuple[np.ndarray, np.ndarray] | None = None  # round t+1's (P, V) over stored states
    for t in reversed(range(ROUNDS)):
        entry = memo.get(problem, t) if memo is not None else None
        if entry is None:
            if scratch is None:
                scratch = _Scratch(problem)
            q_p = q_v = np.empty((0, 0, 0))
            if later is not None:
                flat_shape = (n_mem, problem.side**3, later[0].shape[-1])
                q_p = _through_spoilage(problem, t + 1, later[0], push=False).reshape(flat_shape)
                q_v = _through_spoilage(problem, t + 1, later[1], push=False).reshape(flat_shape)
            entry = _solve_round(problem, t, q_p, q_v, floor, scratch, lazy)
            if memo is not None:
                memo.put(problem, t, entry)
        out_p, out_v_before_payment, policy, round_states = entry
        done += int(problem.reachable[t].sum())
        if progress is not None:
            progress(done, steps)
        states += round_states
        later = (out_p, out_v_before_payment + problem.payments[t])
        policies[t] = policy
        if keep_values:
            values.insert(0, later)
    out_p, out_v = later
    c1 = min(problem.cash_at_ordering(), int(problem.cash_max[0]))
    return Backward(tuple(policies), float(out_p[0, 0, 0, 0, c1]), float(out_v[0, 0, 0, 0, c1]), states, tuple(values))


def policy_shape(problem: DPProblem, t: int) -> tuple[int, ...]:
    """Round t's order table: (memory, held B1, B2, B3, cash, price scenario)."""
    box = problem.state_box(t)
    return (
        problem.n_memory,
        box[0] + 1,
        box[1] + 1,
        box[2] + 1,
        int(problem.cash_max[t]) + 1,
        len(problem.price_probs),
    )


def _solve_round(
    problem: DPProblem, t: int, q_p: np.ndarray, q_v: np.ndarray, floor: np.ndarray, scratch: _Scratch, lazy: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Round t for every reachable memory state: (P_t, V_t before the round's own payment M_{2t−1}, the
    orders, the number of states solved)."""
    box = problem.state_box(t)
    policy = np.full(policy_shape(problem, t), UNSOLVED, dtype=POLICY_DTYPE)
    shape = policy.shape[:-1]
    out_p, out_v = np.zeros(shape), np.zeros(shape)
    states = 0
    for mu in np.flatnonzero(problem.reachable[t]):
        gp, gv = _continuation(problem, t, int(mu), q_p, q_v)
        # always a writable copy: a read-only view (the whole box) is another array type to numba and would
        # compile solve_round a second time (~17 s cold)
        held = problem.held[t, mu, : box[0] + 1, : box[1] + 1, : box[2] + 1].copy()
        kernels.solve_round(
            gp,
            gv,
            np.array(box),
            held,
            int(problem.cash_reach[t]),
            floor,
            problem.window_of[t],
            problem.window_kernel[t],
            problem.window_top[t],
            problem.window_count[t],
            problem.window_rep[t],
            problem.window_span[t, 2],
            problem.orders_by_cost,
            problem.order_cost,
            problem.price_probs,
            *scratch.arrays,
            out_p[mu],
            out_v[mu],
            policy[mu],
            numba.get_num_threads(),
            lazy,
        )
        states += int(held.sum()) * shape[-1]
    for a in (out_p, out_v, policy):
        a.setflags(write=False)
    return out_p, out_v, policy, states


class Occupancy(NamedTuple):
    """Expectations over the exact occupancy (base units): spend, value and payments with both players RCC
    ([CS-28]); the survival curve S_1..S_5 and the DP's own accounting with the RC Customer (ContractSim paper, App. C.5)."""

    spend: float
    value: float  # value delivered to the Customer
    paid: float
    dp_value: (
        float  # the Supplier's payoff in the DP's own accounting (ContractSim paper, App. C.1 rewards), to check V_1
    )
    survival: tuple[float, ...]


def forward(problem: DPProblem, policies, start: int = 0, mass: np.ndarray | None = None) -> Occupancy:
    """Exact occupancy through the five rounds with both players RCC ([CS-28]). The RC Customer's enumeration
    (ContractSim paper, App. C.5: violations absorbed into DEAD) is the breach-free phase of the same mass, so one pass gives both.
    From round `start` with the stored-state `mass` (see `kernels.forward_round`) instead, the totals are those
    of rounds start..5 only."""
    n_mem = problem.n_memory
    values = np.array(problem.env.values, dtype=np.int64)
    totals = np.zeros(5)
    if mass is None:
        mass = np.zeros((2, n_mem, 1, 1, 1, int(problem.cash_max[0]) + 1))
        mass[0, 0, 0, 0, 0, min(problem.cash_at_ordering(), int(problem.cash_max[0]))] = 1.0
        totals[2] = problem.payments[0]
    survival = []
    for t in range(start, ROUNDS):
        n_cash_next = int(problem.cash_max[t + 1]) + 1 if t < ROUNDS - 1 else 1
        side = problem.side
        mid = np.zeros((2, n_mem, side**3, n_cash_next))
        policy = policies[t].view()
        policy.setflags(write=False)  # solved tables are read-only, cached or hand-made ones not: one type, one compile
        kernels.forward_round(
            mass,
            policy,
            problem.kernel[t],
            problem.order_cost,
            problem.price_probs,
            problem.output[t],
            problem.violation[t],
            problem.next_memory[t],
            problem.deduction[t],
            problem.due[t],
            problem.leftover[t],
            values,
            int(problem.payments[t]),
            mid,
            totals,
        )
        survival.append(1.0 - totals[3])
        if t < ROUNDS - 1:
            mass = _through_spoilage(problem, t + 1, mid.reshape((2 * n_mem, side, side, side, n_cash_next)), push=True)
            # contiguous, as the first round's: one array layout, so forward_round compiles once
            mass = np.ascontiguousarray(mass.reshape((2, n_mem) + mass.shape[1:]))
    totals[4] += mid[0].sum() * problem.payments[ROUNDS]
    return Occupancy(
        spend=float(totals[0]),
        value=float(totals[1]),
        paid=float(totals[2]),
        dp_value=float(totals[4]),
        survival=tuple(survival),
    )


class Valuation(NamedTuple):
    """What the contract searches need of a solve (base units): P_sat (ContractSim paper, App. C.1), U_i with both players RCC
    ([CS-28]) and completeness (ContractSim paper, App. C.5)."""

    p_sat: float
    u_customer: float
    u_supplier: float
    completeness: float


def _utilities(problem: DPProblem, occupancy: Occupancy) -> tuple[float, float]:
    """(U_Cust, U_Supp) in base units from the joint-RCC occupancy ([CS-28]): u_Cust = B + value − paid,
    u_Supp = paid − spend."""
    return problem.env.budget + occupancy.value - occupancy.paid, occupancy.paid - occupancy.spend


def evaluate(problem: DPProblem, memo: RoundMemo | None = None) -> Valuation:
    """`solve_problem`'s P_sat, utilities and completeness without its checks and its table; rounds already in
    `memo` are not solved again."""
    b = backward(problem, memo=memo)
    occupancy = forward(problem, b.policies)
    return Valuation(b.p_sat, *_utilities(problem, occupancy), _completeness(occupancy.survival))


def stored_mass(problem: DPProblem, t: int, memory_index: int, leftover, cash: int) -> np.ndarray:
    """The breach-free mass of one state at the start of round t, as `forward` takes it: inventory `leftover` before
    the round's spoilage ([CS-06]), cash at ordering `cash` (capped as the table caps it) and memory state."""
    n_cash = int(problem.cash_max[t]) + 1
    # `_through_spoilage` pushed from one leftover holding: each input's row of T_x = S·E_x, their outer product
    rows = [(problem.spoilage @ e)[int(n)] for n, e in zip(leftover, _expand(problem, t))]
    mass = np.zeros((2, problem.n_memory, *(len(r) for r in rows), n_cash))
    mass[0, memory_index, ..., min(int(cash), n_cash - 1)] = np.einsum("i,j,k->ijk", *rows)
    return mass


def _completeness(survival: tuple[float, ...]) -> float:
    """ContractSim paper, App. C.5: 1 − (1/5) Σ_t (1 − S_t)."""
    return 1.0 - sum(1.0 - s for s in survival) / ROUNDS


def solve_problem(problem: DPProblem, progress: Progress = None) -> tuple[SolveResult, OrderTable]:
    """The solve, money in the contract's setting dollars."""
    result, table = solve_in_base_units(problem, progress)
    return in_setting(result, problem), table


def solve_in_base_units(problem: DPProblem, progress: Progress = None) -> tuple[SolveResult, OrderTable]:
    """The solve with money in Catering base units and no note: what every setting of these terms shares
    ([CS-01]), so the table cache keeps one entry for all of them."""
    start = time.perf_counter()
    policies, p_sat, v_supplier, states, _ = backward(problem, progress)
    occupancy = forward(problem, policies)
    u_customer, u_supplier = _utilities(problem, occupancy)
    survival = occupancy.survival
    over = _over_budget(problem)
    result = SolveResult(
        contract=problem.ir.name,
        env=problem.env.id,
        p_sat=p_sat,
        p_sat_forward=survival[-1],
        u_customer=None if over else u_customer,
        u_supplier=None if over else u_supplier,
        v_supplier=v_supplier,
        v_supplier_forward=occupancy.dp_value,
        completeness=_completeness(survival),
        survival=tuple(survival),
        states=states,
        seconds=time.perf_counter() - start,
    )
    return result, OrderTable(problem=problem, policies=policies)


def _over_budget(problem: DPProblem) -> bool:
    return int(problem.payments.sum()) > problem.env.budget


def in_setting(result: SolveResult, problem: DPProblem) -> SolveResult:
    """A base-unit result in `problem`'s contract: its name, money times its setting's multiplier, and the note
    of a schedule past the budget in its dollars."""
    m = problem.ir.setting_info.multiplier
    scale = lambda v: None if v is None else v * m  # noqa: E731
    # [CS-22]: past the budget the RCC Customer pays what is left, a breach whose week depends on the
    # deductions taken; the enumeration here follows scheduled payments, as the DP itself assumes (ContractSim paper, App. C.1).
    note = (
        (
            f"the schedule ({int(problem.payments.sum()) * m:,}) exceeds the Customer's budget "
            f"({problem.env.budget * m:,}); P_sat assumes the schedule is paid (ContractSim paper, App. C.1); expected utilities are "
            "left to the simulator"
        )
        if _over_budget(problem)
        else ""
    )
    return result.model_copy(
        update={
            "contract": problem.ir.name,
            "u_customer": scale(result.u_customer),
            "u_supplier": scale(result.u_supplier),
            "v_supplier": scale(result.v_supplier),
            "v_supplier_forward": scale(result.v_supplier_forward),
            "note": note,
        }
    )


def solve(ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule") -> tuple[SolveResult, OrderTable]:
    """P_sat, expected utilities, completeness and the order table for one contract in one environment."""
    return solve_problem(build_problem(ir, env, cover))
