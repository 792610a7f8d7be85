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
from contractlang.interpreter.rounds import FLOOR_RULES, FloorRules
from contractlang.ir import ContractIR, ContractSimIR

__all__ = [
    "ChipTransfer",
    "CompiledContractSim",
    "ContractBlocked",
    "ContractSimMonitor",
    "CTBenchMonitor",
    "Enforcement",
    "EventError",
    "FLOOR_RULES",
    "FloorRules",
    "Forfeit",
    "PointsTransfer",
    "Rules",
    "Verdict",
    "WeekStatus",
    "compile",
    "event_types",
]


MONITORS = (ContractSimMonitor, CTBenchMonitor)


def event_types(kind: str) -> tuple[str, ...]:
    """The event types the monitor of a contract of IR kind `kind` consumes."""
    return next(m.EVENTS for m in MONITORS if m.KIND == kind)


def compile(
    ir: ContractIR,
    rules: Rules | None = None,  # noqa: A001
    floors: FloorRules = FloorRules(),
) -> ContractSimMonitor | CTBenchMonitor:
    """The initial monitor for a checked contract: a ContractSim one under the floor rule set `floors` ([CS-14a]),
    a CT-Bench one enforcing `rules` (default: the paper's text)."""
    if isinstance(ir, ContractSimIR):
        return compile_contractsim(ir, floors=floors).monitor()
    return CTBenchMonitor(ir=ir, rules=rules or Rules.named("paper"))
