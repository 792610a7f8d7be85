"""A Python agent importable as a module (`py:tests.agent_modules:Stingy`), for tests/test_agents_registry.py."""

from examples.agents.stingy import Stingy

__all__ = ["Stingy"]
