"""The settings of an LLM connection and the limits of a run and of one game."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from contractlang.llm.providers import DEFAULT_MODEL, Effort, LlmModel, Provider
from contractlang.vocab import Frozen

MAX_OUTPUT_TOKENS = 128_000  # the largest output limit a provider's models take; more is not a limit


class RunLimits(Frozen):
    """Limits of a whole run (every game of one connection), checked before each call starts: calls already in
    flight finish, so the total can pass a limit by what they cost. None: no limit."""

    cost_usd: float | None = Field(None, ge=0)  # the run's calls' cost (replayed ones and `count_earlier` included)
    tokens: int | None = Field(None, ge=0)  # input (cached or not) plus output tokens, counted the same way


class GameLimits(Frozen):
    """Limits of one game (its view's ledger), checked before each of its calls starts. None: no limit."""

    tokens: int | None = Field(None, ge=0)  # input (cached or not) plus output tokens of the game's calls
    seconds: float | None = Field(None, ge=0)  # since the game's view was made (`for_game`)
    messages: int | None = Field(None, ge=0)  # calls the game has made (each one request to the model)


class LlmSettings(Frozen):
    provider: Provider = "anthropic"
    model: str = DEFAULT_MODEL
    max_tokens: int = Field(4096, ge=1, le=MAX_OUTPUT_TOKENS)
    effort: Effort | None = None  # Anthropic output_config.effort / OpenAI reasoning_effort, for models that take it
    thinking: bool = False  # adaptive thinking (Anthropic)
    timeout_seconds: float = 60.0  # one attempt, a deadline (translation: its whole loop of attempts)
    # Transient errors retried, every retry starting within retry_seconds of the call's first attempt: the
    # defaults outlast a 30 s burst of 429s and a 60 s outage of 529s (backoffs of up to 1, 2, 4, ... 30 s).
    max_retries: int = Field(20, ge=0)
    retry_seconds: float = Field(300.0, ge=0)
    backoff_seconds: float = Field(1.0, gt=0)  # the first retry's backoff ceiling; doubled per retry
    base_url: str | None = None  # every provider's; None: each SDK's environment variable, else its default
    max_connections: int = Field(10, ge=1, le=1000)  # requests in flight per provider and model, at most
    # The longest pause a server's retry-after or rate-limit reset imposes (a longer one is taken as this): a
    # server that says "no requests until the year 9999" costs a minute, not the whole retry budget.
    max_server_wait: float = Field(60.0, gt=0)
    run_limits: RunLimits = RunLimits()
    game_limits: GameLimits = GameLimits()  # every game's, unless `for_game` is given others
    jitter_seed: int = 0  # the seed of the connection's backoff jitter generator
    recordings: Path | None = None  # the SQLite file responses are recorded in and replayed from
    replay: bool = False  # serve recorded responses only; never call the provider

    @property
    def llm_model(self) -> LlmModel:
        return LlmModel(provider=self.provider, model=self.model)
