"""Issue #46: the floor rule sets ([CS-14a]) key their own DP tables exactly where they change a contract, a
variant solves differently from the default, the tied-price rule ([CS-34a]), and the paper's published rows."""

import math

import pytest

from contractlang.formatter import format_ir
from contractlang.interpreter.rounds import FLOOR_RULES
from games.contractsim.environments import environment
from games.experiments.paper import LLM_AGENTS, paper_table, paper_tables, welch_p
from games.experiments.synth import Terms, tied_prices, with_tied_prices
from solver.dp.cache import table_key
from tests.helpers import run_cli

TERMS = Terms(quantities=(2, 1, 1), prices=(9, 4, 2), payments=(20, 20, 20, 20, 20, 10))


def _key(variant: str, floors: str, env_id: int = 3) -> str:
    env = environment(env_id).model_copy(update={"floors": FLOOR_RULES[floors]})
    return table_key(TERMS.contract("c", variant), env, "schedule")


@pytest.mark.parametrize(
    "variant,floors,shared",
    [
        ("base", "no-deduction-floor+rollover-lifts-floors", True),  # no minimum anywhere: nothing to lift
        ("S", "rollover-lifts-floors", True),  # no rollover: substitution's floor binds
        ("S+PD", "no-deduction-floor", True),  # substitution's floor equals deduction's
        ("PD", "rollover-lifts-floors", True),
        ("PD", "no-deduction-floor", False),
        ("PD+RO", "rollover-lifts-floors", False),
        ("S+RO", "rollover-lifts-floors", False),
        ("S+PD+RO", "no-deduction-floor", True),
    ],
)
def test_a_rule_set_shares_the_default_table_exactly_where_it_floors_the_same(variant, floors, shared):
    assert (_key(variant, floors) == _key(variant, "cs14")) is shared


def test_the_default_key_does_not_change_with_the_rule_set_field():
    """Adding the field keeps every default key (warm caches stay warm): the default rule set adds nothing."""
    env = environment(3)
    assert table_key(TERMS.contract("c", "PD"), env, "schedule") == _key("PD", "cs14")
    assert "floors" not in str(env.model_dump(mode="json", exclude={"floors"}))


@pytest.mark.slow
def test_a_variant_is_solved_into_its_own_cache_entry(tables):
    """Solving a PD contract under [CS-14] and under `no-deduction-floor` leaves two entries on disk; the variant
    only widens what the Supplier may deliver, so the RC Supplier's value can only rise (Env 1: deterministic)."""
    ir = TERMS.contract("c", "PD")
    variant_env = environment(1).model_copy(update={"floors": FLOOR_RULES["no-deduction-floor"]})
    default, _, _ = tables.solve(ir, environment(1))
    variant, _, _ = tables.solve(ir, variant_env)
    keys = {table_key(ir, env, "schedule") for env in (environment(1), variant_env)}
    assert len(keys) == 2 and all(tables._path(k).exists() for k in keys)
    assert variant.u_supplier >= default.u_supplier - 1e-9


def test_tied_prices_are_4_2_1_and_meet_the_payment_total():
    assert tied_prices((2, 1, 1), 110) == (8, 4, 2)  # 5 × (4·2 + 2 + 1) = 55 units of 2: value 110
    tied = with_tied_prices(TERMS)
    assert tied.prices == (8, 4, 2) and tied.payments == TERMS.payments and tied.quantities == TERMS.quantities
    assert 5 * sum(p * q for p, q in zip(tied.prices, tied.quantities)) == sum(TERMS.payments)


def test_the_paper_tables_hold_the_three_llm_agents_and_the_rational_rows():
    assert [t.table for t in paper_tables()] == [7, 8, 9, 10]
    for t in paper_tables():
        assert len(t.rows) == 18 and all(len(r.cells) == 11 for r in t.rows)
        assert {r.agent for r in t.rows} == {*LLM_AGENTS, "rc", "rcc", "re"}
    opus = next(r for r in paper_table("supplier", False).rows if (r.counterparty, r.agent) == ("re", "Claude Opus 5"))
    assert opus.cells[0] == (-19.6, 12.0) and opus.cells[5] is None  # Table 8: utility; conditional is '–'
    rcc = next(r for r in paper_table("supplier", True).rows if (r.counterparty, r.agent) == ("rcc", "re"))
    assert rcc.cells[5] == (7.3, 9.6)  # Table 10's pooled conditional compliance of the RE Supplier


def test_welch_from_summary_statistics():
    """Against the closed form at df → large and a hand-checked small case (t = 1.936, df = 58: p = 0.0577)."""
    assert welch_p(0, 1, 30, 0.5, 1, 30) == pytest.approx(0.05768, abs=1e-4)
    assert welch_p(100, 10, 10**6, 100, 10, 10**6) == pytest.approx(1.0)
    z = 2.0
    p = welch_p(z * math.sqrt(2 / 10**6), 1, 10**6, 0, 1, 10**6)
    assert p == pytest.approx(math.erfc(z / math.sqrt(2)), abs=1e-4)
    assert welch_p(5, 0, 180, 5, 0, 180) is None and welch_p(5, 0, 180, 6, 0, 180) == 0.0


@pytest.mark.e2e
def test_solve_takes_a_floor_rule_set_by_name(tmp_path):
    """`solve --floors` reaches the DP: a deduction contract is solved into a cache entry per rule set that floors
    it differently; an unknown name is one error line."""
    contract = tmp_path / "pd.contract"
    contract.write_text(format_ir(TERMS.contract("pd", "PD")))
    cache = tmp_path / "cache"
    for floors in ("cs14", "no-deduction-floor"):
        done = run_cli("solve", contract, "--env", "1", "--floors", floors, "--cache-dir", cache, "--json")
        assert done.returncode == 0, done.stderr
    assert len(list(cache.glob("*.npz"))) == 2
    bad = run_cli("solve", contract, "--env", "1", "--floors", "none")
    assert bad.returncode != 0 and "unknown floor rule set 'none'" in bad.stderr + bad.stdout
