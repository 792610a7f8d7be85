"""The fixed post-receipt production rule (spec/contractsim.md §9.2, [CS-24]); the DP tabulates it per round,
memory and inventory (`DPProblem.output`) and the rational Suppliers read that table.

Among feasible outputs choose, lexicographically: fulfilment class (2 full, 1 permitted shortfall,
0 violation), credited service Σ ω_d·cred_d (ω = contract prices under deduction, else 4:2:1), least
ingredient use 3y_A + 2y_B + y_C, then the smallest (y_A, y_B, y_C). Built from the interpreter's
tabulated week evaluation, so the rule and the monitor read a delivery the same way.

Feasibility only depends on `a = min(n_1, n_2)` (A and B each use one unit of inputs 1 and 2) and
`b = n_3` (A and C use input 3), so the rule is a table over 11 × 11 (a, b) pairs per round and memory.
"""

from __future__ import annotations

import numpy as np

from contractlang.interpreter.contractsim import TABLE_MAX_QTY, CompiledContractSim
from contractlang.vocab import SUBSTITUTION_WEIGHTS

_SIDE = TABLE_MAX_QTY + 1
_AXIS = np.arange(_SIDE)
_Y = np.stack(np.meshgrid(_AXIS, _AXIS, _AXIS, indexing="ij"), axis=-1).reshape(-1, 3)
_USE_12 = _Y[:, 0] + _Y[:, 1]  # units of inputs 1 and 2 (A and B use both)
_USE_3 = _Y[:, 0] + _Y[:, 2]
_INGREDIENTS = 3 * _Y[:, 0] + 2 * _Y[:, 1] + _Y[:, 2]


def _ranking(contract: CompiledContractSim, round_index: int, memory_index: int) -> np.ndarray:
    """Candidate outputs (rows of _Y) sorted best first under the rule's lexicographic key."""
    table = contract.tables[round_index]
    violation = table.violation[memory_index].reshape(-1)
    shortfall = table.shortfall[memory_index].reshape(-1)
    credited = table.credited[memory_index].reshape(-1, 3)
    fulfilment = np.where(violation, 0, np.where(shortfall, 1, 2))
    weights = np.array(contract.rules.prices if contract.rules.deducts else SUBSTITUTION_WEIGHTS)
    service = credited @ weights
    # np.lexsort sorts by the last key first; negate what should be largest first
    return np.lexsort((_Y[:, 2], _Y[:, 1], _Y[:, 0], _INGREDIENTS, -service, -fulfilment))


def choice_table(contract: CompiledContractSim, round_index: int, memory_index: int) -> np.ndarray:
    """y*(a, b) for every a = min(n_1, n_2) and b = n_3 in 0..10: shape (11, 11, 3)."""
    order = _ranking(contract, round_index, memory_index)
    a = _AXIS[:, None, None]
    b = _AXIS[None, :, None]
    feasible = (_USE_12[order][None, None, :] <= a) & (_USE_3[order][None, None, :] <= b)
    return _Y[order[np.argmax(feasible, axis=-1)]]
