"""The Python face of contractlang: the researcher's verbs over both games and the solvers, typed results.

`import contractlang as cl` reaches all of it lazily (`cl.verify`, `cl.play`, `cl.experiments.performance`, …);
like the CLI, this package is the one layer that wires `contractlang`, `solver` and `games` together.
"""

from __future__ import annotations

from contractlang.api import ctbench, experiments
from contractlang.api.language import load_one, solve, verify
from contractlang.api.play import Played, play
from contractlang.api.tournament import tournament
from games.agents import Agent, AgentError, Seat, register_agent

__all__ = [
    "Agent",
    "AgentError",
    "Played",
    "Seat",
    "ctbench",
    "experiments",
    "load_one",
    "play",
    "register_agent",
    "solve",
    "tournament",
    "verify",
]
