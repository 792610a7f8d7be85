"""What a viewer page may use beyond the records under the viewed path (kept apart from the game builders, so
the server starts without importing the games and solvers)."""

from __future__ import annotations

from contractlang.ir import CheckedContract
from contractlang.llm import DEFAULT_RECORDINGS, LlmSettings
from contractlang.vocab import Frozen


class ViewOptions(Frozen):
    """What a page may use beyond the record: the contract of a bare event log (`--contract`, and `--board` for a
    CT-Bench one), the LLM settings its LLM games were played with (their recordings replay under the same ones),
    and whether a rebuild may start a `cmd:` program or import a `py:` agent a record names."""

    model_config = Frozen.model_config | {"arbitrary_types_allowed": True}

    contract: CheckedContract | None = None
    source: str | None = None  # the contract file's text
    board: int | None = None
    llm: LlmSettings = LlmSettings(max_tokens=8192, recordings=DEFAULT_RECORDINGS, replay=True)  # as `run` records
    allow_commands: bool = False


class PageError(ValueError):
    """A game that cannot be shown; the page says why."""
