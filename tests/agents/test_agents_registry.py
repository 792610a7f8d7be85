"""The one agent registry (games/agents.py, issue #43): Python agents by `py:` spec in every command, agents
registered by decorator or by an installed package's entry point, labels, and one-line failures that say why."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

from contractlang.errors import UnknownName
from games.agents import Seat, make_agent, register_agent, resolve, split_label
from tests.helpers import ROOT, run_cli, run_process

WORKED = "examples/worked-example-1.contract"
STINGY = "py:examples/agents/stingy.py:Stingy"
WALKER = "py:examples/agents/stingy.py:Walker"


def agent_file(tmp_path: Path, body: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def run_json(*args, **kwargs) -> dict:
    done = run_cli(*args, "--json", **kwargs)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.e2e
def test_a_python_customer_in_a_file_plays_run_and_the_record_names_its_spec():
    game = run_json("run", WORKED, "--env", "1", "--customer", STINGY, "--supplier", "rcc")
    assert game["customer"] == STINGY
    paid = [w["paid"] for w in game["weeks"] if w["role"] == "customer"]
    assert all(p % 10 == 0 for p in paid) and sum(paid) > 0  # its own rule: the due, rounded down to $10
    by_module = run_json(
        "run", WORKED, "--env", "1", "--customer", "py:tests.agents.agent_modules:Stingy", "--supplier", "rcc"
    )
    assert by_module["weeks"] == game["weeks"]  # the same class, found as MODULE:ATTR


def test_a_class_a_factory_and_an_instance_are_all_agents(tmp_path):
    path = agent_file(
        tmp_path,
        """
        class Payer:
            name = "payer"
            def __init__(self, seat):
                self.role = seat.role
            def act(self, observation):
                return {"kind": "pay", "amount": observation.payment_due}

        def factory():
            return Payer(type("S", (), {"role": "customer"}))

        instance = factory()
        """,
    )
    weeks = {
        attr: run_json("run", WORKED, "--env", "1", "--customer", f"py:{path}:{attr}")["weeks"]
        for attr in ("Payer", "factory", "instance")
    }
    assert weeks["Payer"] == weeks["factory"] == weeks["instance"]
    assert weeks["Payer"] == run_json("run", WORKED, "--env", "1", "--customer", "rc")["weeks"]


@pytest.mark.parametrize(
    "body,spec,message",
    [
        (None, "py:nowhere/none.py:X", "no Python file nowhere/none.py"),
        ("import no_such_module_xyz\n", "py:{path}:X", "cannot import {path}: ModuleNotFoundError"),
        ("X = 1\n", "py:{path}:Y", "has no attribute 'Y'"),
        ("X = 1\n", "py:{path}:X", "X is not an agent"),
        (
            "class X:\n    def act(self, o):\n        raise KeyError('week')\n",
            "py:{path}:X",
            "(customer) raised KeyError: 'week'",
        ),
        (
            "class X:\n    name = 'x'\n    def act(self, o):\n        return {'kind': 'pay', 'amount': 10**6}\n",
            "py:{path}:X",
            "chose an illegal action: pays $1,000,000; $200 of the budget remains",
        ),
        (
            "class X:\n    def act(self, o):\n        return {'kind': 'pay'}\n",
            "py:{path}:X",
            "not a contractsim action (pay.amount: Field required)",
        ),
        (
            "class X:\n    def __init__(self, seat):\n        raise RuntimeError('no model file')\n",
            "py:{path}:X",
            "failed to start: RuntimeError: no model file",
        ),
        ("class X:\n    pass\n", "py:{path}:X", "X is not an agent (it has no act method)"),
    ],
)
def test_a_broken_python_agent_ends_the_run_with_one_line_that_says_why(tmp_path, body, spec, message):
    path = agent_file(tmp_path, body) if body is not None else None
    spec, message = spec.format(path=path), message.format(path=path)
    for extra in ((), ("--json",)):
        done = run_cli("run", WORKED, "--env", "1", "--customer", spec, "--supplier", "re", *extra)
        text = json.loads(done.stdout)["error"] if extra else done.stderr
        assert done.returncode == 1 and "Traceback" not in text, text
        assert message in text and len(text.strip().splitlines()) == 1, text


def test_an_illegal_ctbench_move_says_where_the_player_may_go(tmp_path):
    path = agent_file(
        tmp_path,
        """
        class Jumper:
            def act(self, observation):
                if observation.phase == "move":
                    return {"kind": "move", "tile": [3, 3]}
                return observation.legal_actions()[0]
        """,
    )
    done = run_cli("run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--red", f"py:{path}:Jumper")
    assert done.returncode == 1
    assert (
        "chose an illegal action: moves onto (3, 3), which is not next to the mover; it may move onto (1, 0), "
        "(0, 1) or pass" in done.stderr
    )


@pytest.mark.e2e
def test_a_ctbench_player_class_plays_a_paper_sweep(tmp_path):
    result = run_json(
        "ctbench",
        "sweep",
        "--set",
        "paper",
        "--boards",
        "0,1",
        "--conditions",
        "none,prog_trading",
        "--modes",
        "pfp",
        "--red",
        WALKER,
        "--blue",
        "planner",
        "--workers",
        "1",
        "--out",
        tmp_path,
    )
    assert result["games"] == 4
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert {g["red_agent"] for g in games} == {WALKER} and {g["board_set"] for g in games} == {"paper"}


def test_unknown_names_list_every_kind_of_agent():
    with pytest.raises(
        UnknownName,
        match=r"unknown customer policy 'oracle'; choose from rc, re, rcc, random, "
        r"cmd:PROGRAM, llm:\[PROVIDER/\]MODEL, py:MODULE:ATTR, py:FILE.py:ATTR",
    ):
        resolve("oracle", "contractsim", "customer")
    with pytest.raises(UnknownName):
        resolve("llm:nowhere/x", "ctbench", "red")


def test_labels_split_before_any_colon():
    assert split_label("stingy=py:./a.py:Stingy") == ("stingy", "py:./a.py:Stingy")
    assert split_label("cmd:prog --x=1") == ("cmd:prog --x=1",) * 2
    assert split_label("rcc") == ("rcc", "rcc")


@pytest.mark.e2e
def test_a_registered_agent_plays_by_name_and_an_instance_is_reset_before_each_game():
    from contractlang import load
    from games.contractsim.environments import environment
    from games.contractsim.play import play

    class Counting:
        name = "counting"
        resets = 0

        def reset(self):
            Counting.resets += 1

        def act(self, observation):
            return {"kind": "pay", "amount": min(observation.payment_due, observation.remaining_budget)}

    register_agent("counting-test", game="contractsim", roles=("customer",))(Counting())
    ir = load(ROOT / WORKED)[0].ir
    first = play(ir, environment(1), "counting-test", "rcc", seed=42, keep_log=False)
    second = play(ir, environment(1), "counting-test", "rcc", seed=42, keep_log=False)
    assert Counting.resets == 2 and first == second and first.customer == "counting-test"
    assert first.weeks == play(ir, environment(1), "rc", "rcc", seed=42, keep_log=False).weeks
    with pytest.raises(UnknownName, match="unknown supplier policy 'counting-test'"):
        make_agent("counting-test", Seat(game="contractsim", role="supplier", rng=np.random.default_rng(0)))


def installed_package(root: Path) -> Path:
    """A package `theiragents` installed into `root` (a directory put on the path) with its dist-info, whose
    entry points name one agent per game."""
    (root / "theiragents").mkdir(parents=True)
    (root / "theiragents" / "__init__.py").write_text(
        textwrap.dedent("""
        class Payer:
            name = "their-payer"
            def act(self, observation):
                return {"kind": "pay", "amount": min(observation.payment_due, observation.remaining_budget)}
        """)
    )
    info = root / "theiragents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: theiragents\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[contractlang.agents]\ntheir-payer = theiragents:Payer\n")
    return root


@pytest.mark.e2e
def test_an_installed_packages_entry_point_is_found_by_name_by_the_cli(tmp_path):
    site = installed_package(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": f"{site}:{ROOT}"}
    done = run_process("run", WORKED, "--env", "1", "--customer", "their-payer", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["customer"] == "their-payer"
    rc = run_process("run", WORKED, "--env", "1", "--customer", "rc", "--json", env=env)
    assert json.loads(done.stdout)["weeks"] == json.loads(rc.stdout)["weeks"]
    missing = run_process(
        "run", WORKED, "--env", "1", "--customer", "their-payer", env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert missing.returncode == 1 and "unknown customer policy 'their-payer'" in missing.stderr


def test_metrics_imports_a_python_agent_a_record_names_only_when_allowed(tmp_path):
    record = run_json(
        "run", WORKED, "--env", "1", "--customer", "py:tests.agents.agent_modules:Stingy", "--supplier", "rcc"
    )
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(record) + "\n")
    refused = run_cli("metrics", runs)
    assert refused.returncode == 1, refused.stderr
    assert (
        "would import the Python agent 'py:tests.agents.agent_modules:Stingy' named in them; pass --allow-commands"
        in refused.stderr
    )
    allowed = run_json("metrics", runs, "--allow-commands")
    assert {r["policy"] for r in allowed["roles"]} >= {"py:tests.agents.agent_modules:Stingy"}


@pytest.mark.e2e
def test_a_python_negotiator_and_performer_play_negotiate(tmp_path):
    """`negotiate` seats `py:` agents too: a Customer negotiator that accepts the first offer it may accept, and
    the Python Customer in the performance game on the agreed contract."""
    path = agent_file(
        tmp_path,
        """
        import json

        class Accepting:
            name = "accepting"
            def act(self, observation):
                if observation.can_accept:
                    return json.dumps({"response": "Agreed.", "accept": True})
                return json.dumps({"response": "Please make me an offer."})
        """,
    )
    done = run_json("negotiate", "--env", "1", "--customer", f"py:{path}:Accepting", "--perform-customer", STINGY)
    run = done["runs"][0]
    assert run["negotiation"]["outcome"] == "agreed" and run["negotiation"]["customer"] == f"py:{path}:Accepting"
    assert run["performances"][0]["customer"] == STINGY


def test_a_ctbench_sweep_from_python_seats_an_object_like_its_spec(tmp_path):
    import contractlang as cl
    from examples.agents.stingy import Walker

    one = {"boards": ["paper:0"], "conditions": ["none"], "modes": ["pfp"], "workers": 1}
    by_object = cl.ctbench.sweep(tmp_path / "object", pairs=[(Walker(), "planner")], **one)
    by_spec = cl.ctbench.sweep(tmp_path / "spec", pairs=[(WALKER, "planner")], **one)
    strip = lambda r: r.model_dump(exclude={"red_agent"})  # noqa: E731
    assert [strip(r) for r in by_object.result.records] == [strip(r) for r in by_spec.result.records]
    assert by_object.result.records[0].red_agent == "walker" and by_object.rows()


@pytest.mark.e2e
def test_a_labelled_agent_is_named_by_its_label_in_a_sweeps_summary(tmp_path):
    """`--red mine=SPEC`: the summary's rows say `mine`, not the whole LABEL=SPEC (issue #43, item 2)."""
    done = run_cli(
        "ctbench",
        "sweep",
        "--set",
        "paper",
        "--boards",
        "0",
        "--conditions",
        "none",
        "--red",
        "mine=random",
        "--blue",
        "planner",
        "--out",
        tmp_path / "sweep",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads((tmp_path / "sweep" / "summary.json").read_text())
    assert {row["agents"] for row in rows} == {"mine vs planner"}


def test_each_entry_says_which_model_its_agents_call():
    """`model_of` asks the entry that starts a spec: the LLM families name their model, a user's entry may name
    one, and every other agent calls none; a seated agent finds its model on its Seat."""
    from contractlang.llm import LlmModel
    from games.agents import model_of

    assert model_of("llm:openai/gpt-test") == LlmModel(provider="openai", model="gpt-test")
    assert model_of("mine=llm:claude-test", "ctbench") == LlmModel(provider="anthropic", model="claude-test")
    python_agents = (type("Idle", (), {"act": lambda self, o: None}), lambda seat: None)  # a class, a factory
    specs = ("rcc", "planner", "cmd:prog", "llm:nowhere/x", *python_agents, python_agents[0]())
    assert [model_of(spec) for spec in specs] == [None] * 7
    seen = []
    model = LlmModel(provider="openai", model="house")

    @register_agent("house-model", game="ctbench", model=lambda spec: model)
    def house(seat):
        seen.append(seat.model)
        return make_agent("planner", seat)

    assert model_of("house-model") == model and model_of("house-model", "contractsim") is None
    make_agent("house-model", Seat(game="ctbench", role="red"))
    assert seen == [model]
