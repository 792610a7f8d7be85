"""A conformance check for game implementations, in the spirit of PettingZoo's `api_test` and OpenSpiel's random
simulation test: `check_game_api(game)` takes a loaded game (`cl.load_game(...)`, any `games.game.Game`), plays
seeded random games through the state API the agents see and fails, naming each broken property, when the game
breaks one.

The state API: `current_player()`, `is_terminal()`, `legal_actions()` (the actions offered), `why_illegal(action)`
(None when legal, else why in words), `apply_action(action)` (a new state; ValueError for an illegal action),
`observe(role)` (a pydantic model) and `returns()`. The game may add a random player (`random_action(state,
rng)`; default: one of the offered actions), actions to probe beyond the offered ones (`probes(state)`, illegal
ones included) and a quantity every transition conserves (`conserved(state)`: money, chips).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class GameApiError(AssertionError):
    """The properties a game broke, one line each."""


@dataclass
class GameApiReport:
    games: int = 0
    steps: int = 0
    failures: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        if message not in self.failures and len(self.failures) < 20:
            self.failures.append(message)


@dataclass(frozen=True)
class _Checked:
    """The game under the check and how far it plays: its optional hooks read once."""

    game: Any
    max_steps: int
    offered_per_state: int  # offered actions applied in each state (a sample of them when there are more)

    def random_action(self, state, rng: np.random.Generator):
        pick = getattr(self.game, "random_action", None)
        return pick(state, rng) if pick is not None else _pick(state.legal_actions(), rng)

    def probes(self, state) -> Sequence[Any]:
        probes = getattr(self.game, "probes", None)
        return probes(state) if probes is not None else ()

    def conserved(self, state):
        conserved = getattr(self.game, "conserved", None)
        return conserved(state) if conserved is not None else None


def check_game_api(
    game, seeds: Sequence[int] = (0, 1, 2), max_steps: int = 10_000, offered_per_state: int = 8
) -> GameApiReport:
    """Play one random game per seed, twice, and check: the two plays are identical (seeded determinism); every
    offered action is legal and applies; every probe is legal exactly when it applies, and an illegal one comes
    with a reason; observations round-trip through JSON; the conserved quantity never changes; the game ends
    within `max_steps`. Raises `GameApiError` listing what failed; returns the report when nothing did."""
    report = GameApiReport()
    game = _Checked(game, max_steps, offered_per_state)
    for seed in seeds:
        first = _play(game, seed, report)
        if first != _play(game, seed, None):
            report.fail(
                f"seed {seed}: two plays with the same seed differ (the game or its initial state is not "
                "determined by the seed)"
            )
        report.games += 1
    if report.failures:
        raise GameApiError("the game breaks the API:\n" + "\n".join(f"- {f}" for f in report.failures))
    return report


def _play(game: _Checked, seed: int, report: GameApiReport | None) -> list[str]:
    """One random game; the transcript of observations and returns that determinism compares. With `report`,
    every property is checked on the way."""
    rng, sampler = np.random.default_rng(seed), np.random.default_rng([seed, 1])  # the sampler's draws never
    # move the players' stream, so the checked play and the plain one play the same game
    state = game.game.new_initial_state(seed)
    transcript: list[str] = []
    conserved = game.conserved(state)
    for step in range(game.max_steps):
        if state.is_terminal():
            transcript.append(json.dumps(state.returns(), sort_keys=True, default=str))
            return transcript
        role = state.current_player()
        observation = state.observe(role)
        transcript.append(observation.model_dump_json())
        if report is not None:
            report.steps += 1
            _check_state(game, state, observation, f"seed {seed}, step {step}", report, sampler)
        action = game.random_action(state, rng)
        state = state.apply_action(action)
        if game.conserved(state) != conserved and report is not None:
            report.fail(
                f"seed {seed}, step {step}: {action!r} changed the conserved quantity from {conserved} to "
                f"{game.conserved(state)}"
            )
    if report is not None:
        report.fail(f"seed {seed}: a random game did not end within {game.max_steps} steps")
    return transcript


def _pick(actions: list, rng: np.random.Generator):
    return actions[int(rng.integers(len(actions)))]


def _check_state(
    game: _Checked, state, observation, where: str, report: GameApiReport, rng: np.random.Generator
) -> None:
    try:
        if type(observation).model_validate_json(observation.model_dump_json()) != observation:
            report.fail(f"{where}: the observation does not read back equal from its JSON")
    except Exception as exc:  # a model that cannot read its own JSON is exactly what this check looks for
        report.fail(f"{where}: the observation does not read back from its JSON ({type(exc).__name__}: {exc})")
    offered = state.legal_actions()
    if not offered:
        report.fail(f"{where}: a state that is not terminal offers no action")
    sample = (
        offered
        if len(offered) <= game.offered_per_state
        else [offered[i] for i in rng.choice(len(offered), game.offered_per_state, replace=False)]
    )
    for action in sample:
        why = state.why_illegal(action)
        if why is not None:
            report.fail(f"{where}: the offered action {action!r} is called illegal: {why}")
        _applies(state, action, True, where, report)
    for action in game.probes(state):
        why = state.why_illegal(action)
        if why is not None and not (isinstance(why, str) and why.strip()):
            report.fail(f"{where}: {action!r} is illegal without a reason")
        _applies(state, action, why is None, where, report)


def _applies(state, action, legal: bool, where: str, report: GameApiReport) -> None:
    """`apply_action` must take a legal action and refuse an illegal one with ValueError, leaving the state as
    it was."""
    before = state.observe(state.current_player()).model_dump_json()
    try:
        state.apply_action(action)
        applied = True
    except ValueError:
        applied = False
    if applied != legal:
        report.fail(
            f"{where}: {action!r} is {'legal' if legal else 'illegal'} but apply_action "
            f"{'refuses' if legal else 'takes'} it"
        )
    if state.observe(state.current_player()).model_dump_json() != before:
        report.fail(f"{where}: applying {action!r} changed the state it was applied to")
