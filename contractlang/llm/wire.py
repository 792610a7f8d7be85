"""The two wire formats (Messages, Chat Completions): requests sent and replies read strictly."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from contractlang.llm.errors import CallFailed
from contractlang.llm.settings import LlmSettings
from contractlang.llm.usage import TokenCount

REPLY_CAP = 16_384  # characters: every answer the prompts ask for (an action, a message, a contract) fits many times


def capped(reply: str) -> str:
    """A reply as it is kept and sent back: at most REPLY_CAP characters, a cut one saying so."""
    if len(reply) <= REPLY_CAP:
        return reply
    return reply[:REPLY_CAP] + f"\n[reply cut at {REPLY_CAP:,} characters]"


def cause_of(exc, errors) -> str:
    """The error in one line, its HTTP status first."""
    status = getattr(exc, "status_code", None)
    if status is not None:
        return f"API error {status}: {str(exc)[:300]}"
    if isinstance(exc, errors.APIConnectionError):
        return f"connection error: {str(exc)[:300]}"
    return f"API error: {str(exc)[:300]}"


def transient(exc, errors) -> bool:
    if isinstance(exc, errors.APIConnectionError):
        return True
    return isinstance(exc, errors.APIStatusError) and (exc.status_code in (408, 409, 429) or exc.status_code >= 500)


def _not_a_message(detail: str = "") -> CallFailed:
    return CallFailed(
        "the API answered with something that is not a message" + (f" ({detail[:120]})" if detail else "")
    )


class _Wire(BaseModel):
    """A reply as it comes over the wire, read strictly (no NaN, no 1.5 tokens, no number for a text): fields this
    client does not read are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)


class _MessagesBlock(_Wire):
    type: str
    text: str | None = None  # a text block's; other blocks (thinking, tool use) are not read

    @model_validator(mode="after")
    def _text_block_has_text(self):
        if self.type == "text" and self.text is None:
            raise ValueError("a text block without text")
        return self


class _MessagesUsage(_Wire):
    input_tokens: TokenCount | None = None
    output_tokens: TokenCount | None = None
    cache_read_input_tokens: TokenCount | None = None
    cache_creation_input_tokens: TokenCount | None = None


class _MessagesReply(_Wire):
    content: list[_MessagesBlock]
    usage: _MessagesUsage


class _ChatMessage(_Wire):
    content: str | None = None


class _ChatChoice(_Wire):
    message: _ChatMessage


class _PromptDetails(_Wire):
    cached_tokens: TokenCount | None = None


class _ChatUsage(_Wire):
    prompt_tokens: TokenCount | None = None
    completion_tokens: TokenCount | None = None
    prompt_tokens_details: _PromptDetails | None = None


class _ChatReply(_Wire):
    choices: list[_ChatChoice] = Field(min_length=1)
    usage: _ChatUsage


def _validated(model: type[_Wire], body: bytes):
    """The reply `body` read as `model`; CallFailed naming the first field that is wrong."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise _not_a_message(f"{where}: {first['msg']}" if where else first["msg"]) from None


class _AnthropicWire:
    """The Messages API: the system prompt and the newest message marked for prompt caching."""

    @staticmethod
    def client(sdk, key: str, base_url: str, http_client):
        return sdk.Anthropic(api_key=key, base_url=base_url, max_retries=0, http_client=http_client)

    @staticmethod
    def send(client, s: LlmSettings, system: str, messages: list[dict], timeout: float):
        extra: dict = {}
        if s.effort is not None:
            extra["output_config"] = {"effort": s.effort}
        if s.thinking:
            extra["thinking"] = {"type": "adaptive"}
        mark = {"type": "ephemeral"}
        blocks = [{"type": "text", "text": system, "cache_control": mark}] if system else []
        marked = list(messages)
        if marked:
            last = marked[-1]
            content = last["content"]
            content = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            marked[-1] = {**last, "content": [*content[:-1], {**content[-1], "cache_control": mark}]}
        return client.messages.with_raw_response.create(
            model=s.model, max_tokens=s.max_tokens, timeout=timeout, system=blocks, messages=marked, **extra
        )

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_MessagesReply, body)
        u = reply.usage
        return "".join(b.text for b in reply.content if b.type == "text"), {
            "input_tokens": u.input_tokens or 0,
            "output_tokens": u.output_tokens or 0,
            "cache_read_tokens": u.cache_read_input_tokens or 0,
            "cache_write_tokens": u.cache_creation_input_tokens or 0,
        }


class _ChatCompletionsWire:
    """The Chat Completions API: the system prompt as the first message; `--effort` as reasoning_effort (its
    highest level is xhigh, which `max` maps to). The server caches prefixes itself and reports the reads."""

    @staticmethod
    def client(sdk, key: str, base_url: str, http_client):
        return sdk.OpenAI(api_key=key, base_url=base_url, max_retries=0, http_client=http_client)

    @staticmethod
    def send(client, s: LlmSettings, system: str, messages: list[dict], timeout: float):
        extra = {"reasoning_effort": "xhigh" if s.effort == "max" else s.effort} if s.effort is not None else {}
        wire = ([{"role": "system", "content": system}] if system else []) + list(messages)
        return client.chat.completions.with_raw_response.create(
            model=s.model, max_completion_tokens=s.max_tokens, timeout=timeout, messages=wire, **extra
        )

    @staticmethod
    def read(body: bytes) -> tuple[str, dict]:
        reply = _validated(_ChatReply, body)
        u = reply.usage
        prompt, cached = u.prompt_tokens or 0, (u.prompt_tokens_details and u.prompt_tokens_details.cached_tokens) or 0
        return reply.choices[0].message.content or "", {
            "input_tokens": max(prompt - cached, 0),
            "output_tokens": u.completion_tokens or 0,
            "cache_read_tokens": cached,
            "cache_write_tokens": 0,
        }


WIRES = {"anthropic": _AnthropicWire, "openai": _ChatCompletionsWire}
