"""the identities of docs/rules/checks.md and worked example 1 (docs/rules/checks.md) with the rational Suppliers playing the DP table (issue #4),
on every bundled example in every environment."""

import json

import pytest

from contractlang.interpreter.events import Delivery
from games.contractsim.environments import environment
from games.contractsim.log import OrderPlaced
from games.contractsim.metrics import role_run, summarise
from games.contractsim.play import play
from tests.dp_helpers import CASES, CI_CASES, FULL, example, solved
from tests.hardening.hostile import WORKED, cli

# CI's reduced size: Envs 1, 3 and 5 (one deterministic and two stochastic, whose tables the DP and money tests
# solve too), rollover examples (the slowest solves) in Env 1 only; CONTRACTLANG_SLOW_SCALE=full plays all 72
IDENTITY_CASES = (
    CASES
    if FULL
    else [(n, e) for n, e in CASES if e == 1 or (e in (3, 5) and example(n).contingencies.rollover is None)]
)


def test_worked_example_1_all_four_rows(tables):
    env = environment(1)
    rows = {
        (c, s): play(example("worked-example-1"), env, c, s, tables=tables)
        for c, s in (("rcc", "rcc"), ("re", "rcc"), ("rcc", "re"), ("re", "rc"))
    }
    assert {k: (r.u_customer, r.u_supplier) for k, r in rows.items()} == {
        ("rcc", "rcc"): (215, 50),
        ("re", "rcc"): (200, 0),
        ("rcc", "re"): (182, 18),
        ("re", "rc"): (242, -16),
    }
    orders = [e.order for e in rows[("rcc", "rcc")].log if isinstance(e, OrderPlaced)]
    assert (
        orders == [(2, 2, 2)] * 5
    )  # worked example 1 (docs/rules/checks.md): buy just in time, ties broken to the lower cost
    delivered = [e.qty for e in rows[("re", "rc")].log if isinstance(e, Delivery)]
    assert delivered == [1] * 6 + [0] * 9  # two deliveries, then cash 4 cannot fund a third


def _runs(ir, env, tables, customer, supplier):
    return play(ir, env, customer, supplier, keep_log=True, tables=tables)


@pytest.mark.slow
@pytest.mark.parametrize("name,env_id", IDENTITY_CASES)
def test_single_run_identities(tables, name, env_id):
    ir, env = example(name), environment(env_id)
    solved(tables, ir, env_id)
    play_ = lambda c, s: _runs(ir, env, tables, c, s)  # noqa: E731
    re_rcc, re_re, re_rc = play_("re", "rcc"), play_("re", "re"), play_("re", "rc")
    if ir.payments[0] > 0:
        assert (re_rcc.u_customer, re_rcc.u_supplier) == (200, 0)  # E1
        assert [w.compliant for w in re_rcc.weeks] == [w.compliant for w in re_re.weeks]  # E3, E4
    assert (re_re.u_customer, re_re.u_supplier) == (200, 0)  # E2
    rc_rc, rc_rcc = play_("rc", "rc"), play_("rc", "rcc")
    assert rc_rc.log == rc_rcc.log  # E5: an RC Customer never triggers RCC
    for customer in ("rc", "rcc", "re"):
        run = play_(customer, "re")
        assert run.u_customer + run.u_supplier == 200  # E6
    spend = sum(w.spend for w in re_rc.weeks)
    assert re_rc.u_supplier == -spend and -env.capital <= re_rc.u_supplier <= 0  # E7
    assert re_rc.u_customer == 200 + sum(w.value for w in re_rc.weeks)
    rcc_rcc = play_("rcc", "rcc")
    for role in ("customer", "supplier"):
        summary = summarise([rcc_rcc], role, counterfactual=[play_("rcc", "rcc")])
        assert summary.regret.mean == 0 and summary.compliant_regret.mean == 0  # E8: the counterfactual is itself
    rc = role_run(rc_rc, "customer")
    assert rc.compliance in (1.0, None) and not rc.defected  # E10
    for run in (rc_rc, rcc_rcc):
        for role, other in (("customer", "supplier"), ("supplier", "customer")):
            mine, theirs = role_run(run, role), role_run(run, other)
            if not theirs.defected and mine.eval_weeks:
                assert mine.tft == mine.compliance  # E11(a)
            if not mine.defected:
                assert mine.compliant_utility == mine.utility  # E12


@pytest.mark.slow
@pytest.mark.parametrize("name,env_id", [(n, e) for n, e in CI_CASES if e in (1, 5)])
def test_money_is_conserved_with_rational_suppliers(tables, name, env_id):
    """U_Cust + U_Supp = budget + value delivered − ingredient spend, for every customer policy. A random payer
    can pay ahead, which needs the Supplier's budget-cover table, a second solve per (contract, environment):
    at CI size only in Env 1 (test_dp's any-legal-payment test plays random payers in Envs 3 and 5)."""
    ir = example(name)
    for supplier in ("rc", "rcc"):
        for customer in ("rc", "re", "rcc", "random") if FULL or env_id == 1 else ("rc", "re", "rcc"):
            for seed in range(5):
                run = play(ir, environment(env_id), customer, supplier, seed=seed, keep_log=False, tables=tables)
                value = sum(w.value for w in run.weeks)
                spend = sum(w.spend for w in run.weeks)
                assert run.u_customer + run.u_supplier == run.budget + value - spend


@pytest.mark.slow
@pytest.mark.parametrize("name,env_id", [("catering-deduction", 5), ("worked-example-1", 1), ("catering-base", 4)])
def test_batch_engine_plays_the_same_games_as_the_reference_engine(tables, name, env_id):
    from games.contractsim.batch import POLICIES, play_batch

    ir, env = example(name), environment(env_id)
    for customer in POLICIES:
        for supplier in POLICIES:
            batch = play_batch(ir, env, customer, supplier, range(12), tables=tables)
            for seed, run in enumerate(batch):
                assert run == play(ir, env, customer, supplier, seed=seed, keep_log=False, tables=tables)
    with pytest.raises(KeyError, match="needs `play`"):
        play_batch(ir, env, "random", "rc", range(2), tables=tables)


@pytest.mark.e2e
def test_the_rational_supplier_plays_a_customer_paying_off_schedule(tmp_path):
    proc = cli(
        "run", WORKED, "--env", "3", "--customer", "random", "--supplier", "rc", "--seed", "14", "--json", cwd=tmp_path
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["seed"] == 14
