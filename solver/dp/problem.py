"""One (contract, environment) pair laid out as arrays for the DP (ContractSim paper, App. C.1).

Everything here is exact bookkeeping; the three reductions of the state space are proved where they
are made:

* inventory clamp `U_t` (`_inventory_clamp`): holding more than `U_t` of an input at round t can never
  change an order, a delivery or a verdict, so such states share the clamped state's entry;
* cash saturation `c_sat(t)` (`_cash_saturation`): with at least `c_sat(t)` cash every order is
  affordable now and later, so values and orders stop depending on cash;
* reachable holdings (`_reachable_holdings`): a (memory, holding) pair that no play can lead to is not
  solved.
"""

from __future__ import annotations

import itertools
from typing import Literal, NamedTuple

import numpy as np
from pydantic import ConfigDict

from contractlang.interpreter.contractsim import CompiledContractSim, compile_contractsim
from contractlang.interpreter.rounds import applied_deduction, payment_due
from contractlang.ir import ContractSimIR
from contractlang.vocab import Frozen
from solver.environment import SupplyEnvironment
from solver.production import choice_table

ORDER_SIDE = 13  # orders 0..12 per input
ROUNDS = 5
Cover = Literal["schedule", "budget", "tail"]
ORDER_GRID = np.stack(np.meshgrid(*(np.arange(ORDER_SIDE),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
"""Every order (o1, o2, o3) in 0..12³; row i is order index i = o1·169 + o2·13 + o3."""


def flat(side: int, n1, n2, n3):
    """Index of inventory (n1, n2, n3) among the side³ inventories 0..side−1 per input."""
    return (n1 * side + n2) * side + n3


def price_scenarios(env: SupplyEnvironment) -> tuple[np.ndarray, np.ndarray]:
    """The joint price law ν: every combination of the three independent per-input laws."""
    prices, probs = [], []
    for combo in itertools.product(*env.price_laws):
        prices.append([p for p, _ in combo])
        probs.append(float(np.prod([q for _, q in combo])))
    return np.array(prices, dtype=np.int64), np.array(probs)


def spoilage_matrix(env: SupplyEnvironment) -> np.ndarray:
    """S[L, n']: leftover L becomes L − min(s, L) with s uniform on 0..s_max (ContractSim paper, App. A.1)."""
    side = env.inventory_cap + 1
    s = np.zeros((side, side))
    for left in range(side):
        for shock in range(env.spoilage_max + 1):
            s[left, left - min(shock, left)] += 1.0 / (env.spoilage_max + 1)
    return s


def receipt_kernel(env: SupplyEnvironment, cap: int) -> np.ndarray:
    """K[n, o, m]: probability that holding n and ordering o leaves min(cap, n + r) after receipt r.
    Each row is (outcome count) / (support size), so equal distributions are bitwise-equal rows."""
    side = env.inventory_cap + 1
    k = np.zeros((side, ORDER_SIDE, side))
    for n in range(side):
        for o in range(ORDER_SIDE):
            lo = env.receipt_low(o)
            for r in range(lo, o + 1):
                k[n, o, min(cap, n + r)] += 1.0
            k[n, o] /= o - lo + 1
    return k


def receipt_windows(kernel: np.ndarray, held_max: int):
    """The distinct post-receipt distributions ("windows") over every holding n ≤ held_max and order o.
    Different (n, o) often share one (n = 0 ordering 4 and n = 1 ordering 3 both land uniformly on 2..4
    in Env 5, and every order is alike once its smallest receipt fills the cap), so expectations are
    taken once per window. Returns the window of each (n, o) (−1 beyond held_max), the windows'
    probability rows, each window's largest outcome, and per (n, window) its cheapest order (−1 if none)."""
    side = kernel.shape[0]
    rows = kernel[: held_max + 1].reshape(-1, side)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    window_of = np.full((side, ORDER_SIDE), -1, dtype=np.int64)
    window_of[: held_max + 1] = inverse.reshape(held_max + 1, ORDER_SIDE)
    top = np.array([np.flatnonzero(row)[-1] for row in unique], dtype=np.int64)
    rep = np.full((side, len(unique)), -1, dtype=np.int64)
    for n in range(held_max + 1):
        for o in reversed(range(ORDER_SIDE)):
            rep[n, window_of[n, o]] = o
    return window_of, unique, top, rep


class DPProblem(Frozen):
    """Arrays for one contract (base units, [CS-01]) in one environment, with a cash cover:
    `schedule` covers every cash level an on-schedule (or under-) paying Customer can produce,
    `budget` every level up to capital + budget ([CS-23]) for Customers who pay ahead, and `tail` the
    levels of any on-schedule contract with the same later payments and a close total (see `_cash_reach`)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    ir: ContractSimIR  # base units
    env: SupplyEnvironment
    cover: Cover
    compiled: CompiledContractSim
    payments: np.ndarray  # (6,) M_1, M_3, …, M_11
    prices: np.ndarray  # (S, 3) price scenarios
    price_probs: np.ndarray  # (S,)
    order_cost: np.ndarray  # (S, 2197) cost of every order in every price scenario
    orders_by_cost: np.ndarray  # (S, 2197) order indices by ascending (cost, index): the scan order of [CS-25]
    spoilage: np.ndarray  # (K, K), K = inventory cap + 1 (`side`): every holding 0..cap of one input
    clamp: np.ndarray  # (5, 3) U_t per input
    cash_reach: np.ndarray  # (5,) the most cash at ordering time each round can see
    cash_max: np.ndarray  # (5,) largest cash index kept per round (cash_reach, saturated)
    held: np.ndarray  # (5, n_mem, K, K, K) bool: stored holdings each round can start with in each memory state
    kernel: np.ndarray  # (5, 3, K, 13, K) receipt kernels with the round's cap
    window_of: np.ndarray  # (5, 3, K, 13) receipt window of (held, order) per round and input
    window_kernel: np.ndarray  # (5, 3, W, K) each window's distribution over post-receipt holdings
    window_top: np.ndarray  # (5, 3, W) each window's largest post-receipt holding
    window_count: np.ndarray  # (5, 3)
    window_rep: np.ndarray  # (5, 3, K, W) cheapest order reaching the window from each holding
    window_span: np.ndarray  # (5, 3, W, 2) first and last holding reaching each window (−1, −1: none)
    output: np.ndarray  # (5, n_mem, K³, 3) the rule's y for post-receipt inventory m
    violation: np.ndarray  # (5, n_mem, K³) bool
    next_memory: np.ndarray  # (5, n_mem, K³)
    deduction: np.ndarray  # (5, n_mem, K³) capped by the next payment
    due: np.ndarray  # (5, n_mem, K³) the next payment less that deduction
    leftover: np.ndarray  # (5, n_mem, K³) flat index of inventory left after production

    @property
    def side(self) -> int:
        """Holdings 0..cap per input: the environment's inventory cap (ContractSim paper, App. A.1) sizes every inventory axis."""
        return self.env.inventory_cap + 1

    @property
    def n_memory(self) -> int:
        return self.output.shape[1]

    @property
    def reachable(self) -> np.ndarray:
        """(5, n_mem): the memory states each round can start in with some holding."""
        return self.held.any(axis=(2, 3, 4))

    def state_box(self, round_index: int) -> tuple[int, int, int]:
        return state_box(self.clamp, round_index)

    def cash_at_ordering(self) -> int:
        """c_1 = capital + M_1: cash available for the week-2 order on schedule ([CS-23])."""
        return int(self.env.capital + self.payments[0])


def state_box(clamp: np.ndarray, round_index: int) -> tuple[int, int, int]:
    """Largest inventory held at the start of a round that the table distinguishes (round 1: empty)."""
    if round_index == 0:
        return (0, 0, 0)
    return tuple(int(u) for u in clamp[round_index])


class RoundTransition(NamedTuple):
    """What round t does to the state for every memory and delivery, shape (n_mem, cap+1, cap+1, cap+1):
    the monitor's verdict and next memory (ContractSim paper, App. C.1), and the deduction as it lands on the next payment, M_{2t+1}
    (M_11 after round 5), capped by it, with what is then due (ContractSim paper, App. C.1, [CS-09])."""

    violation: np.ndarray
    next_memory: np.ndarray  # row of the contract's memory states
    deduction: np.ndarray  # min(δ, M_{2t+1})
    due: np.ndarray  # M_{2t+1} − min(δ, M_{2t+1}): what the RC Customer pays next


def round_transition(compiled: CompiledContractSim, payments: np.ndarray, t: int) -> RoundTransition:
    """Round t's transition, read off the monitor's table for the round; the one place the DP caps a deduction."""
    table = compiled.tables[t]
    return RoundTransition(
        table.violation,
        table.new_memory_index,
        applied_deduction(payments[t + 1], table.deduction),
        payment_due(payments[t + 1], table.deduction),
    )


def _production(compiled: CompiledContractSim, payments: np.ndarray):
    """The rule's delivery and its round transition for every round, memory and post-receipt inventory."""
    side = compiled.inventory_cap + 1
    memory = compiled.memory_states
    n_mem = len(memory)
    grid = np.stack(np.meshgrid(*(np.arange(side),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    a = np.minimum(grid[:, 0], grid[:, 1])
    shape = (ROUNDS, n_mem, side**3)
    output = np.zeros(shape + (3,), dtype=np.int64)
    violation = np.zeros(shape, dtype=bool)
    next_memory = np.zeros(shape, dtype=np.int64)
    deduction = np.zeros(shape, dtype=np.int64)
    due = np.zeros(shape, dtype=np.int64)
    leftover = np.zeros(shape, dtype=np.int64)
    for t in range(ROUNDS):
        step = round_transition(compiled, payments, t)
        for mu in range(n_mem):
            y = choice_table(compiled, t, mu)[a, grid[:, 2]]
            i = (mu, y[:, 0], y[:, 1], y[:, 2])
            output[t, mu] = y
            violation[t, mu] = step.violation[i]
            next_memory[t, mu] = step.next_memory[i]
            deduction[t, mu] = step.deduction[i]
            due[t, mu] = step.due[i]
            left = grid - np.stack([y[:, 0] + y[:, 1], y[:, 0] + y[:, 1], y[:, 0] + y[:, 2]], axis=-1)
            leftover[t, mu] = flat(side, left[:, 0], left[:, 1], left[:, 2])
    return output, violation, next_memory, deduction, due, leftover


def _reachable_memory(next_memory: np.ndarray) -> np.ndarray:
    """Memory states reachable in each round when deliveries follow the rule (any inventory)."""
    reach = np.zeros(next_memory.shape[:2], dtype=bool)
    reach[0, 0] = True
    for t in range(1, ROUNDS):
        reach[t, np.unique(next_memory[t - 1, reach[t - 1]])] = True
    return reach


def _reachable_holdings(
    clamp: np.ndarray, spoilage_max: int, next_memory: np.ndarray, leftover: np.ndarray, side: int
) -> np.ndarray:
    """held[t, μ, n]: the stored holdings n (clamped to round t's box) that round t can start with in memory
    state μ, whatever is ordered, received and spoiled (cash is left out, so this may hold a few pairs too
    many, never too few). Round 1 starts empty; receipts can leave any m with n ≤ m ≤ U_t (every order of
    0..12 is open, and ordering 0 receives 0); the rule then fixes the leftover and the next memory, and
    spoilage leaves any n' with L − s_max ≤ n' ≤ L. The set contains the start
    and is closed under these transitions, so a solved state only ever reads solved states, and every state
    a play reaches (its stored image; see `_inventory_clamp`) is solved. Rollover memory says which product
    fell short, which forces an input of it to be used up, so most pairs are unreachable: in Env 5 about
    5 % of them from round 3 on. `forward` re-checks this on every solve: it stops if mass reaches an
    unsolved state."""
    n_mem = next_memory.shape[1]
    held = np.zeros((ROUNDS, n_mem, side, side, side), dtype=bool)
    held[0, 0, 0, 0, 0] = True
    for t in range(ROUNDS - 1):
        post = held[t].copy()
        for axis, cap in enumerate(clamp[t]):
            post = np.logical_or.accumulate(post, axis=axis + 1)
            np.moveaxis(post, axis + 1, 0)[cap + 1 :] = False
        mu, m = np.nonzero(post.reshape(n_mem, -1))
        left = np.zeros((n_mem, side**3), dtype=bool)
        left[next_memory[t, mu, m], leftover[t, mu, m]] = True
        spoiled = left.reshape(n_mem, side, side, side)
        for axis in range(1, 4):
            along = np.moveaxis(spoiled, axis, 0)
            for _ in range(spoilage_max):  # n' is reachable when some leftover in n'..n'+s_max was
                along[:-1] |= along[1:]  # numpy buffers overlapping operands, so this is one step
        for axis, b in enumerate(state_box(clamp, t + 1)):
            tail = np.moveaxis(spoiled, axis + 1, 0)
            tail[b] = tail[b:].any(axis=0)
            tail[b + 1 :] = False
        held[t + 1] = spoiled
    return held


def _inventory_clamp(output: np.ndarray, reach: np.ndarray, spoilage_max: int, inventory_cap: int) -> np.ndarray:
    """U_t per input. Let u_t be the most of an input the rule ever uses in round t (any inventory,
    any reachable memory), U_5 = u_5 and U_t = min(cap, u_t + s_max + U_{t+1}). Exact: if two states
    differ only in input x and both hold ≥ U_t of it, every receipt leaves both with ≥ u_t, so the
    rule (which never needs more than u_t) picks the same output from both feasible sets; both keep
    ≥ U_t − u_t and after at most s_max spoilage ≥ U_{t+1}; by induction every later order, output
    and verdict coincide, so they have identical values and identical table entries."""
    use = np.stack(
        [output[..., 0] + output[..., 1], output[..., 0] + output[..., 1], output[..., 0] + output[..., 2]], axis=-1
    )
    clamp = np.zeros((ROUNDS, 3), dtype=np.int64)
    later = np.zeros(3, dtype=np.int64)
    for t in reversed(range(ROUNDS)):
        most = use[t][reach[t]].reshape(-1, 3).max(axis=0)
        clamp[t] = np.minimum(inventory_cap, most + (spoilage_max + later if t < ROUNDS - 1 else 0))
        later = clamp[t]
    return clamp


def _cash_saturation(env: SupplyEnvironment) -> np.ndarray:
    """c_sat(t) = Σ_{k ≥ t} (most an order can cost in round k). Exact: with c ≥ c_sat(t) every order is
    affordable in round t, and whatever is bought, cash after the order is ≥ c_sat(t+1) (payments
    only add), so by induction every continuation sees saturated cash and values stop changing."""
    _, highs = env.price_bounds()
    most = env.order_cap * sum(highs)
    return np.array([most * (ROUNDS - t) for t in range(ROUNDS)], dtype=np.int64)


TAIL_BUCKET = 16


def _cash_reach(env: SupplyEnvironment, payments: np.ndarray, cover: Cover) -> np.ndarray:
    """The most cash at ordering time each round can see under the cover. `tail`: capital + Σ M rounded up to
    a multiple of TAIL_BUCKET, minus the payments still to come, M_{2t+1..11}. That bounds the on-schedule
    cash capital + M_1 + … + M_{2t−1}, and depends only on the later payments and the bucket of the total,
    so round t is the same problem for every schedule that agrees from M_{2t+1} on and whose total lies in
    the same bucket, and `induction.RoundMemo` can share it (cash after the order plus the next payment
    stays within the next round's bound, so no level is clamped that a play could reach)."""
    if cover == "schedule":
        return env.capital + np.cumsum(payments[:ROUNDS])
    if cover == "tail":
        later = payments.sum() - np.cumsum(payments[:ROUNDS])
        return env.capital + -(-int(payments.sum()) // TAIL_BUCKET) * TAIL_BUCKET - later
    return env.capital + env.budget + np.concatenate([[0], np.cumsum(payments[1:ROUNDS])])


def build_problem(ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule") -> DPProblem:
    base = ir.base_units()
    compiled = compile_contractsim(base, env.inventory_cap, env.floors)
    side = env.inventory_cap + 1
    payments = np.array(base.payments, dtype=np.int64)
    output, violation, next_memory, deduction, due, leftover = _production(compiled, payments)
    # The clamp needs the memory states first and the holdings need the clamp's boxes, so the clamp is taken
    # over the coarser set (memory reachable with any inventory); a larger set only makes U_t larger.
    reach = _reachable_memory(next_memory)
    clamp = _inventory_clamp(output, reach, env.spoilage_max, env.inventory_cap)
    holdings = _reachable_holdings(clamp, env.spoilage_max, next_memory, leftover, side)
    reach_cash = _cash_reach(env, payments, cover)
    cash_max = np.minimum(reach_cash, _cash_saturation(env))
    kernel = np.zeros((ROUNDS, 3, side, ORDER_SIDE, side))
    windows = {}
    for t in range(ROUNDS):
        held = state_box(clamp, t)
        for x in range(3):
            kernel[t, x] = receipt_kernel(env, int(clamp[t, x]))
            windows[t, x] = receipt_windows(kernel[t, x], int(held[x]))
    n_windows = max(len(w[1]) for w in windows.values())
    window_of = np.zeros((ROUNDS, 3, side, ORDER_SIDE), dtype=np.int64)
    window_kernel = np.zeros((ROUNDS, 3, n_windows, side))
    window_top = np.zeros((ROUNDS, 3, n_windows), dtype=np.int64)
    window_count = np.zeros((ROUNDS, 3), dtype=np.int64)
    window_rep = np.full((ROUNDS, 3, side, n_windows), -1, dtype=np.int64)
    window_span = np.full((ROUNDS, 3, n_windows, 2), -1, dtype=np.int64)
    for (t, x), (of, rows, top, rep) in windows.items():
        w = len(rows)
        window_of[t, x], window_kernel[t, x, :w], window_top[t, x, :w] = of, rows, top
        window_count[t, x], window_rep[t, x, :, :w] = w, rep
        reaches = rep >= 0  # (holding, window)
        window_span[t, x, :w, 0] = np.where(reaches.any(axis=0), reaches.argmax(axis=0), -1)
        window_span[t, x, :w, 1] = np.where(reaches.any(axis=0), side - 1 - reaches[::-1].argmax(axis=0), -1)
    prices, probs = price_scenarios(env)
    order_cost = (prices @ ORDER_GRID.T).astype(np.int64)
    orders_by_cost = np.stack([np.lexsort((np.arange(len(ORDER_GRID)), row)) for row in order_cost]).astype(np.int64)
    arrays = dict(
        payments=payments,
        prices=prices,
        price_probs=probs,
        order_cost=order_cost,
        orders_by_cost=orders_by_cost,
        spoilage=spoilage_matrix(env),
        clamp=clamp,
        cash_reach=reach_cash,
        cash_max=cash_max,
        held=holdings,
        kernel=kernel,
        window_of=window_of,
        window_kernel=window_kernel,
        window_top=window_top,
        window_count=window_count,
        window_rep=window_rep,
        window_span=window_span,
        output=output,
        violation=violation,
        next_memory=next_memory,
        deduction=deduction,
        due=due,
        leftover=leftover,
    )
    for value in arrays.values():
        value.setflags(write=False)
    return DPProblem(ir=base, env=env, cover=cover, compiled=compiled, **arrays)
