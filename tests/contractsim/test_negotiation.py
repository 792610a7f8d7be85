"""The ContractSim negotiation game (ContractSim paper, Sec. 3, [CS-20], [CS-21]) and its metrics (ContractSim paper, App. C.5), offline."""

import json
import os
import sys

import pytest

from contractlang import load
from contractlang.render.prose import render
from games.contractsim.environments import environment
from games.contractsim.negotiation import negotiate, negotiation_metrics, read_turn
from games.contractsim.negotiators import Appraiser
from solver.dp import TableCache
from tests.helpers import ROOT, assert_each_fails_in_one_line, run_cli

BASE = load(ROOT / "examples/catering-base.contract")[0].ir
WORKED = load(ROOT / "examples/worked-example-1.contract")[0].ir


@pytest.mark.parametrize(
    "raw,role,expect",
    [
        ('{"response": "hi", "contract": "C"}', "supplier", ("hi", "C", False, False, False)),
        ('Sure.\n```json\n{"response": "ok", "accept": true}\n```', "customer", ("ok", None, True, False, False)),
        ('I think {"response": "bye", "terminate": true} is best', "customer", ("bye", None, False, True, False)),
        ('{"response": "both", "contract": "C", "accept": true}', "customer", ("both", None, False, False, True)),
        ('{"response": "mine", "accept": true}', "supplier", ("mine", None, False, False, True)),
        ("no json here", "customer", ("no json here", None, False, False, True)),
        ('{"response": "blank", "contract": "  "}', "supplier", ("blank", None, False, False, False)),
    ],
)
def test_read_turn_recovers_conservatively(raw, role, expect):
    turn = read_turn(raw, role, 1)
    assert (turn.response, turn.contract, turn.accept, turn.terminate, turn.dialogue_only) == expect


class Script:
    """A negotiator that replays fixed replies, one per turn."""

    def __init__(self, name, replies):
        self.name = name
        self.replies = list(replies)
        self.seen = []

    def act(self, observation):
        self.seen.append(observation)
        return self.replies.pop(0) if self.replies else json.dumps({"response": "..."})


@pytest.fixture(scope="module")
def appraiser():
    return Appraiser(environment(1), TableCache(None))


def offer(ir):
    return json.dumps({"response": "offer", "contract": render(ir)})


ACCEPT = json.dumps({"response": "yes", "accept": True})
TALK = json.dumps({"response": "hmm"})


def test_the_customer_accepts_the_suppliers_offer_of_the_round_before(appraiser):
    customer = Script("c", [TALK, ACCEPT])
    record = negotiate(appraiser.env, customer, Script("s", [offer(BASE)]), appraiser.translate)
    assert record.outcome == "agreed" and record.agreed.terms == BASE and record.agreed.round == 1
    assert customer.seen[1].can_accept and customer.seen[1].proposer == "supplier"
    assert not customer.seen[0].can_accept  # nothing to accept in round 1


def test_an_acceptance_is_valid_only_right_after_a_supplier_proposal(appraiser):
    # round 1: offer; round 2: the Supplier only talks, so the Customer's round-3 accept is not valid [CS-20]
    customer = Script("c", [TALK, TALK, ACCEPT])
    record = negotiate(
        appraiser.env, customer, Script("s", [offer(BASE), TALK, TALK]), appraiser.translate, max_rounds=3
    )
    assert record.outcome == "no agreement" and not customer.seen[2].can_accept
    # a Supplier proposal in the last round can never be accepted
    last = negotiate(
        appraiser.env, Script("c", [TALK, TALK]), Script("s", [TALK, offer(BASE)]), appraiser.translate, max_rounds=2
    )
    assert last.outcome == "no agreement" and len(last.proposals) == 1
    ended = negotiate(
        appraiser.env,
        Script("c", [TALK]),
        Script("s", [json.dumps({"response": "no", "terminate": True})]),
        appraiser.translate,
    )
    assert ended.outcome == "terminated" and ended.terminated_by == "supplier" and len(ended.turns) == 2


def test_a_customer_proposal_replaces_the_suppliers(appraiser):
    customer = Script("c", [TALK, offer(WORKED), ACCEPT])
    record = negotiate(
        appraiser.env, customer, Script("s", [offer(BASE), TALK, TALK]), appraiser.translate, max_rounds=3
    )
    assert record.outcome == "no agreement" and customer.seen[2].proposer == "customer"
    assert [p.role for p in record.proposals] == ["supplier", "customer"]


def test_metrics_from_the_exact_dp(appraiser):
    """Env 1 is deterministic: the gains are the DP utilities less u(⊥), and the Customer regrets accepting
    B when the Supplier had offered A, which was better for it."""
    a, b = sorted((BASE, WORKED), key=lambda ir: appraiser.solve(ir).u_customer, reverse=True)
    garbage = json.dumps({"response": "see", "contract": "We will sort out prices later."})
    record = negotiate(
        appraiser.env,
        Script("c", [TALK, TALK, TALK, ACCEPT]),
        Script("s", [offer(a), garbage, offer(b)]),
        appraiser.translate,
    )
    assert record.outcome == "agreed" and record.agreed.terms == b
    m = negotiation_metrics(record, appraiser.env, appraiser.solve)
    result = appraiser.solve(b)
    assert m.gain_customer == pytest.approx(result.u_customer - 200) and m.gain_supplier == result.u_supplier
    assert m.p_sat == result.p_sat and m.completeness == result.completeness
    assert m.contingency_count == b.contingencies.explicit_count
    assert m.feasible_proposals == {"customer": (0, 0), "supplier": (2, 3)}  # the prose without terms is not
    assert m.acceptance_regret == {
        "customer": appraiser.solve(a).u_customer > result.u_customer + 1e-9,
        "supplier": False,
    }
    assert m.acceptance_regret["customer"] is True


@pytest.mark.e2e
def test_negotiate_cli_cross_checks_the_dp_against_the_played_game():
    """Env 1 has no randomness: the agreed contract's DP expected utility is the utility of the played game."""
    proc = run_cli("negotiate", "--env", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    [out] = json.loads(proc.stdout)["runs"]
    [performance] = out["performances"]
    assert out["negotiation"]["outcome"] == "agreed" and out["metrics"]["mutual_benefit"] is True
    assert performance["u_customer"] == pytest.approx(200 + out["metrics"]["gain_customer"])
    assert performance["u_supplier"] == pytest.approx(out["metrics"]["gain_supplier"])
    text = run_cli("negotiate", "--env", "1")
    assert "outcome: agreed" in text.stdout and "performance (rcc vs rcc, seed 42)" in text.stdout


@pytest.mark.slow
def test_offline_negotiation_and_performance_sweep():
    """Scripted negotiators and RCC performance games: no key, no network. CI sweeps the deterministic Envs 1–2
    with 2 games each (the scripted Supplier solves every candidate in every environment: ~90 s for all six);
    CONTRACTLANG_SLOW_SCALE=full sweeps all six with 3 games. Each agreed contract's expected gains are
    non-negative for both (the scripted rule), and in Envs 1–2 the played utilities equal the DP's."""
    full = os.environ.get("CONTRACTLANG_SLOW_SCALE") == "full"
    envs, games = ([1, 2, 3, 4, 5, 6], 3) if full else ([1, 2], 2)
    proc = run_cli("negotiate", "--env", "all" if full else "1,2", "--games", str(games), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    runs, summary = out["runs"], out["summary"]
    assert [r["env"] for r in runs] == envs and summary["negotiations"] == len(envs)
    agreed = [r for r in runs if r["metrics"]["agreed"]]
    assert summary["agreed"] == len(agreed) >= 1 and summary["performance_games"] == games * len(agreed)
    assert summary["llm"]["calls"] == 0
    for r in agreed:
        assert r["metrics"]["gain_customer"] >= -1e-9 and r["metrics"]["gain_supplier"] >= -1e-9
        assert [g["seed"] for g in r["performances"]] == list(range(42, 42 + games))
        if r["env"] in (1, 2):
            for g in r["performances"]:
                assert g["u_customer"] == pytest.approx(200 + r["metrics"]["gain_customer"])
    text = run_cli("negotiate", "--env", "1,2")
    assert "== environment 2 ==" in text.stdout and "negotiations agreed" in text.stdout


def test_negotiate_cli_hostile_input(tmp_path):
    cases = [
        (("negotiate", "--env", "9"), "environment"),
        (("negotiate", "--env", "one"), "expected comma-separated environments"),
        (("negotiate", "--env", "1", "--customer", "nobody"), "unknown Customer negotiator 'nobody'"),
        (
            (
                "negotiate",
                "--env",
                "1",
                "--candidates",
                "examples/hotel-cleaning.contract",
                "--candidates",
                "examples/catering-base.contract",
            ),
            "the candidates mix settings",
        ),
        (("negotiate", "--env", "1", "--candidates", str(tmp_path / "none.contract")), "none.contract"),
    ]
    assert_each_fails_in_one_line(run_cli, cases)


EXAMPLE_AGENT = f"cmd:{sys.executable} examples/agents/external_agent.py"


@pytest.mark.e2e
def test_external_negotiators_over_json_lines(tmp_path):
    """The example program offers the base Catering terms once; in Env 1 they leave the Customer $5 short of
    walking away, so the scripted Customer never accepts, while the example Customer does."""
    [both] = json.loads(
        run_cli("negotiate", "--env", "1", "--customer", EXAMPLE_AGENT, "--supplier", EXAMPLE_AGENT, "--json").stdout
    )["runs"]
    assert both["negotiation"]["outcome"] == "agreed" and both["negotiation"]["customer"] == EXAMPLE_AGENT
    assert both["metrics"]["gain_customer"] == pytest.approx(-5) and both["metrics"]["mutual_benefit"] is False
    assert both["performances"][0]["u_customer"] == 195
    [refused] = json.loads(run_cli("negotiate", "--env", "1", "--supplier", EXAMPLE_AGENT, "--json").stdout)["runs"]
    assert refused["negotiation"]["outcome"] == "no agreement" and len(refused["negotiation"]["turns"]) == 100
    dead = tmp_path / "dead.py"
    dead.write_text("import sys\nsys.exit(4)\n")
    proc = run_cli("negotiate", "--env", "1", "--supplier", f"cmd:{sys.executable} {dead}")
    assert proc.returncode == 1 and "exited (code 4)" in proc.stderr and "Traceback" not in proc.stderr


# --- the negotiation experiment: pairings × repeats into --out (issue #31) -----------------------------------


def negotiate_out(out, *args):
    done = run_cli("negotiate", "--env", "1", *args, "--out", out, "--workers", "1", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def outputs(out):
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.mark.e2e
def test_pairings_times_repeats_resume_byte_identically(tmp_path):
    """2 Customers × 1 Supplier × 2 repeats = 4 negotiations in Env 1, on worked example 1 (docs/rules/checks.md) (U_Cust 215, U_Supp
    50), which both Customers accept. A run cut after its first record (and half of its second line) plays the
    other 3 when rerun and writes the same bytes as the uninterrupted run."""
    whole = tmp_path / "whole"
    agents = (
        "--customer",
        "scripted",
        "--customer",
        EXAMPLE_AGENT,
        "--repeats",
        "2",
        "--candidates",
        "examples/worked-example-1.contract",
    )
    first = negotiate_out(whole, *agents)
    assert first["played_now"] == 4 and first["summary"]["negotiations"] == 4
    assert [(r["negotiation"]["customer"], r["env"]) for r in first["runs"]] == [("scripted", 1)] * 2 + [
        (EXAMPLE_AGENT, 1)
    ] * 2
    folder = whole / "negotiation"
    figure3 = json.loads((folder / "figure3.json").read_text())
    assert [(b["role"], b["agent"], b["metrics"]["negotiations"]) for b in figure3["bars"]] == [
        ("customer", "scripted", 2),
        ("customer", EXAMPLE_AGENT, 2),
        ("supplier", "scripted", 4),
    ]
    assert set(figure3["bars"][0]["metrics"]) >= {
        "proposal_feasibility",
        "acceptance_regret",
        "mutual_benefit",
        "p_sat",
    }
    [panel] = json.loads((folder / "figure2.json").read_text())["panels"]
    assert panel["env"] == 1 and panel["frontier"]["f1"] and len(panel["pairings"]) == 2
    assert [
        (p["negotiations"], p["agreed"], p["u_customer"], p["u_supplier"], p["p_sat"]) for p in panel["pairings"]
    ] == [(2, 2, 215, 50, 1.0)] * 2
    assert not (folder / "figure5.json").exists()
    for name in ("figure2.png", "figure3.png"):
        assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    cut = tmp_path / "cut"
    lines = (whole / "jobs" / "negotiations.jsonl").read_bytes().splitlines(keepends=True)
    (cut / "jobs").mkdir(parents=True)
    (cut / "jobs" / "negotiations.jsonl").write_bytes(lines[0] + lines[1][: len(lines[1]) // 2])
    resumed = negotiate_out(cut, *agents)
    assert resumed["played_now"] == 3 and resumed["runs"] == first["runs"]  # the cut line is played again
    assert outputs(cut) == outputs(whole)


@pytest.mark.e2e
def test_a_setting_scales_the_money_and_guidance_conditions_face_the_control(tmp_path):
    """Hotel Cleaning is Catering with money × 100 (ContractSim paper, App. A.1–A.2): offered worked example 1 (docs/rules/checks.md) alone (U_Cust 215, U_Supp 50
    in Env 1), the scripted pair agrees on it with every amount × 100. With --ablation the control and each
    clause are conditions of their own (Figure 5); tables.md has the Table-11 layout."""
    out = negotiate_out(
        tmp_path / "h",
        "--setting",
        "hotel",
        "--candidates",
        "examples/worked-example-1.contract",
        "--guidance",
        "net-utility",
        "--ablation",
    )
    control, clause = out["runs"]
    terms = control["negotiation"]["agreed"]["terms"]
    assert (terms["name"], terms["setting"], terms["payments"]) == ("worked-example-1", "hotel", [1800] * 5 + [0])
    assert terms["prices"] == [1000, 500, 300]
    assert (control["metrics"]["gain_customer"], control["metrics"]["gain_supplier"]) == (1500, 5000)
    performance = control["performances"][0]
    assert performance["multiplier"] == 100 and (performance["u_customer"], performance["u_supplier"]) == (215, 50)
    assert clause["metrics"] == control["metrics"]
    folder = tmp_path / "h" / "negotiation"
    figure5 = json.loads((folder / "figure5.json").read_text())
    assert figure5["setting"] == "hotel"
    assert [(b["condition"], b["role"]) for b in figure5["bars"]] == [
        ("control", "customer"),
        ("control", "supplier"),
        ("net-utility", "customer"),
        ("net-utility", "supplier"),
    ]
    assert (folder / "figure5.png").exists()
    md = (folder / "tables.md").read_text()
    assert "## Setting robustness (Table 11 / Figure 11; control)" in md and "| hotel | customer | 1 | 1 |" in md
    # the tables report expected gains in base units, as the paper's do: Catering's
    [row] = json.loads((folder / "tables.json").read_text())["settings"]
    assert (row["setting"], row["customer"]["gain"], row["supplier"]["gain"]) == ("hotel", 15, 50)


@pytest.mark.e2e
def test_figure2_draws_a_synthetic_sets_frontiers_in_the_stochastic_environments(tmp_path):
    """Envs 1–2's frontiers are enumerated; Env 3's come from `--frontiers SET`, the frontiers.json
    `experiment frontier` wrote there. A set without one, or with a file that is not one, is one line before
    any negotiation is played."""
    from games.experiments.frontier import Frontier, FrontierReport, Point
    from games.experiments.synth import Terms
    from games.figures import write_json

    terms = Terms(quantities=(4, 1, 1), prices=(6, 3, 2), payments=(41, 39, 36, 25, 23, 33))
    points = tuple(
        Point(terms=terms, variant=v, p_sat=0.97, u_customer=280.0 + i, u_supplier=40.0 - 5 * i)
        for i, v in enumerate(("base", "RO"))
    )
    (tmp_path / "set" / "frontiers").mkdir(parents=True)
    write_json(
        tmp_path / "set" / "frontiers" / "frontiers.json",
        FrontierReport(frontiers=(Frontier(env=3, f1=points[:1], f2=points, pool_f1=1, pool_f2=2),), sweeps=((),)),
    )
    done = run_cli(
        "negotiate",
        "--env",
        "1,3",
        "--candidates",
        "examples/worked-example-1.contract",
        "--out",
        tmp_path / "out",
        "--frontiers",
        tmp_path / "set",
        "--workers",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    panels = json.loads((tmp_path / "out" / "negotiation" / "figure2.json").read_text())["panels"]
    assert [(p["env"], p["exact"]) for p in panels] == [(1, True), (3, False)]
    assert len(panels[0]["frontier"]["f1"]) > 1
    assert [pt["u_customer"] for pt in panels[1]["frontier"]["f2"]] == [280.0, 281.0]

    (tmp_path / "bad" / "frontiers").mkdir(parents=True)
    (tmp_path / "bad" / "frontiers" / "frontiers.json").write_text('{"frontiers": 3}')
    assert_each_fails_in_one_line(
        lambda *args: run_cli("negotiate", "--env", "3", "--out", tmp_path / "o2", *args),
        [
            (
                ("--frontiers", tmp_path / "nowhere"),
                "has no frontiers/frontiers.json; run `contractlang experiment frontier",
            ),
            (("--frontiers", tmp_path / "bad"), "frontiers.json: not written by `contractlang experiment frontier`"),
        ],
    )
    assert not (tmp_path / "o2").exists()


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("--repeats", "0"), 2, "Invalid value for '--repeats': 0 is not in the range 1<=x<=1000"),
        (("--repeats", str(10**12)), 2, "is not in the range 1<=x<=1000"),
        (("--setting", "bogus"), 1, "unknown setting 'bogus'; choose from catering, hotel, ai-hosting"),
        (("--customer", "scripted", "--customer", ""), 2, "--customer takes a negotiator name, not an empty text"),
        (("--supplier", " "), 2, "--supplier takes a negotiator name, not an empty text"),
        (("--ablation",), 2, "--ablation compares --guidance clauses with the control"),
    ],
)
def test_negotiate_experiment_hostile_input(tmp_path, args, code, message):
    for extra in ((), ("--json",)):
        done = run_cli("negotiate", "--env", "1", *args, "--out", tmp_path / "out", *extra)
        assert done.returncode == code and "Traceback" not in done.stderr + done.stdout, done.stderr
        text = json.loads(done.stdout)["error"] if extra else done.stderr
        assert message in text and len(text.strip().splitlines()) == 1, text
    assert not (tmp_path / "out").exists()
