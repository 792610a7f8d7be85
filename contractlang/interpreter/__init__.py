"""The interpreter: `compile(ir)` gives the monitor both games drive and the solver branches on."""

from __future__ import annotations

from contractlang.interpreter.contractsim import (
    CompiledContractSim,
    ContractSimMonitor,
    Verdict,
    WeekStatus,
    compile_contractsim,
)
from contractlang.interpreter.ctbench import ChipTransfer, CTBenchMonitor, Enforcement, Forfeit, PointsTransfer
from contractlang.interpreter.events import EventError
from contractlang.ir import ContractIR, ContractSimIR

__all__ = [
    "ChipTransfer",
    "CompiledContractSim",
    "ContractSimMonitor",
    "CTBenchMonitor",
    "Enforcement",
    "EventError",
    "Forfeit",
    "PointsTransfer",
    "Verdict",
    "WeekStatus",
    "compile",
]


def compile(ir: ContractIR) -> ContractSimMonitor | CTBenchMonitor:  # noqa: A001 - the design's name
    """The initial monitor for a checked contract."""
    if isinstance(ir, ContractSimIR):
        return compile_contractsim(ir).monitor()
    return CTBenchMonitor(ir=ir)
