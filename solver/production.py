"""The fixed post-receipt production rule (ContractSim paper, App. C.1, [CS-24]); the DP tabulates it per round,
memory and inventory (`DPProblem.output`) and the rational Suppliers read that table.

Among feasible outputs choose, lexicographically: fulfilment class (2 full, 1 permitted shortfall,
0 violation), credited service Σ ω_d·cred_d (ω = contract prices under deduction, else 4:2:1), least
ingredient use 3y_A + 2y_B + y_C, then the smallest (y_A, y_B, y_C). Built from the interpreter's
tabulated week evaluation, so the rule and the monitor read a delivery the same way.

Feasibility only depends on `a = min(n_1, n_2)` (A and B each use one unit of inputs 1 and 2) and
`b = n_3` (A and C use input 3), so the rule is a table over (cap+1) × (cap+1) (a, b) pairs per round and
memory, the cap being the environment's inventory cap the contract was compiled with.
"""

from __future__ import annotations

import numpy as np

from contractlang.interpreter.contractsim import CompiledContractSim
from contractlang.vocab import SUBSTITUTION_WEIGHTS


def _outputs(inventory_cap: int) -> np.ndarray:
    """Every output (y_A, y_B, y_C) in 0..cap³, in the tables' order."""
    axis = np.arange(inventory_cap + 1)
    return np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3)


def _ranking(contract: CompiledContractSim, round_index: int, memory_index: int) -> np.ndarray:
    """Candidate outputs (rows of `_outputs`) sorted best first under the rule's lexicographic key."""
    table = contract.tables[round_index]
    violation = table.violation[memory_index].reshape(-1)
    shortfall = table.shortfall[memory_index].reshape(-1)
    credited = table.credited[memory_index].reshape(-1, 3)
    fulfilment = np.where(violation, 0, np.where(shortfall, 1, 2))
    weights = np.array(contract.rules.prices if contract.rules.deducts else SUBSTITUTION_WEIGHTS)
    service = credited @ weights
    y = _outputs(contract.inventory_cap)
    ingredients = 3 * y[:, 0] + 2 * y[:, 1] + y[:, 2]
    # np.lexsort sorts by the last key first; negate what should be largest first
    return np.lexsort((y[:, 2], y[:, 1], y[:, 0], ingredients, -service, -fulfilment))


def choice_table(contract: CompiledContractSim, round_index: int, memory_index: int) -> np.ndarray:
    """y*(a, b) for every a = min(n_1, n_2) and b = n_3 in 0..cap: shape (cap+1, cap+1, 3)."""
    order = _ranking(contract, round_index, memory_index)
    y = _outputs(contract.inventory_cap)[order]
    axis = np.arange(contract.inventory_cap + 1)
    use_12 = y[:, 0] + y[:, 1]  # units of inputs 1 and 2 (A and B use both)
    use_3 = y[:, 0] + y[:, 2]
    feasible = (use_12[None, None, :] <= axis[:, None, None]) & (use_3[None, None, :] <= axis[None, :, None])
    return y[np.argmax(feasible, axis=-1)]
