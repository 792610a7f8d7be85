"""z3 verification of checked contracts: `verify` is the one public function."""

from __future__ import annotations

from contractlang.interpreter import Rules
from contractlang.ir import CheckedContract, ContractSimIR
from contractlang.translate.checks import Inconsistency
from solver.environment import SupplyEnvironment
from solver.verify.contractsim import DEFAULT_TIMEOUT_MS, verify_contractsim
from solver.verify.ctbench import BoardSpec, verify_ctbench
from solver.verify.report import CheckOutcome, VerificationReport

__all__ = ["BoardSpec", "CheckOutcome", "VerificationReport", "translation_checks", "verify"]


def verify(
    checked: CheckedContract,
    env: SupplyEnvironment | None = None,
    board: BoardSpec | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    rules: Rules | None = None,
) -> VerificationReport:
    """Prove or refute every applicable property; environment- and board-dependent checks need those values,
    and CT-Bench board checks follow `rules` ([CT-24a]; default: the paper's text)."""
    if isinstance(checked.ir, ContractSimIR):
        checks = verify_contractsim(checked, env, timeout_ms)
    else:
        checks = verify_ctbench(checked, board, rules or Rules.named("paper"))
    return VerificationReport(contract=checked.ir.name, checks=tuple(checks))


def translation_checks(checked: CheckedContract) -> list[Inconsistency]:
    """Refuted arithmetic ([CS-31]: price × quantity, payments and stated totals disagree) for a translation."""
    if not isinstance(checked.ir, ContractSimIR):
        return []
    report = verify(checked)
    return [
        Inconsistency(check=c.name, message=f"{c.name}: {c.message}", values=c.counterexample or {})
        for c in report.checks
        if c.status == "refuted" and c.name.startswith(("arithmetic", "assert"))
    ]
