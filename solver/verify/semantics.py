"""The production-week evaluation of ContractSim paper, App. C.1 as z3 terms.

It mirrors `contractlang.interpreter.rounds.evaluate_round` term for term; a test compares the two
on random inputs, so the verifier and the monitor cannot disagree about a clause.
"""

from __future__ import annotations

import z3

from contractlang.interpreter.rounds import RoundRules
from contractlang.vocab import SUBSTITUTION_WEIGHTS


def zmin(a, b):
    return z3.If(a <= b, a, b)


def zmax(a, b):
    return z3.If(a >= b, a, b)


def plain_floor_div(expr, k: int):
    return expr / k


def zpayment_due(nominal, deduction):
    """`payment_due` (ContractSim paper, Sec. 3) as a z3 term: M_w − min(δ_w, M_w)."""
    return nominal - zmin(deduction, nominal)


class ZRound:
    """z3 terms for one production round: credited, residual, violation, new memory, deduction.

    `floor_div(expr, k)` gives ⌊expr / k⌋; a solver passes one that pins a fresh integer with linear
    inequalities, which z3 decides much faster than integer division.
    """

    def __init__(self, rules: RoundRules, round_index: int, memory: list, delivered: list, floor_div=plain_floor_div):
        q = rules.schedule[round_index]
        carries = rules.carries_deficits
        req = [q[d] + memory[d] if carries else z3.IntVal(q[d]) for d in range(3)]
        base = [zmin(delivered[d], req[d]) for d in range(3)]
        if rules.substitution_min is None:
            credited = base
        else:
            floor_s = [zmin(z3.IntVal(rules.substitution_min[d]), req[d]) for d in range(3)]
            pool = sum(SUBSTITUTION_WEIGHTS[d] * zmax(delivered[d] - req[d], 0) for d in range(3))
            coverable = [(req[d] - base[d]) - zmax(floor_s[d] - delivered[d], 0) for d in range(3)]
            credited = []
            for d in range(3):
                k = zmin(coverable[d], floor_div(pool, SUBSTITUTION_WEIGHTS[d]))
                credited.append(base[d] + k)
                pool = pool - k * SUBSTITUTION_WEIGHTS[d]
        if rules.floor_min is not None:
            floor = [zmin(z3.IntVal(rules.floor_min[d]), req[d]) for d in range(3)]
            floor_breach = z3.Or([delivered[d] < floor[d] for d in range(3)])
        else:
            floor_breach = z3.BoolVal(False)
        residual = [req[d] - credited[d] for d in range(3)]
        shortfall = z3.Or([r > 0 for r in residual])
        last = round_index == 4
        k_max = rules.max_deficit
        if rules.mode == "GRIM":
            violation = shortfall
            new_memory = [z3.IntVal(0)] * 3
        elif rules.mode == "PD":
            violation = z3.Or(floor_breach, z3.And(shortfall, memory[0] == 1))
            new_memory = [z3.If(shortfall, 1, 0), z3.IntVal(0), z3.IntVal(0)]
        else:
            cure_failure = z3.Or([z3.And(memory[d] > 0, credited[d] < memory[d]) for d in range(3)])
            too_deep = z3.Or([r > k_max for r in residual])
            violation = z3.Or(floor_breach, cure_failure, too_deep, z3.And(z3.BoolVal(last), shortfall))
            new_memory = [zmin(r, k_max) for r in residual]
        deduction = sum(rules.prices[d] * residual[d] for d in range(3)) if rules.deducts else z3.IntVal(0)
        self.required, self.credited, self.residual = req, credited, residual
        self.violation, self.new_memory, self.deduction = violation, new_memory, deduction
