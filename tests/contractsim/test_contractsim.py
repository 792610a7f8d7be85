"""ContractSim simulation: worked example 1 (docs/rules/checks.md) rows that need no DP table, the identities of docs/rules/checks.md for the
available policies, money conservation, common random numbers, observations, metrics."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contractlang import load
from games.contractsim.environments import ENVIRONMENTS, environment
from games.contractsim.game import ContractSimGame, Pay
from games.contractsim.log import WeekShocks
from games.contractsim.metrics import role_run, summarise
from games.contractsim.play import play
from games.contractsim.shocks import draw_shocks
from tests.helpers import ROOT, run_cli
from tests.strategies import contractsim_irs

EXAMPLE1 = load(ROOT / "examples/worked-example-1.contract")[0].ir
CONTRACTS = [
    c.ir for p in sorted((ROOT / "examples").glob("*.contract")) for c in load(p) if c.ir.kind == "contractsim"
]


def test_example1_rows_without_the_rational_supplier():
    assert (lambda r: (r.u_customer, r.u_supplier))(play(EXAMPLE1, environment(1), "re", "re")) == (200, 0)
    run = play(EXAMPLE1, environment(1), "rcc", "re")
    assert (run.u_customer, run.u_supplier) == (182, 18)
    cust = role_run(run, "customer")
    assert cust.eval_weeks == 5 and cust.compliance == 0.2 and cust.tft == 1.0  # week 11 (due 0) excluded
    assert cust.defected and not cust.z_uni and cust.z_rec and cust.e_resp


def test_identities_against_the_re_supplier():
    for ir in CONTRACTS:
        for env in ENVIRONMENTS.values():
            assert (play(ir, env, "re", "re").u_customer, play(ir, env, "re", "re").u_supplier) == (200, 0)  # E2
            for customer in ("rc", "rcc", "re"):
                run = play(ir, env, customer, "re", keep_log=False)
                assert run.u_customer + run.u_supplier == 200  # E6
            rc = role_run(play(ir, env, "rc", "re", keep_log=False), "customer")
            assert rc.compliance in (1.0, None) and not rc.defected  # E10: RC never breaches
            re = role_run(play(ir, env, "re", "re", keep_log=False), "customer")
            if ir.payments[0]:
                assert re.compliance == 0.0 and re.defected  # E10: RE always breaches


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    contractsim_irs(),
    st.sampled_from(list(ENVIRONMENTS)),
    st.sampled_from(["rc", "re", "rcc", "random"]),
    st.sampled_from(["re", "random"]),
    st.integers(0, 10**6),
)
def test_money_is_conserved(ir, env_id, customer, supplier, seed):
    run = play(ir, environment(env_id), customer, supplier, seed=seed)
    value = sum(w.value for w in run.weeks)
    spend = sum(w.spend for w in run.weeks)
    assert run.u_customer + run.u_supplier == run.budget + value - spend


def test_common_random_numbers_do_not_depend_on_policies():
    a = draw_shocks(environment(5), np.random.default_rng(42))
    assert a == draw_shocks(environment(5), np.random.default_rng(42))
    r1 = play(EXAMPLE1, environment(5), "rc", "random", seed=42)
    r2 = play(EXAMPLE1, environment(5), "re", "re", seed=42)
    prices = lambda r: [e.prices for e in r.log if isinstance(e, WeekShocks)]  # noqa: E731
    assert prices(r1) == prices(r2) and len(prices(r1)) == 5


def test_the_customer_never_sees_inventory_prices_or_spoilage():
    state = ContractSimGame.make(EXAMPLE1, environment(5)).new_initial_state(
        draw_shocks(environment(5), np.random.default_rng(0))
    )
    seen = set(state.observe("customer").model_dump())
    assert seen == {
        "role",
        "week",
        "total_paid",
        "remaining_budget",
        "payment_due",
        "observed_breach",
        "deliveries",
        "multiplier",
    }
    assert not seen & {"inventory", "prices", "spoiled", "cash"}
    state = state.apply_action(Pay(amount=0))
    assert state.observe("supplier").inventory == (0, 0, 0) and state.observe("supplier").phase == "order"


def test_summary_over_runs():
    runs = [play(EXAMPLE1, environment(e), "rcc", "re") for e in (1, 2)]
    s = summarise(runs, "customer", counterfactual=runs)
    assert s.utility.mean == 182 and s.regret.mean == 0  # E8: RCC against itself has zero regret
    assert s.compliance.mean == 0.2 and s.tft.mean == 1.0 and s.reciprocal.mean == 1.0


def test_micro_figures_carry_the_week_weighted_sd():
    """[CS-37] by hand: run A complies in all 6 of its weeks (x = 1, |W| = 6); run B in 2 of 4 evaluated weeks
    (x = 0.5, |W| = 4; weeks 9 and 11 owe nothing). Pooled 8/10 = 0.8; SD √((6·0.2² + 4·0.3²)/10) = √0.06."""
    from games.contractsim.play import RunRecord, WeekRecord

    def record(customer_weeks, first_violation=None):
        weeks = [
            WeekRecord(
                week=w,
                role="supplier",
                compliant=True,
                excluded=False,
                observed_breach=first_violation is not None and first_violation < w,
            )
            for w in (2, 4, 6, 8, 10)
        ]
        weeks += [
            WeekRecord(week=w, role="customer", compliant=c, excluded=x, observed_breach=False)
            for w, (c, x) in customer_weeks.items()
        ]
        return RunRecord(
            contract="t",
            env=1,
            customer="x",
            supplier="y",
            seed=0,
            u_customer=0,
            u_supplier=0,
            budget=200,
            weeks=tuple(sorted(weeks, key=lambda w: w.week)),
            customer_first_violation=first_violation,
            supplier_first_violation=None,
        )

    a = record({w: (True, False) for w in (1, 3, 5, 7, 9, 11)})
    b = record(
        {1: (True, False), 3: (True, False), 5: (False, False), 7: (False, False), 9: (True, True), 11: (True, True)},
        first_violation=5,
    )
    s = summarise([a, b], "customer")
    assert s.compliance_micro.mean == pytest.approx(0.8) and s.compliance_micro.sd == pytest.approx(0.06**0.5)
    assert s.compliance.mean == pytest.approx(0.75) and s.compliance.sd == pytest.approx(0.125**0.5)  # macro, n−1


@pytest.mark.e2e
def test_metrics_cli_in_base_units_with_regret_for_every_setting(tmp_path):
    """Hotel (×100): utility and compliant utility in one unit (E12), regret from replayed RCC runs (E8)."""
    runs = tmp_path / "runs.jsonl"
    lines = []
    for customer, supplier in (("rc", "rcc"), ("rcc", "rcc"), ("re", "rc")):
        proc = run_cli(
            "run",
            "examples/hotel-cleaning.contract",
            "--env",
            "1",
            "--customer",
            customer,
            "--supplier",
            supplier,
            "--json",
        )
        assert proc.returncode == 0, proc.stderr
        record = json.loads(proc.stdout)
        assert record["dollars"]["u_customer"] == 100 * record["u_customer"] and record["multiplier"] == 100
        assert record["money_unit"] == {
            "record": "base",
            "weeks": "base",
            "dollars": "setting dollars",
            "contract_ir": "setting dollars",
            "trajectory": "setting dollars",
            "multiplier": 100,
        }
        assert record["trajectory"][0]["amount"] == 100 * record["weeks"][0]["paid"]  # week 1's payment
        lines.append(proc.stdout)
    runs.write_text("".join(lines[:2]))
    out = run_cli("metrics", str(runs), "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["roles"]  # one row per policy of each role (issue #30 item 15)
    assert [(r["role"], r["policy"], r["runs"]) for r in rows] == [
        ("customer", "rc", 1),
        ("customer", "rcc", 1),
        ("supplier", "rcc", 2),
    ]
    records = [json.loads(line) for line in lines[:2]]
    for customer, record in zip(rows, records):
        assert customer["utility"]["mean"] == record["u_customer"]
        assert customer["compliant_utility"]["mean"] == customer["utility"]["mean"]  # E12: neither Customer breaches
        assert customer["regret"] == {"mean": 0.0, "sd": 0.0, "n": 1}  # E5
    assert rows[2]["regret"] == {"mean": 0.0, "sd": 0.0, "n": 2}  # E8
    table = run_cli("metrics", str(runs)).stdout.splitlines()
    assert [line.split("│")[1:4] for line in table if line.startswith("│")] == [
        [" customer ", " rc     ", " 1    "],
        [" customer ", " rcc    ", " 1    "],
        [" supplier ", " rcc    ", " 2    "],
    ]
    runs.write_text(lines[2])
    out = json.loads(run_cli("metrics", str(runs), "--json").stdout)["roles"]
    rcc_vs_rc = json.loads(
        run_cli(
            "run", "examples/hotel-cleaning.contract", "--env", "1", "--customer", "rcc", "--supplier", "rc", "--json"
        ).stdout
    )
    assert out[0]["regret"]["mean"] == rcc_vs_rc["u_customer"] - json.loads(lines[2])["u_customer"]  # E9


def test_run_cli_log_replays_and_bad_input(tmp_path):
    log = tmp_path / "run.jsonl"
    proc = run_cli(
        "run",
        "examples/catering-env5-a.contract",
        "--env",
        "5",
        "--customer",
        "rc",
        "--supplier",
        "random",
        "--log",
        str(log),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    trace = run_cli("trace", "examples/catering-env5-a.contract", str(log), "--json")
    replayed = json.loads(trace.stdout)
    assert [w["compliant"] for w in replayed["weeks"]] == [w["compliant"] for w in record["weeks"]]
    for args, code, message in (
        (["--env", "9"], 2, "Invalid value for '--env'"),
        (["--env", "1", "--supplier", "nobody"], 1, "unknown supplier policy"),
        (["--env", "1", "--customer", "nobody"], 1, "unknown customer policy"),
    ):
        bad = run_cli("run", "examples/worked-example-1.contract", *args)
        assert bad.returncode == code and message in bad.stderr and "Traceback" not in bad.stderr
    bad = run_cli("run", "tests/invalid/missing-price.contract", "--env", "1")
    assert bad.returncode == 1 and "E401" in bad.stderr


def test_shock_laws():
    rng = np.random.default_rng(7)
    draws = [draw_shocks(environment(3), rng) for _ in range(3000)]
    mozzarella = [w.prices[0] for d in draws for w in d.weeks]
    assert abs(mozzarella.count(3) / len(mozzarella) - 1 / 3) < 0.02
    spoil = [w.spoilage[2] for d in draws for w in d.weeks]
    assert set(spoil) == {0, 1} and abs(spoil.count(1) / len(spoil) - 0.5) < 0.02


def test_hand_computed_week_dynamics():
    """Env 5, hand-picked shocks: spoilage on leftovers, receipts r = lo + ⌊U(x − lo + 1)⌋, the cap at 10
    (excess lost but paid for), cash flows, and the monitor's verdict on the delivery."""
    from games.contractsim.game import Order, Pay, Produce
    from games.contractsim.shocks import Shocks, WeekShocks

    week = WeekShocks(spoilage=(2, 0, 1), prices=(3, 2, 2), receipt_uniform=(0.99, 0.0, 0.5))
    shocks = Shocks(weeks=(week,) * 5)
    s = ContractSimGame.make(EXAMPLE1, environment(5)).new_initial_state(shocks)
    s = s.apply_action(Pay(amount=18))  # cash 20 + 18
    assert (s.cash, s.inventory, s.phase) == (38, (0, 0, 0), "order")
    assert not s.is_legal(Order(quantities=(12, 2, 3)))  # 36 + 4 + 6 = 46 > 38
    s = s.apply_action(Order(quantities=(8, 2, 3)))  # cost 24 + 4 + 6 = 34
    # receipts (lo = ⌊x/2⌋): 4 + ⌊0.99·5⌋ = 8; 1 + ⌊0·2⌋ = 1; 1 + ⌊0.5·3⌋ = 2
    assert (s.cash, s.received, s.inventory) == (4, (8, 1, 2), (8, 1, 2))
    s = s.apply_action(Produce(quantities=(1, 0, 1)))  # uses I1 1, I2 1, I3 2
    assert s.inventory == (7, 0, 0) and s.monitor.weeks[-1].compliant is False  # pasta missing
    s = s.apply_action(Pay(amount=18))  # week 3; week 4 starts with spoilage on the leftovers
    assert s.spoiled == (2, 0, 0) and s.inventory == (5, 0, 0) and s.cash == 22
    s = s.apply_action(Order(quantities=(6, 0, 0)))  # cost 18; receipt 3 + ⌊0.99·4⌋ = 6; 5 + 6 capped to 10
    assert s.received[0] == 6 and s.inventory[0] == 10  # one unit lost to the cap ...
    assert s.cash == 4 and s.spend_total == 34 + 18  # ... and still paid for


def test_the_paper_tables_convention_voids_the_customers_dues_after_a_breach_only_under_deduction_or_rollover(tmp_path):
    """An RCC Customer against an RE Supplier in Env 1, on the plain contract and on the rollover one; the Supplier
    breaches in week 2 and the Customer stops paying from week 3. By hand:
    [CS-19]: plain, 6 due weeks, 1 paid → 1/6; rollover, week 11 owes 0, so 1 of 5 → 1/5; both defect.
    [CS-19a]: the rollover contract's Customer weeks after week 2 are void → 1 of 1 and no defection; the RE
    Supplier's weeks there no longer follow a Customer violation, so its TFT there is 0 instead of 4/5."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "".join(
            run_cli(
                "run", f"examples/{name}.contract", "--env", "1", "--customer", "rcc", "--supplier", "re", "--json"
            ).stdout
            for name in ("catering-base", "catering-rollover")
        )
    )
    by_convention = {}
    for convention in ("cs19", "paper-tables"):
        out = run_cli("metrics", runs, "--convention", convention, "--json")
        assert out.returncode == 0, out.stderr
        by_convention[convention] = {r["role"]: r for r in json.loads(out.stdout)["roles"]}
    cs19, paper = by_convention["cs19"], by_convention["paper-tables"]
    assert cs19["customer"]["compliance"]["mean"] == pytest.approx((1 / 6 + 1 / 5) / 2)
    assert paper["customer"]["compliance"]["mean"] == pytest.approx((1 / 6 + 1) / 2)
    assert (cs19["customer"]["defection"]["mean"], paper["customer"]["defection"]["mean"]) == (1.0, 0.5)
    assert cs19["supplier"]["tft"]["mean"] == pytest.approx(0.8)
    assert paper["supplier"]["tft"]["mean"] == pytest.approx(0.4)
    assert paper["supplier"]["defection"]["mean"] == 1.0  # the Supplier's own dues are never voided
    bad = run_cli("metrics", runs, "--convention", "authors")
    assert bad.returncode == 1 and "unknown convention 'authors'; choose from cs19, paper-tables" in bad.stderr
