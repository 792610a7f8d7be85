"""`--estimate` needs no API key and works for every form of agent: a built-in, a `py:` or `cmd:` program, an
LLM agent with or without a label."""

from __future__ import annotations

import json
import os
import sys

from tests.helpers import fresh, run_cli

NO_KEYS = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}


def test_an_experiment_estimate_without_keys_counts_every_llm_agent(synthetic, tmp_path):
    directory = fresh(synthetic, tmp_path)
    (tmp_path / "agents.py").write_text(
        "class Idle:\n    name = 'idle'\n\n    def act(self, o):\n        return None\n"
    )
    agents = [
        "fake=llm:openai/fake-model",
        "llm:claude-haiku-4-5",
        "rcc",
        "idle=py:agents.py:Idle",
        f"ext=cmd:{sys.executable} examples/agents/external_agent.py",
    ]
    args = [a for agent in agents for a in ("--agent", agent)]
    done = run_cli("experiment", "performance", directory, *args, "--estimate", "--json", cwd=tmp_path, env=NO_KEYS)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)["estimate"]
    # 2 contracts × 3 counterparties per role; an LLM Customer decides 6 times a game (a payment each payment
    # week), a Supplier 10 (an order and a production each production week)
    assert plan["games"] == 5 * 2 * 2 * 3 and plan["calls"] == 2 * (2 * 3 * (6 + 10))
    assert "openai/fake-model:" in plan["source"] and "claude-haiku-4-5:" in plan["source"]
    assert not (directory / "performance").exists()  # an estimate plays and writes nothing


def test_a_sweep_estimate_counts_a_labelled_llm_player(tmp_path):
    done = run_cli(
        "ctbench", "sweep", "--set", "paper", "--boards", "0,1", "--conditions", "none",
        "--red", "fake=llm:openai/fake-model", "--blue", "planner", "--out", tmp_path / "sweep", "--estimate", "--json",
        env=NO_KEYS,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)["estimate"]
    assert plan["calls"] > 0 and "openai/fake-model:" in plan["source"]


def test_a_tournament_estimate_without_keys_counts_each_seat_as_the_experiment_does(tmp_path):
    args = ("--agents", "fake=llm:openai/fake-model,rcc", "--limit", "1", "--seeds", "1", "--estimate", "--json")
    done = run_cli("tournament", *args, "--out", tmp_path / "t", env=NO_KEYS)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)["estimate"]
    # fake against itself (6 + 10), as the Customer against RCC (6), as the Supplier against RCC (10)
    assert plan["games"] == 4 and plan["calls"] == (6 + 10) + 6 + 10
    assert not (tmp_path / "t").exists()


def test_a_negotiation_estimate_counts_the_supplier_performer_s_ten_decisions(tmp_path):
    args = ("--env", "1", "--perform-supplier", "llm:openai/fake-model", "--estimate", "--json")
    done = run_cli("negotiate", *args, "--out", tmp_path / "n", env=NO_KEYS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["estimate"]["calls"] == 10  # an order and a production in each production week


def test_a_ct_bench_tournament_estimate_counts_its_llm_player(tmp_path):
    args = ("--game", "ctbench", "--agents", "fake=llm:openai/fake-model,planner", "--boards", "1", "--seeds", "1")
    done = run_cli("tournament", *args, "--estimate", "--json", "--out", tmp_path / "t", env=NO_KEYS)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)["estimate"]
    assert plan["games"] == 4 and plan["calls"] > 0 and "openai/fake-model:" in plan["source"]
