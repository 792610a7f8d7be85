"""Exact dynamic programming for the rational ContractSim Supplier (spec/contractsim.md §9.2, §9.5, §14)."""

from solver.dp.problem import DPProblem, build_problem
from solver.dp.cache import TableCache
from solver.dp.induction import OrderTable, RoundMemo, SolveResult, Valuation, evaluate, solve, solve_problem

__all__ = ["DPProblem", "OrderTable", "RoundMemo", "SolveResult", "Valuation", "evaluate", "TableCache", "build_problem", "solve", "solve_problem"]
