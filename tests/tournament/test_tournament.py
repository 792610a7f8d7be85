"""Tournaments through the facade and the command line: every cell played, regret anchored to RCC, common random
numbers, incremental reruns and byte-identical resumes."""

from __future__ import annotations

import json
import os
import shutil

import pytest

import contractlang as cl
from games.contractsim.environments import environment
from games.contractsim.log import WeekShocks
from games.contractsim.play import play
from games.experiments.synth import SHIPPED, set_contracts
from tests.helpers import run_cli


def _tournament(synthetic, out, agents, **options):
    return cl.tournament(agents, directory=synthetic, out=out, seeds=2, workers=1, resamples=200, **options)


@pytest.fixture(scope="module")
def played(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("tournament")
    return out, _tournament(synthetic, out, ["rcc", "re", "random"])


def test_every_customer_meets_every_supplier_and_rcc_has_no_regret(played):
    _, result = played
    rep = result.report
    cells = {(c.role, c.agent, c.opponent) for c in rep.cells}
    agents = ("rcc", "re", "random")
    assert cells == {(r, a, b) for r in ("customer", "supplier") for a in agents for b in agents}
    assert result.played == rep.games == 2 * 2 * 9  # two contracts × two seeds × nine pairings
    by = {(r.role, r.agent): r for r in rep.ratings}
    for role in ("customer", "supplier"):
        rcc = by[(role, "rcc")]
        for q in (rcc.optimum_regret, rcc.regret, rcc.compliant_regret):
            assert abs(q.mean) <= 1e-9 and abs(q.low) <= 1e-9 and abs(q.high) <= 1e-9
        for agent in agents:
            r = by[(role, agent)]
            for q in (r.utility, r.optimum_regret, r.regret, r.compliant_regret):
                assert q.low <= q.mean <= q.high
        # the optimum keeps the contract: what RE gains by breaching does not count against it (eq. 36)
        assert by[(role, "re")].compliant_regret.mean > 0
        assert by[(role, "re")].optimum_regret.mean > 0 and by[(role, "random")].optimum_regret.mean > 0
        # regret against the optimum is the compliant regret of the games against RCC, and of no others
        against_rcc = [c for c in rep.cells if (c.role, c.opponent) == (role, "rcc")]
        for c in against_rcc:
            assert by[(role, c.agent)].optimum_regret.mean == pytest.approx(c.compliant_regret.mean)
    # the frontier's top is the most welfare any contract of Env 1 gives rational players at P_sat ≥ 0.95: this
    # contract (P_sat 1) cannot give more (ContractSim paper, App. C.5)
    shipped = json.loads((SHIPPED / "frontiers" / "frontiers.json").read_text())["frontiers"]
    [env1] = [f for f in shipped if f["env"] == 1]
    top = max(p["u_customer"] + p["u_supplier"] for p in env1["f2"])
    for c in rep.cells:
        assert c.metrics["welfare_frontier"].mean == top >= c.metrics["welfare_exact"].mean
    # against a rational Supplier, not paying forfeits what RCC would have had
    [cell] = [c for c in rep.cells if (c.role, c.agent, c.opponent) == ("customer", "re", "rcc")]
    assert cell.regret.mean > 0
    assert json.loads(result.path.read_text())["games"] == rep.games


def test_compliant_regret_by_hand(synthetic, tmp_path):
    """Example 1's terms (budget 200, five payments of 18 for goods worth 21 each, inputs costing 8 a week), RE
    against RC. RE as Customer withholds the first two payments while RC still delivers: 200 + 21 + 21 = 242,
    whose compliant utility keeps none of the gains of those breached weeks: 200 (ContractSim paper, App. C.6,
    eq. 34); RCC in its seat pays and receives all five: 200 + 5 · 3 = 215. RE as Supplier delivers nothing and
    RC pays all five: 90, compliant 0; RCC's seat earns 5 · (18 − 8) = 50."""
    result = cl.tournament(
        ["rc", "re"], directory=synthetic, contracts="synth-env1-rho1.0-base", out=tmp_path, seeds=1, workers=1
    )
    cells = {(c.role, c.agent, c.opponent): c for c in result.report.cells}
    for role, plain, compliant in (("customer", 215 - 242, 215 - 200), ("supplier", 50 - 90, 50 - 0)):
        cell = cells[(role, "re", "rc")]
        assert (cell.regret.mean, cell.compliant_regret.mean) == (plain, compliant)
    customer = cells[("customer", "re", "rc")]
    assert (customer.utility.mean, customer.metrics["compliant_utility"].mean) == (242, 200)


def test_two_agents_on_one_seed_face_the_same_shocks(synthetic):
    """Common random numbers ([CS-11]): the prices drawn for a seed do not depend on who plays."""
    ir = set_contracts(synthetic)[1][0][1]
    env = environment(5)  # random prices: Env 1 has one price per input

    def prices(customer, supplier, seed):
        run = play(ir, env, customer, supplier, seed=seed)
        return [(e.week, e.prices) for e in run.log if isinstance(e, WeekShocks)]

    same = [prices(c, s, 7) for c, s in (("random", "re"), ("re", "random"), ("rc", "random"))]
    assert same[0] == same[1] == same[2] and len(same[0]) == 5
    assert any(prices("random", "re", seed) != same[0] for seed in range(8, 12))


class Payer:
    """Pays what is due: a Python agent, so its games go through `play`."""

    name = "payer"

    def act(self, observation):
        return {"kind": "pay", "amount": min(observation.payment_due, observation.remaining_budget)}


def test_a_contract_s_games_played_together_are_the_games_played_one_by_one(synthetic):
    """A worker plays the games of one contract in one batch (the rational pairings' seeds in one call of the
    batch engine, the others through `play`): each record is the one the game played alone gives."""
    from games.tournament.contractsim import Case, matches, play_match, play_matches

    entry, ir = set_contracts(synthetic)[1][0]
    jobs = matches(
        [Case(contract=ir, env=entry.env, seed=s) for s in range(3)], ["rc", "re", "payer"], ["rc", "random"]
    )
    objects = {"payer": Payer()}
    batch = play_matches(jobs, objects)
    assert len(batch) == len(jobs) == 3 * (3 * 2 + 2 + 3 + 1)
    assert batch == [play_match(job, objects=objects) for job in jobs]
    assert play_matches(jobs[::-1], objects) == batch[::-1]


def test_adding_an_agent_plays_only_its_cells(synthetic, tmp_path):
    first = _tournament(synthetic, tmp_path, ["rcc", "re"])
    assert first.played == 2 * 2 * 4
    second = _tournament(synthetic, tmp_path, ["rcc", "re", "random"])
    assert second.played == 2 * 2 * (9 - 4)
    assert second.report.games == 2 * 2 * 9


def test_an_interrupted_and_resumed_run_stores_the_same_bytes(played, synthetic, tmp_path):
    whole, result = played
    store = result.store.read_bytes()
    cut = tmp_path / "cut"
    (cut / "jobs").mkdir(parents=True)
    lines = store.splitlines(keepends=True)
    # an interrupt after a third of the games, the last line cut short while it was written
    (cut / "jobs" / result.store.name).write_bytes(b"".join(lines[: len(lines) // 3]) + lines[len(lines) // 3][:40])
    resumed = _tournament(synthetic, cut, ["rcc", "re", "random"])
    assert resumed.played == len(lines) - len(lines) // 3
    assert resumed.store.read_bytes() == store
    assert resumed.path.read_bytes() == (whole / "tournament.json").read_bytes()


@pytest.mark.e2e
def test_the_command_prints_ratings_and_regret_with_intervals(played, synthetic, tmp_path):
    whole, _ = played
    out = tmp_path / "T"
    shutil.copytree(whole / "jobs", out / "jobs")  # the games are stored: the command only reads and ranks
    done = run_cli(
        "tournament", synthetic, "--agents", "rcc,re,random", "--seeds", "2", "--out", out, "--workers", "1", "--json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["played_now"] == 0
    rows = {(r["role"], r["agent"]): r for r in data["ratings"]}
    assert set(rows) == {(role, a) for role in ("customer", "supplier") for a in ("rcc", "re", "random")}
    for row in rows.values():
        for q in ("utility", "optimum_regret", "compliant_regret", "regret", "strength"):
            assert row[q]["low"] <= row[q]["mean"] <= row[q]["high"]
    for role in ("customer", "supplier"):
        assert rows[(role, "rcc")]["optimum_regret"]["mean"] == rows[(role, "rcc")]["regret"]["mean"] == 0
        assert rows[(role, "re")]["optimum_regret"]["mean"] > 0


@pytest.mark.e2e
def test_a_ctbench_tournament_plays_every_pair_in_both_seat_orders(tmp_path):
    done = run_cli(
        "tournament",
        "--game",
        "ctbench",
        "--agents",
        "planner,conditional,random",
        "--boards",
        "paper:0,paper:1,paper:2,paper:3",
        "--seeds",
        "1",
        "--out",
        tmp_path,
        "--workers",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 4 * 9
    pairs = [json.loads(line) for line in (tmp_path / "jobs" / "games.jsonl").read_text().splitlines()]
    seen = {(p["board_id"], p["red_agent"], p["blue_agent"]) for p in pairs}
    agents = ("planner", "conditional", "random")
    assert seen == {(b, r, x) for b in range(4) for r in agents for x in agents}


def test_bad_input_is_one_line(tmp_path):
    done = run_cli("tournament", "--agents", "rcc,nobody", "--contracts", "synth-env5-*", "--out", tmp_path)
    assert done.returncode == 1
    assert "nobody" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_plan_and_until_separated_read_the_same_games(played, synthetic, tmp_path):
    whole, full = played
    shutil.copytree(whole / "jobs", tmp_path / "jobs")
    result = _tournament(synthetic, tmp_path, ["rcc", "re", "random"], plan=True, until_separated=True, looks=2)
    rep = result.report
    assert result.played == 0 and "Bonferroni" in rep.sequential
    assert rep.games <= full.report.games
    rows = {(p.role, p.a, p.b): p for p in rep.plan}
    assert set(rows) == {
        (r, a, b) for r in ("customer", "supplier") for a, b in (("random", "rcc"), ("random", "re"), ("rcc", "re"))
    }
    for p in rows.values():
        assert p.seeds is None or p.seeds >= 1


@pytest.mark.e2e
def test_an_llm_whose_answers_fall_back_is_gated_out_of_the_ratings(synthetic, tmp_path):
    from tests.llm_server import ScriptedServer, message

    def reply(body):
        return 200, message("I would rather not say.")  # no action: every decision falls back to zero

    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key"}
    with ScriptedServer(reply) as server:
        done = run_cli(
            "tournament",
            synthetic,
            "--agents",
            "rcc,llm:claude-haiku-4-5",
            "--seeds",
            "1",
            "--out",
            tmp_path,
            "--workers",
            "1",
            "--base-url",
            server.url,
            "--recordings",
            tmp_path / "calls.sqlite",
            "--json",
            env=env,
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    gated = {(g["role"], g["agent"], g["opponent"]): g["reason"] for g in data["gates"]}
    llm = "llm:claude-haiku-4-5"
    assert set(gated) == {(r, llm, o) for r in ("customer", "supplier") for o in ("rcc", llm)}
    assert all("100% of its answers fell back to the default" in reason for reason in gated.values()), gated
    assert {(r["role"], r["agent"]) for r in data["ratings"]} == {("customer", "rcc"), ("supplier", "rcc")}
