"""Why an LLM call did not happen or gave no reply: the exceptions agents and the runner tell apart."""

from __future__ import annotations

from typing import Literal


class LlmUnavailable(Exception):
    """An LLM that cannot be called: the message says what to do (set a key, install the SDK)."""


class MissingApiKey(LlmUnavailable):
    """An LLM option without its provider's key (and not replaying): the message says how to set one."""


class MissingSdk(LlmUnavailable):
    """An LLM of a provider whose SDK is not installed: the message names the command that installs it."""


class CallFailed(Exception):
    """A model call that gave no usable reply in the time allowed: one line, the key never in it. The game's
    agents end the game on it (as an `AgentError`); the runner records the game as errored."""


class DeadlinePassed(CallFailed):
    """A call cut by its deadline (the caller's, or its game's time limit) rather than by the settings' own
    bounds: waiting on the server's pause, an attempt in flight, or the wait before a retry."""


class CallRefused(Exception):
    """A call refused before it starts, by a limit or a stop: not a CallFailed, so it passes the agents untouched
    and ends the game, and its type tells the runner how to record the game."""


class GameLimitReached(CallRefused):
    """A call one game's view would start after that game's limit (`GameLimits`) is reached: the game ends and
    the runner records it as limited (not errored). The view's `limit_reached` holds it too."""

    def __init__(self, kind: Literal["tokens", "seconds", "messages"], limit: float):
        super().__init__(kind, limit)  # the arguments, so it pickles across worker processes
        self.kind, self.limit = kind, limit

    def __str__(self) -> str:
        return f"the game's {self.kind} limit ({self.limit:g}) is reached"


class RunInterrupted(CallRefused):
    """A call refused because the whole run must stop: the game ends unfinished (neither errored nor limited),
    and rerunning the command resumes it."""


class RunLimitReached(RunInterrupted):
    """The run's cost or token limit (`RunLimits`) is reached: no call starts after it; a rerun with a higher
    limit resumes (recorded replies replay free)."""


class RunStopped(RunInterrupted):
    """The connection was stopped (`LlmClient.stop`, Ctrl-C): no call starts after it."""
