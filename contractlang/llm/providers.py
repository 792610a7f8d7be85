"""The providers an LLM agent can name: their keys, endpoints and SDKs, and the models of agent names."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Literal

from contractlang.llm.errors import MissingApiKey, MissingSdk
from contractlang.vocab import Frozen

DEFAULT_MODEL = "claude-sonnet-5-5"  # claude-sonnet-4-5 reached end of life on 2026-11-30
# The shortest hosted provider key is Google's (39 characters; OpenAI's are 51+, Anthropic's 100+): any key of 20 or
# more is redacted, while a placeholder for a local server (`a`, `EMPTY`) is no secret and would only corrupt text.
MIN_REDACTED_KEY = 20
Effort = Literal["low", "medium", "high", "xhigh", "max"]
Provider = Literal["anthropic", "openai"]


class ProviderInfo(Frozen):
    """What a person needs to reach one provider: its key and endpoint variables and how to install its SDK."""

    name: Provider
    title: str
    package: str
    key_variable: str
    key_example: str
    key_source: str
    base_url_variable: str
    default_base_url: str
    install: str | None = None  # the command that installs the SDK; None for a core dependency


PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        name="anthropic",
        title="the Anthropic API",
        package="anthropic",
        key_variable="ANTHROPIC_API_KEY",
        key_example="sk-ant-...",
        key_source="https://console.anthropic.com",
        base_url_variable="ANTHROPIC_BASE_URL",
        default_base_url="https://api.anthropic.com",
    ),
    "openai": ProviderInfo(
        name="openai",
        title="an OpenAI-compatible API",
        package="openai",
        key_variable="OPENAI_API_KEY",
        key_example="sk-...",
        key_source="https://platform.openai.com/api-keys, or any value for a local server",
        base_url_variable="OPENAI_BASE_URL",
        default_base_url="https://api.openai.com/v1",
        install="pip install 'contractlang[openai]' (in a checkout: pip install -e '.[openai]')",
    ),
}


def key_hint(provider: str, can_replay: bool = True) -> str:
    """How to set the provider's key (and, where recordings exist to replay, that --replay needs none)."""
    p = PROVIDERS[provider]
    return f"{p.key_variable} is not set: export {p.key_variable}={p.key_example} (a key from {p.key_source})" + (
        ", or pass --replay to serve recorded responses offline" if can_replay else ""
    )


KEY_HINT = key_hint("anthropic")


def endpoint(provider: str, base_url: str | None) -> str:
    """The base URL a call of `provider` goes to: `base_url`, else the SDK's environment variable, else its
    default — the one the request is sent to, so it is also the one records and caches are keyed on."""
    p = PROVIDERS[provider]
    return (base_url or os.environ.get(p.base_url_variable) or p.default_base_url).rstrip("/")


class LlmModel(Frozen):
    """The model of an LLM agent name, with its provider."""

    provider: Provider = "anthropic"
    model: str = DEFAULT_MODEL

    @property
    def label(self) -> str:
        """`MODEL` for Anthropic (as the names always read), `PROVIDER/MODEL` otherwise."""
        return self.model if self.provider == "anthropic" else f"{self.provider}/{self.model}"


def agent_model(name: str) -> LlmModel | None:
    """The model of an `llm`, `llm:MODEL` (Anthropic) or `llm:PROVIDER/MODEL` agent name; None for other names
    (a provider this client does not speak included)."""
    if name == "llm":
        return LlmModel()
    if not name.startswith("llm:"):
        return None
    spec = name[4:].strip()
    provider, slash, model = spec.partition("/")
    if not slash:
        provider, model = "anthropic", spec
    model = model.strip()
    if provider not in PROVIDERS or not model or (not slash and model in PROVIDERS):
        return None
    return LlmModel(provider=provider, model=model)


class ApiKeys(Frozen):
    """The key of each provider, read once where the run starts; never stored or printed."""

    anthropic: str | None = None
    openai: str | None = None

    @classmethod
    def from_environment(cls) -> ApiKeys:
        return cls(**{name: os.environ.get(p.key_variable) or None for name, p in PROVIDERS.items()})

    def of(self, provider: str) -> str | None:
        return getattr(self, provider)


def redact(text: str, keys: ApiKeys) -> str:
    """`text` as it may be written or shown: every key of MIN_REDACTED_KEY characters or more replaced."""
    for key in (keys.anthropic, keys.openai):
        if key and len(key) >= MIN_REDACTED_KEY:
            text = text.replace(key, "[redacted key]")
    return text


def sdk_module(provider: str, who: str | None = None):
    p = PROVIDERS[provider]
    try:
        return importlib.import_module(p.package)
    except ImportError:
        raise MissingSdk(
            f"{who or f'llm:{provider}/MODEL'} needs the {p.package} package, which is not installed: {p.install}"
        ) from None


def check_providers(models: Mapping[str, LlmModel], keys: ApiKeys, replay: bool = False) -> None:
    """Every provider the LLM agents of `models` (each agent's name and the model its registry entry says it calls)
    will call can be called: its key is set and its SDK is installed (a replay calls none). Raises LlmUnavailable
    naming the first agent that cannot."""
    if replay:
        return
    for name, model in models.items():
        if not keys.of(model.provider):
            raise MissingApiKey(f"{name} needs {PROVIDERS[model.provider].title}: {key_hint(model.provider)}")
        sdk_module(model.provider, name)
