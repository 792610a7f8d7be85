"""The rational Supplier's view of any order (ContractSim paper, App. C.1, eq. 12): P̂ and V̂ of an order at one state, the
quantities the order table was chosen by, so an agent's order can be set beside RC's in expected-utility terms; and
the Customer's expected utility still to come after a payment, with both players RCC ([CS-28])."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solver.dp.induction import OrderTable, _continuation, _through_spoilage, backward, forward, stored_mass
from solver.dp.problem import ROUNDS, DPProblem


class OrderValue(NamedTuple):
    """One order at one state (base units): P̂, the probability that every later verdict is met with RC ordering
    from the next round on, and V̂, the Supplier's expected payments still to come less this order's cost and
    later spend (what eq. 12 maximises)."""

    p_sat: float
    value: float


class Values:
    """Every round's (P_t, V_t) of one problem, solved once, and the continuation of each round and memory state
    built from them when first asked for."""

    def __init__(self, problem: DPProblem):
        self.problem = problem
        self.rounds = backward(problem, keep_values=True).values
        self._continuations: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def _continuation(self, t: int, mu: int) -> tuple[np.ndarray, np.ndarray]:
        if (t, mu) not in self._continuations:
            p = self.problem
            q_p = q_v = np.empty((0, 0, 0))
            if t < ROUNDS - 1:
                later_p, later_v = self.rounds[t + 1]
                shape = (p.n_memory, p.side**3, later_p.shape[-1])
                q_p = _through_spoilage(p, t + 1, later_p, push=False).reshape(shape)
                q_v = _through_spoilage(p, t + 1, later_v, push=False).reshape(shape)
            self._continuations[t, mu] = _continuation(p, t, mu, q_p, q_v)
        return self._continuations[t, mu]

    def order(self, t: int, memory_index: int, inventory, cash: int, prices, order) -> OrderValue | None:
        """P̂ and V̂ of `order` in round t at the state the table reads (inventory within the round's box, cash
        within its range); None when the order is not affordable there."""
        p = self.problem
        held = [min(int(v), b) for v, b in zip(inventory, p.state_box(t))]
        cost = int(sum(int(o) * int(x) for o, x in zip(order, prices)))
        left = min(int(cash), int(p.cash_max[t])) - cost
        if left < 0:
            return None
        gp, gv = self._continuation(t, memory_index)
        receipts = [p.kernel[t, x, held[x], int(order[x])] for x in range(3)]
        expect = lambda g: float(np.einsum("i,j,k,ijk->", *receipts, g[..., left]))  # noqa: E731
        return OrderValue(expect(gp), expect(gv) - cost)


def customer_to_come(table: OrderTable, t: int, memory_index: int, leftover, cash: int) -> float:
    """E[value delivered − payments] from round t on (base units) with both players RCC ([CS-28]), from the state a
    breach-free payment leaves: memory, inventory before round t's spoilage, the Supplier's cash at ordering. The
    same exact enumeration that gives the DP's U_Cust (`induction.forward`), started there; 0 after the last round."""
    if t >= ROUNDS:
        return 0.0
    p = table.problem
    occupancy = forward(p, table.policies, t, stored_mass(p, t, memory_index, leftover, cash))
    return occupancy.value - occupancy.paid
