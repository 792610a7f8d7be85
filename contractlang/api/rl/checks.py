"""What the environments accept from a learner: seeds and actions are checked at the edge, as gymnasium's and
PettingZoo's own environments do, and refused with one line naming the parameter."""

from __future__ import annotations

import numbers

import numpy as np
from gymnasium import error

from contractlang.errors import BadArgument


class EnvInputError(error.Error, BadArgument):
    """A value an environment cannot take (a seed, an agent, an option): the message names it and says what it
    takes."""


class ActionError(EnvInputError, error.InvalidAction):
    """An action outside the action space, or one the action mask rules out (the game's rule it breaks is
    named)."""


def reset_needed(verb: str) -> error.ResetNeeded:
    return error.ResetNeeded(f"call reset() before {verb}(): the environment holds no game yet")


def seed_of(seed) -> int | None:
    """`seed` as `reset` takes it: None (draw one) or an integer 0 or more; booleans, floats, strings and lists
    are refused, as gymnasium's `np_random` refuses them."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise EnvInputError(f"seed: {seed!r} ({type(seed).__name__}) is not a seed; a seed is an integer ≥ 0 or None")
    if seed < 0:
        raise EnvInputError(f"seed: {seed} is negative; a seed is an integer ≥ 0 or None")
    return int(seed)


def index_of(action, n: int, agent: str) -> int:
    """`action` as an index into `Discrete(n)`: a Python or numpy integer (a 0-d integer array too), 0..n−1;
    None, booleans, floats and strings are refused rather than rounded or cast."""
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = action.item()
    if action is None:
        raise ActionError(f"action: None for {agent}, whose turn it is; None is only the step of a finished agent")
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
        raise ActionError(
            f"action: {action!r} ({type(action).__name__}) is not an integer index; {agent}'s action space is "
            f"Discrete({n}), indices 0..{n - 1}"
        )
    if not 0 <= action < n:
        raise ActionError(f"action: {action} is outside {agent}'s action space Discrete({n}), indices 0..{n - 1}")
    return int(action)


class Seeds:
    """The game seed of each `reset`: the one given, else the next draw of a generator seeded by the last seed
    given (the constructor's at first), so successive games differ and a seeded sequence repeats."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed_of(seed))

    def next(self, seed) -> int:
        seed = seed_of(seed)
        if seed is None:
            return int(self.rng.integers(2**31))
        self.rng = np.random.default_rng(seed)
        return seed


def render_mode_of(mode):
    if mode not in (None, "ansi"):
        raise EnvInputError(f"render_mode: {mode!r}; the environments render 'ansi' (the game's story)")
    return mode


def reward_scale_of(scale) -> float:
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise EnvInputError(f"reward_scale: {scale!r}; a finite number > 0 the utility changes are multiplied by")
    return float(scale)


def whole_of(name: str, value) -> int:
    """`value` as a whole number: booleans, floats, text and containers are refused, not cast."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise EnvInputError(f"{name}: {value!r} ({type(value).__name__}) is not a whole number")
    return int(value)


def board_of(board) -> str:
    """`board` as a board reference: an ID, or `ID` / `SET:ID` as text; anything else is refused."""
    if isinstance(board, (bool, np.bool_)) or not isinstance(board, (numbers.Integral, str)):
        raise EnvInputError(f"board: {board!r} ({type(board).__name__}); an ID, or ID or SET:ID as text")
    return str(board)


def choice_of(name: str, value, choices: tuple) -> str:
    """`value` if it is one of `choices`; anything else is refused rather than read as a default."""
    if not isinstance(value, str) or value not in choices:
        raise EnvInputError(f"{name}: {value!r}; choose from {', '.join(choices)}")
    return value


def flag_of(name: str, value) -> bool:
    """`value` if it is True or False; 0, 1 and text are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise EnvInputError(f"{name}: {value!r} ({type(value).__name__}); True or False")
    return bool(value)


def masked_of(masked: str) -> str:
    if masked not in ("fallback", "refuse"):
        raise EnvInputError(f"masked: {masked!r}; 'fallback' (play the zero action) or 'refuse' (raise)")
    return masked
