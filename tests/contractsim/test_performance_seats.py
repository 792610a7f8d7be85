"""`experiment performance` seats each agent in the roles it declares, its tables cover every agent of the set,
and a run from the shell and one from Python share a Python agent's games (one agent, one label)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.helpers import fresh, run_cli

pytestmark = pytest.mark.e2e  # whole experiments through the CLI

AGENTS = '''
class Skimper:
    """A Supplier that orders and produces nothing."""

    name = "skimper"
    roles = ("supplier",)

    def act(self, observation):
        return {"kind": observation.phase, "quantities": [0, 0, 0]}


class LatePayer:
    """A Customer that pays nothing before week 11."""

    name = "late"
    roles = ("customer",)

    def act(self, observation):
        return {"kind": "pay", "amount": 0 if observation.week < 11 else observation.remaining_budget}
'''


def performance(directory: Path, *args) -> dict:
    done = run_cli("experiment", "performance", directory, *args, "--workers", "1", "--json", cwd=directory.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def policies(directory: Path) -> dict[str, set[str]]:
    """Each agent's roles in the set's tables.json."""
    found: dict[str, set[str]] = {}
    for row in json.loads((directory / "performance" / "tables.json").read_text())["rows"]:
        found.setdefault(row["policy"], set()).add(row["role"])
    return found


def test_a_supplier_only_and_a_customer_only_agent_share_one_run(synthetic, tmp_path):
    directory = fresh(synthetic, tmp_path)
    (tmp_path / "agents.py").write_text(AGENTS)
    both = performance(directory, "--agent", "skimper=py:agents.py:Skimper", "--agent", "late=py:agents.py:LatePayer")
    assert both["played_now"]["agents"] == 2 * (3 + 3)  # 2 contracts, each agent in its one role × 3 counterparties
    assert policies(directory) == {"skimper": {"supplier"}, "late": {"customer"}}
    md = (directory / "performance" / "tables.md").read_text()
    assert "| RCC | skimper |" in md and "| RCC | late |" in md
    asked = run_cli(
        "experiment", "performance", directory, "--agent", "skimper=py:agents.py:Skimper", "--role", "customer",
        cwd=tmp_path,
    )  # fmt: skip
    assert asked.returncode == 1
    assert asked.stderr.strip() == "error: agent 'skimper' plays the supplier only, not the role asked for (customer)"


def test_the_tables_cover_every_agent_and_a_python_run_reuses_the_shell_s_games(synthetic, tmp_path):
    import contractlang as cl

    directory = fresh(synthetic, tmp_path)
    (tmp_path / "agents.py").write_text(AGENTS)
    assert performance(directory, "--agent", "skimper=py:agents.py:Skimper")["played_now"]["agents"] == 6
    assert performance(directory, "--agent", "late=py:agents.py:LatePayer")["played_now"]["agents"] == 6
    assert policies(directory) == {"skimper": {"supplier"}, "late": {"customer"}}  # the first run's agent stays
    spec = importlib.util.spec_from_file_location("user_agents", tmp_path / "agents.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = cl.experiments.performance(agent=module.Skimper, directory=directory, workers=1)
    assert result.played_agents == 0  # the shell's games of `skimper`, not a second agent
    assert {r["policy"] for r in result.rows() if not r["rational"]} == {"skimper", "late"}
