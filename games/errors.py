"""The errors of seating and playing agents, below both the agent registry and the external agents it starts."""

from __future__ import annotations


class AgentError(Exception):
    """An agent broke the protocol: it cannot be found or started, is not an agent, raised, stayed silent, or
    answered with an illegal action. One line, naming the agent."""


class CommandRefused(AgentError):
    """Code named in a data file (a program or a Python agent), which never runs unless the user asked for it."""
