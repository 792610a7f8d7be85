"""The Python face of contractlang: the researcher's verbs over both games and the solvers, typed results.

`import contractlang as cl` reaches all of it lazily (`cl.verify`, `cl.play`, `cl.experiments.performance`, …);
like the CLI, this package is the one layer that wires `contractlang`, `solver` and `games` together. Each name
is imported on first use, so a command that needs one verb loads only what that verb needs.
"""

from __future__ import annotations

import importlib
import sys
import types

TYPES = (
    "CTBenchNegotiationObservation",
    "CTBenchObservation",
    "Confirm",
    "ContractSimNegotiationObservation",
    "CustomerObservation",
    "Honour",
    "Move",
    "Order",
    "Pay",
    "Produce",
    "Propose",
    "Respond",
    "Say",
    "SupplierObservation",
)
"""The agent protocol's observation and action types (`contractlang.api.types`)."""

HOMES = {
    **dict.fromkeys(("ctbench", "data", "experiments", "rl"), None),
    **dict.fromkeys(("fmt", "load_one", "render", "solve", "trace", "translate", "verify", "verify_all"), "language"),
    **dict.fromkeys(("metrics", "seal", "synth"), "experiments"),
    **dict.fromkeys(("expected_utility_differences",), "analysis"),
    **dict.fromkeys(("Played", "game_for", "load_game", "play"), "play"),
    **dict.fromkeys(("coverage", "generate_tests", "test"), "tests"),
    **dict.fromkeys(("tournament",), "tournament"),
    **dict.fromkeys(TYPES, "types"),
    **dict.fromkeys(("Agent", "AgentError", "Seat", "model_of", "register_agent"), "games.agents"),
}
"""Each name of the face and the module it lives in (None: the module of that name)."""

__all__ = sorted(HOMES)

VERBS = frozenset(name for name, home in HOMES.items() if home is not None)
"""The face's names that are not modules of it."""


class Face(types.ModuleType):
    """A package whose face names a verb as one of its subpackages is named (`cl.render` and the subpackage
    `contractlang.render`, `cl.translate`, `contractlang.api.play`): importing the subpackage does not bind it
    over the verb, so the name stays the verb wherever it is reached. The subpackage is still in `sys.modules`
    and `from package.sub import x` reads it as ever."""

    def __setattr__(self, name: str, value) -> None:
        if name in VERBS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = Face


def __getattr__(name: str):
    if name not in HOMES:
        raise AttributeError(f"module 'contractlang.api' has no attribute {name!r}")
    home = HOMES[name]
    if home is None:
        return importlib.import_module(f"contractlang.api.{name}")
    module = importlib.import_module(home if "." in home else f"contractlang.api.{home}")
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
