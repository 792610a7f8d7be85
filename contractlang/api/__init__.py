"""The Python face of contractlang: the researcher's verbs over both games and the solvers, typed results.

`import contractlang as cl` reaches all of it lazily (`cl.verify`, `cl.play`, `cl.experiments.performance`, …);
like the CLI, this package is the one layer that wires `contractlang`, `solver` and `games` together.
"""

from __future__ import annotations

from contractlang.api import ctbench, experiments
from contractlang.api.language import load_one, solve, verify
from contractlang.api.play import Played, game_for, load_game, play
from games.agents import Agent, AgentError, Seat, model_of, register_agent

__all__ = [
    "Agent",
    "AgentError",
    "Played",
    "Seat",
    "ctbench",
    "experiments",
    "game_for",
    "load_game",
    "load_one",
    "model_of",
    "play",
    "register_agent",
    "solve",
    "verify",
]
