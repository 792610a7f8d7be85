"""Exact dynamic programming for the rational ContractSim Supplier (ContractSim paper, App. C.1, App. C.5)."""

from solver.dp.cache import TableCache
from solver.dp.induction import OrderTable, RoundMemo, SolveResult, Valuation, evaluate, solve, solve_problem
from solver.dp.problem import DPProblem, build_problem

__all__ = [
    "DPProblem",
    "OrderTable",
    "RoundMemo",
    "SolveResult",
    "Valuation",
    "evaluate",
    "TableCache",
    "build_problem",
    "solve",
    "solve_problem",
]
