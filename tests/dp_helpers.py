"""Shared by the DP, simulator and verifier tests: the bundled examples, the golden DP figures
(tests/golden/dp_examples.json, written by `python3 bench/dp.py --golden`) and a checked solve."""

import json
import os

from contractlang import load
from games.contractsim.environments import environment
from tests.helpers import ROOT

FULL = os.environ.get("CONTRACTLANG_SLOW_SCALE") == "full"
EXAMPLES = {
    c.ir.name: c.ir
    for p in sorted((ROOT / "examples").glob("*.contract"))
    for c in load(p)
    if c.ir.kind == "contractsim"
}
NAMES = sorted(EXAMPLES)
GOLDEN = json.loads((ROOT / "tests" / "golden" / "dp_examples.json").read_text())
CASES = [(n, e) for n in NAMES for e in range(1, 7)]
CI_CASES = (
    CASES
    if FULL
    else [(n, e) for n, e in CASES if e in (1, 3) or (EXAMPLES[n].contingencies.rollover is None and e in (2, 5))]
)
"""CI's reduced size: the rollover examples (the slowest solves, up to 40 s each in Envs 5–6) in Env 1
(deterministic) and Env 3 (stochastic) only, the others in Envs 1, 2, 3 and 5 (every law of prices, receipts
and spoilage, and both capitals and value vectors: Envs 4 and 6 are Envs 3 and 5 with Env 2's capital and
values, and the Monte Carlo cross-check solves them);
CONTRACTLANG_SLOW_SCALE=full takes every (example, environment)."""


def example(name):
    return EXAMPLES[name]


def solved(tables, ir, env_id):
    """Solve through the session's table cache; every solve must agree with its own forward pass."""
    result, table, _ = tables.solve(ir, environment(env_id))
    assert abs(result.p_sat - result.p_sat_forward) <= 1e-9
    assert abs(result.v_supplier - result.v_supplier_forward) <= 1e-6 * ir.setting_info.multiplier
    return result, table
