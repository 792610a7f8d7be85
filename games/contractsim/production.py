"""The fixed post-receipt production rule (spec/contractsim.md §9.2, [CS-24]), shared with the DP solver.

Among feasible outputs choose, lexicographically: fulfilment class (2 full, 1 permitted shortfall,
0 violation), credited service Σ ω_d·cred_d (ω = contract prices under deduction, else 4:2:1), least
ingredient use 3y_A + 2y_B + y_C, then the smallest (y_A, y_B, y_C). Built from the interpreter's
tabulated week evaluation, so the rule and the monitor read a delivery the same way.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from contractlang.interpreter.contractsim import TABLE_MAX_QTY, CompiledContractSim
from contractlang.vocab import SUBSTITUTION_WEIGHTS

_AXIS = np.arange(TABLE_MAX_QTY + 1)
_Y = np.stack(np.meshgrid(_AXIS, _AXIS, _AXIS, indexing="ij"), axis=-1).reshape(-1, 3)
_USE_12 = _Y[:, 0] + _Y[:, 1]  # units of inputs 1 and 2 (A and B use both)
_USE_3 = _Y[:, 0] + _Y[:, 2]
_INGREDIENTS = 3 * _Y[:, 0] + 2 * _Y[:, 1] + _Y[:, 2]


def _ranking(contract: CompiledContractSim, round_index: int, memory_index: int) -> np.ndarray:
    """Candidate outputs (rows of _Y) sorted best first under the rule's lexicographic key."""
    table = contract.tables[round_index]
    flat = np.ravel_multi_index(_Y.T, (TABLE_MAX_QTY + 1,) * 3)
    violation = table.violation[memory_index].reshape(-1)[flat]
    shortfall = table.shortfall[memory_index].reshape(-1)[flat]
    credited = table.credited[memory_index].reshape(-1, 3)[flat]
    fulfilment = np.where(violation, 0, np.where(shortfall, 1, 2))
    weights = np.array(contract.rules.prices if contract.rules.deducts else SUBSTITUTION_WEIGHTS)
    service = credited @ weights
    # np.lexsort sorts by the last key first; negate what should be largest first
    return np.lexsort((_Y[:, 2], _Y[:, 1], _Y[:, 0], _INGREDIENTS, -service, -fulfilment))


class ProductionRule:
    """y*(round, memory, inventory) for one compiled contract; rankings are computed once per (round, memory)."""

    def __init__(self, contract: CompiledContractSim):
        self.contract = contract
        self._rank = lru_cache(maxsize=None)(lambda t, m: _ranking(contract, t, m))

    def choose(self, round_index: int, memory: tuple[int, int, int], inventory: tuple[int, int, int]):
        """The rule's output for post-receipt `inventory`; feasibility needs A+B ≤ n1, A+B ≤ n2, A+C ≤ n3."""
        m = int(self.contract.rules.memory_index(np.array(memory)))
        order = self._rank(round_index, m)
        feasible = (_USE_12[order] <= min(inventory[0], inventory[1])) & (_USE_3[order] <= inventory[2])
        best = order[int(np.argmax(feasible))]
        return tuple(int(v) for v in _Y[best])
