"""The Python face of contractlang: the researcher's verbs over both games and the solvers, typed results.

`import contractlang as cl` reaches all of it lazily (`cl.verify`, `cl.play`, `cl.experiments.performance`, …);
like the CLI, this package is the one layer that wires `contractlang`, `solver` and `games` together.
"""

from __future__ import annotations

from contractlang.api import ctbench, experiments
from contractlang.api.language import load_one, solve, verify
from contractlang.api.play import Played, play
from contractlang.api.tests import coverage, generate_tests, test
from games.agents import Agent, AgentError, Seat, register_agent

__all__ = [
    "Agent",
    "AgentError",
    "Played",
    "Seat",
    "coverage",
    "ctbench",
    "experiments",
    "generate_tests",
    "load_one",
    "play",
    "register_agent",
    "solve",
    "test",
    "verify",
]
