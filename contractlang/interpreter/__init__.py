"""The interpreter: `compile(ir)` gives the monitor both games drive and the solver branches on."""

from __future__ import annotations

from contractlang.interpreter.contractsim import (
    CompiledContractSim,
    ContractSimMonitor,
    Verdict,
    WeekStatus,
    compile_contractsim,
)
from contractlang.interpreter.ctbench import (
    ChipTransfer,
    ContractBlocked,
    CTBenchMonitor,
    Enforcement,
    Forfeit,
    PointsTransfer,
    Rules,
)
from contractlang.interpreter.events import EventError
from contractlang.ir import ContractIR, ContractSimIR

__all__ = [
    "ChipTransfer",
    "CompiledContractSim",
    "ContractBlocked",
    "ContractSimMonitor",
    "CTBenchMonitor",
    "Enforcement",
    "EventError",
    "Forfeit",
    "PointsTransfer",
    "Rules",
    "Verdict",
    "WeekStatus",
    "compile",
]


def compile(ir: ContractIR, rules: Rules | None = None) -> ContractSimMonitor | CTBenchMonitor:  # noqa: A001
    """The initial monitor for a checked contract; a CT-Bench one enforces `rules` (default: the paper's text)."""
    if isinstance(ir, ContractSimIR):
        return compile_contractsim(ir).monitor()
    return CTBenchMonitor(ir=ir, rules=rules or Rules.named("paper"))
