"""The LLM options of the commands that play or judge with LLMs, and the settings and client built from them."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.errors import InputError, UsageProblem
from contractlang.cli.options import choice, seconds
from contractlang.vocab import Frozen

EFFORTS = ("low", "medium", "high", "xhigh", "max")
RecordingsOption = Annotated[
    Path | None,
    typer.Option(
        "--recordings",
        help="SQLite file every LLM response is recorded in (default .contractlang-cache/llm.sqlite); a "
        "rerun serves the recorded responses.",
    ),
]
ReplayFlag = Annotated[
    bool,
    typer.Option(
        "--replay",
        help="Serve recorded LLM responses only, never calling the API: replays a recorded run offline, no key needed.",
    ),
]
EffortOption = Annotated[str | None, typer.Option(help=f"LLM effort: {', '.join(EFFORTS)} (models that take it).")]
ThinkingFlag = Annotated[bool, typer.Option("--thinking", help="Adaptive thinking for the LLM.")]
MaxTokensOption = Annotated[
    int, typer.Option("--max-tokens", min=1, max=128_000, help="LLM output token limit per call (at most 128,000).")
]
LlmTimeoutOption = Annotated[
    float,
    typer.Option(
        "--llm-timeout",
        min=0.001,
        callback=seconds,
        help=(
            "Seconds one attempt of an LLM call may take: a deadline, so a server that trickles bytes is cut at it (an "
            "attempt cut at it is not retried; overloaded and rate-limited answers are, for up to 5 minutes)."
        ),
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help=(
            "API base URL for every LLM of the run: a proxy, an OpenAI-compatible endpoint (Gemini's, a local vLLM / "
            "Ollama / llama.cpp server), a test server. Default: ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else the "
            "provider's own API."
        ),
    ),
]
MaxConnectionsOption = Annotated[
    int,
    typer.Option(
        "--max-connections",
        min=1,
        max=1000,
        help=(
            "LLM requests in flight at once per provider and model, at most; lowered on 429/529 answers and raised "
            "again as calls succeed."
        ),
    ),
]


def _finite(value: float | None) -> float | None:
    """An optional limit's value, never NaN or infinity (see `seconds`)."""
    return value if value is None else seconds(value)


CostLimitOption = Annotated[
    float | None,
    typer.Option(
        "--cost-limit",
        min=0,
        callback=_finite,
        metavar="USD",
        help=(
            "Stop the run cleanly once its LLM calls have cost this many dollars (list prices); rerun with a higher "
            "limit to go on."
        ),
    ),
]
TokenLimitOption = Annotated[
    int | None,
    typer.Option(
        "--token-limit",
        min=0,
        help=(
            "Stop the run cleanly once its LLM calls have used this many tokens (input and output); rerun with a higher "
            "limit to go on."
        ),
    ),
]
GameTokenLimitOption = Annotated[
    int | None,
    typer.Option(
        "--game-token-limit",
        min=0,
        help=("End a game, recorded as limited, once its LLM calls have used this many tokens."),
    ),
]
GameTimeLimitOption = Annotated[
    float | None,
    typer.Option(
        "--game-time-limit",
        min=0,
        metavar="SECONDS",
        callback=_finite,
        help=("End a game, recorded as limited, once it has run this many seconds."),
    ),
]
GameMessageLimitOption = Annotated[
    int | None,
    typer.Option(
        "--game-message-limit",
        min=0,
        help=("End a game, recorded as limited, once its LLM agents have made this many calls."),
    ),
]
GuidanceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--guidance",
        help="A prompt-guidance clause for LLM agents (ContractSim paper, App. B.3 ablations; repeatable): contingencies, "
        "net-utility, no-worse-prior (negotiation); prohibition, institutional, reciprocity, planning "
        "(performance).",
    ),
]


class LlmFlags(Frozen):
    """The LLM options of one command line (see `llm_options`)."""

    recordings: Path | None = None
    replay: bool = False
    effort: str | None = None
    thinking: bool = False
    max_tokens: int
    llm_timeout: float
    base_url: str | None = None
    max_connections: int = 10
    cost_limit: float | None = None
    token_limit: int | None = None
    game_token_limit: int | None = None
    game_time_limit: float | None = None
    game_message_limit: int | None = None


def llm_options(max_tokens: int, timeout: float, only: tuple[str, ...] | None = None):
    """Give a command the LLM options (`only`: just these, the rest at their defaults): typer sees them as its own
    parameters (before --json), and the command receives them as one `llm_flags` value."""
    options = [
        ("recordings", RecordingsOption, None),
        ("replay", ReplayFlag, False),
        ("effort", EffortOption, None),
        ("thinking", ThinkingFlag, False),
        ("max_tokens", MaxTokensOption, max_tokens),
        ("llm_timeout", LlmTimeoutOption, timeout),
        ("base_url", BaseUrlOption, None),
        ("max_connections", MaxConnectionsOption, 10),
        ("cost_limit", CostLimitOption, None),
        ("token_limit", TokenLimitOption, None),
        ("game_token_limit", GameTokenLimitOption, None),
        ("game_time_limit", GameTimeLimitOption, None),
        ("game_message_limit", GameMessageLimitOption, None),
    ]
    fixed = {name: default for name, _, default in options if only is not None and name not in only}
    options = [option for option in options if option[0] not in fixed]

    def wrap(fn):
        own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name != "llm_flags"]
        added = [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)
            for name, annotation, default in options
        ]
        params = [p for p in own if p.name != "json_out"] + added + [p for p in own if p.name == "json_out"]

        @functools.wraps(fn)
        def command(**kwargs):
            flags = LlmFlags(**fixed, **{name: kwargs.pop(name) for name, _, _ in options})
            return fn(**kwargs, llm_flags=flags)

        command.__signature__ = inspect.Signature(params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return wrap


def check_base_url(base_url: str | None) -> None:
    if base_url is None:
        return
    from urllib.parse import urlparse

    try:  # ValueError: a bracket left open (http://[::1) or a port that is no number in 0..65535
        parsed = urlparse(base_url)
        usable = parsed.scheme in ("http", "https") and bool(parsed.hostname) and parsed.port != 0
    except ValueError:
        usable = False
    if not usable:
        raise UsageProblem(f"--base-url must be an http:// or https:// address, not {base_url!r}")


def llm_settings(names: list[str], flags: LlmFlags, calls: bool = True):
    """LLM settings when any of `names` (agents, judge, translator) is `llm[:[PROVIDER/]MODEL]`; None otherwise.
    Without its provider's key or SDK, and not replaying, an LLM option is bad input that says what to do, unless
    no call will be made (`calls` False: an estimate)."""
    from contractlang.api import model_of
    from contractlang.llm import (
        DEFAULT_RECORDINGS,
        ApiKeys,
        GameLimits,
        LlmSettings,
        LlmUnavailable,
        RunLimits,
        check_providers,
        priced,
        unpriced_for_cost_limit,
    )

    uses = {n: model for n in names if (model := model_of(n)) is not None}  # as the agent registry says
    if not uses:
        given = [
            flag
            for flag, value in (
                ("--recordings", flags.recordings),
                ("--replay", flags.replay),
                ("--effort", flags.effort),
                ("--thinking", flags.thinking),
                ("--base-url", flags.base_url),
                ("--cost-limit", flags.cost_limit),
                ("--token-limit", flags.token_limit),
                ("--game-token-limit", flags.game_token_limit),
                ("--game-time-limit", flags.game_time_limit),
                ("--game-message-limit", flags.game_message_limit),
                ("--max-connections", flags.max_connections != 10),
            )
            if value is not None and value is not False
        ]
        if given:
            raise UsageProblem(
                f"{given[0]} applies to LLM agents, judges and translators (llm[:MODEL]); none is chosen"
            )
        return None
    check_base_url(flags.base_url)
    if flags.effort is not None:
        choice(flags.effort, EFFORTS, "effort")
    try:
        check_providers(uses, ApiKeys.from_environment(), flags.replay or not calls)
    except LlmUnavailable as exc:
        raise InputError(str(exc)) from None
    unpriced = [m for m in uses.values() if not priced(m)]
    if flags.cost_limit is not None and unpriced:
        raise InputError(unpriced_for_cost_limit(unpriced[0]))
    first = next(iter(uses.values()))
    return LlmSettings(
        provider=first.provider,
        model=first.model,
        max_tokens=flags.max_tokens,
        effort=flags.effort,
        thinking=flags.thinking,
        timeout_seconds=flags.llm_timeout,
        base_url=flags.base_url,
        max_connections=flags.max_connections,
        run_limits=RunLimits(cost_usd=flags.cost_limit, tokens=flags.token_limit),
        game_limits=GameLimits(
            tokens=flags.game_token_limit, seconds=flags.game_time_limit, messages=flags.game_message_limit
        ),
        recordings=flags.recordings or DEFAULT_RECORDINGS,
        replay=flags.replay,
    )


def llm_client(settings):
    from contractlang.llm import ApiKeys, LlmClient, LlmUnavailable

    if settings is None:
        return None
    try:
        return LlmClient(settings, ApiKeys.from_environment())
    except LlmUnavailable as exc:
        raise InputError(str(exc)) from None


@contextmanager
def llm_status(client, json_out: bool) -> Iterator[None]:
    """A spinner on stderr while LLM agents play (a game makes tens of model calls); nothing otherwise."""
    if client is None or json_out:
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status("playing with LLM agents"):
        yield
