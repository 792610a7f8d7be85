"""The record both games write of a played game: one base shape over each game's own fields.

Each game's record (`games.contractsim.play.RunRecord`, `games.ctbench.play.GameRecord`) declares its fields,
whose names and order are its stores' format; both hold a `seed`, a `log` of typed events
(`contractlang.interpreter.events.EventBase`) and `llm_calls`. This base gives both the same reading: who played
each role, what each role got, the LLM usage and the monitor's events.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from contractlang.interpreter.events import monitor_events
from contractlang.llm import LlmUsage
from contractlang.vocab import Frozen


class Record(Frozen):
    """One played game of `game`: its agents and outcome by role, its seed, its log and its LLM calls."""

    game: ClassVar[str]

    @property
    @abstractmethod
    def agents(self) -> dict[str, str]:
        """Each role's agent as the record names it (its spec, `LABEL=SPEC`, or a Python agent's name)."""

    @property
    @abstractmethod
    def outcome(self) -> dict[str, int]:
        """Each role's result: ContractSim's utilities (base units, ContractSim paper, Sec. 3), CT-Bench's final
        scores ([CT-27])."""

    @property
    def llm_usage(self) -> LlmUsage:
        return LlmUsage.of(self.llm_calls)

    def monitor_events(self) -> list[dict]:
        """The log's events a monitor consumes, as JSON objects of the interpreter's event schema (the lines of a
        `run --log` file, which `trace` replays); the game's own annotations are left out."""
        return [e.model_dump(mode="json") for e in monitor_events(self.log)]
