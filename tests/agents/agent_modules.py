"""A Python agent importable as a module (`py:tests.agents.agent_modules:Stingy`), for tests/agents/test_agents_registry.py."""

from examples.agents.stingy import Stingy

__all__ = ["Stingy"]
