"""The floor hypothesis of docs/explanation/fidelity.md: lifting the floors under rollover
(`rollover-lifts-floors`, [CS-14a]) can let a zero week pass only where every product's weekly quantity is
within the rollover limit K; the shipped set has no such week, so it cannot test the hypothesis, and a contract
built for it shows the floor biting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import contractlang as cl
from tests.helpers import ROOT, run_cli

SHIPPED = ROOT / "games" / "experiments" / "data" / "synthetic" / "contracts"

CONTRACT = """contract "floor-can-bite" {{
  game contractsim.catering
  prices {{ pizza: $10  pasta: $5  soup: $3 }}
  deliver {{
    weeks 2..10: pizza 1, pasta 1, soup {soup}
  }}
  pay {{
    weeks 1..9: ${pay}
    week 11: $0
  }}
  payment_deduction
  rollover {{ max_deficit: 2 }}
}}
"""


def test_no_week_of_a_shipped_rollover_contract_is_within_the_rollover_limit():
    """A zero week leaves some product short by more than K in every shipped rollover contract, so it fails on
    rollover's own terms under every floor rule set."""
    contracts = [cl.load_one(p).ir for p in sorted(SHIPPED.glob("*/contract.contract"))]
    rollover = [ir for ir in contracts if ir.contingencies.rollover is not None]
    assert len(contracts) == 180 and len(rollover) == 90
    assert all(
        max(week) > ir.contingencies.rollover.max_deficit for ir in rollover for week in ir.deliveries if any(week)
    )


def supplier_weeks(path: Path, floors: str) -> list[bool]:
    done = run_cli("run", path, "--env", "1", "--customer", "rcc", "--supplier", "re", "--floors", floors, "--json")
    assert done.returncode == 0, done.stderr
    return [w["compliant"] for w in json.loads(done.stdout)["weeks"] if w["week"] % 2 == 0]


@pytest.mark.parametrize("soup, pay, moves", [(1, 18, True), (3, 24, False)])
def test_the_floor_bites_only_where_every_weekly_quantity_is_within_the_limit(tmp_path, soup, pay, moves):
    """The RE Supplier delivers nothing. With 1, 1, 1 a week (each within K = 2) the deduction's floor is what
    fails its first week: lifting it lets the deficit carry, and week 2 is compliant. With 3 soups a week the
    zero week is short by 3 > K and fails either way."""
    path = tmp_path / "c.contract"
    path.write_text(CONTRACT.format(soup=soup, pay=pay))
    floors, lifted = supplier_weeks(path, "cs14"), supplier_weeks(path, "rollover-lifts-floors")
    assert floors == [False] * 5
    assert lifted == ([True, False, False, False, False] if moves else floors)
