"""LLM backend: the model writes DSL source; the parser and checker (and any extra checks the caller
passes, such as the z3 verifier) answer with diagnostics; the model repairs, at most 3 attempts.

The model's output is untrusted text: it is only ever parsed, never executed.
"""

from __future__ import annotations

import re
import time

from contractlang import check_source
from contractlang.parser import grammar_text
from contractlang.translate.checks import ExtraCheck, Inconsistency, run_checks, unfaithful_changes
from contractlang.vocab import SETTINGS, Frozen

DEFAULT_MODEL = "claude-sonnet-4-5"
MAX_ATTEMPTS = 3


class LlmSettings(Frozen):
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    timeout_seconds: float = 60.0  # the whole translation: every attempt, retry and wait
    max_retries: int = 3  # transient API errors (429, 5xx, 529, connection), within timeout_seconds
    base_url: str | None = None


WORKED_EXAMPLE_TEXT = """Catering supply agreement "lunch-service"
The Customer pays $20 in week 1 and $15 in each later payment week except week 11, when nothing is due.
Every delivery week the Caterer brings 1 Margherita Pizza, 1 Pesto Pasta and 2 Tomato Soups.
Pizzas cost $10, pasta $5 and soup $2.5 is not allowed, so soup is $2 each.
If a delivery is short, the next payment is reduced by the price of what is missing.
A breach by either side ends the agreement."""

WORKED_EXAMPLE_DSL = """contract "lunch-service" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $2 }
  deliver {
    weeks 2..10: pizza 1, pasta 1, soup 2
  }
  pay {
    week 1: $20
    weeks 3..9: $15
    week 11: $0
  }
  payment_deduction
  on breach: terminate
}"""


def system_prompt() -> str:
    vocab = "\n".join(
        f"- game {s.game_id}: products {', '.join(s.products)} ({', '.join(s.product_titles)}); "
        f"money in multiples of ${s.granularity:,}" for s in SETTINGS.values())
    return f"""You convert a supply or board-game agreement written in English into contractlang, a small typed
contract language. Reply with exactly one contract inside a ```contract fenced block and nothing else.

Rules:
- Use only terms the text states. If a price, a week's delivery or a week's payment is missing or
  ambiguous, leave it out; never invent or infer a number. The checker will report what is missing.
- Payment weeks are 1, 3, 5, 7, 9, 11; delivery (production) weeks are 2, 4, 6, 8, 10.
- Every delivery entry lists all three products (0 for none).
- Add a clause only when the text states it: substitution (swapping items above minimums),
  payment_deduction (a shortfall lowers the next payment), rollover (missed items carry forward;
  max_deficit 0..2), `on breach: terminate` (explicit termination or suspension after a breach).
- A total written in the text becomes `assert total pay == $N` (or `total value`).
- Copy every number exactly as written. If the text contradicts itself (say, a stated total that differs
  from the payments), keep both numbers as written: the contradiction is reported, never repaired.

Vocabulary:
{vocab}
- game ctbench: players red and blue; `cover {{ (r,c): red pays for blue with red chip }}`;
  `on goal {{ blue: blue transfers 10 points to red }}`.

Grammar (lark):
{grammar_text()}

Worked example. Text:
{WORKED_EXAMPLE_TEXT}

Contract:
```contract
{WORKED_EXAMPLE_DSL}
```"""


_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)


def extract_source(response_text: str) -> str:
    """The contract in a reply: the ```contract block, else the one unlabelled block, else the bare reply.

    A block in another language (```python) is never taken for the contract, and neither is the text
    between two blocks."""
    blocks = _FENCE.findall(response_text)
    if not blocks:
        return response_text.strip() + "\n"
    labelled = [body for lang, body in blocks if lang.lower() in ("contract", "contractlang")]
    unlabelled = [body for lang, body in blocks if not lang]
    chosen = labelled or unlabelled
    return chosen[0].strip() + "\n" if chosen else ""


def repair_message(diagnostics: list[str]) -> str:
    return ("That contract does not check. Fix every problem below and reply with the whole corrected "
            "contract in one ```contract block. Leave out any term the text does not state.\n\n"
            + "\n\n".join(diagnostics))


def consistency_message(findings: list[Inconsistency]) -> str:
    """Ask the model to re-read, never to reconcile: the text's own numbers are not the model's to change."""
    return ("That contract checks, but its totals disagree:\n" + "\n".join(f"- {f.message}" for f in findings)
            + "\n\nThis is either an extraction error or a contradiction in the text itself. Compare every "
            "price, quantity, payment and stated total with the text. Correct only a number you misread or "
            "left out. Never change a number, or drop a stated total, to make the totals agree: if the text "
            "states these numbers, reply with the same contract unchanged. A text that contradicts itself is "
            "translated as written and reported, never fixed. Reply with the whole contract in one "
            "```contract block.")


class CallFailed(Exception):
    """A model call that gave no usable reply in the time allowed: one line, the key never in it."""


def redact(text: str, api_key: str) -> str:
    return text.replace(api_key, "[redacted key]") if api_key else text


def _retry_after(exc, attempt: int) -> float:
    """The wait the server asked for (retry-after-ms or retry-after), else exponential backoff from 0.5 s."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, TypeError, ValueError):
            continue
    return min(0.5 * 2 ** attempt, 8.0)


def _transient(exc) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):
        return True
    return isinstance(exc, anthropic.APIStatusError) and (exc.status_code in (408, 409, 429)
                                                          or exc.status_code >= 500)


def create_within(client, deadline: float, settings: LlmSettings, **request):
    """One Messages call, retried on transient errors (429, 5xx, 529, connection) up to `max_retries`, all
    within `deadline`: a server asking for a longer wait than is left ends the call at once."""
    import anthropic

    for retry in range(settings.max_retries + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            response = client.messages.create(model=settings.model, max_tokens=settings.max_tokens, timeout=left,
                                              **request)
        except anthropic.APITimeoutError:
            break
        except (ValueError, TypeError) as exc:  # a 200 whose body is not JSON, or not the JSON of a message
            raise CallFailed(f"the API answered with something that is not a message ({str(exc)[:120]})") from None
        except anthropic.APIError as exc:
            if not _transient(exc) or retry == settings.max_retries:
                status = getattr(exc, "status_code", None)
                raise CallFailed(f"API error{f' {status}' if status else ''}: {str(exc)[:300]}") from None
            wait, left = _retry_after(exc, retry), deadline - time.monotonic()
            if wait >= left:
                raise CallFailed(f"the API asked to wait {wait:g} s before retrying, more than the "
                                 f"{max(left, 0):.1f} s left of --timeout {settings.timeout_seconds:g} s") from None
            time.sleep(wait)
            continue
        if not isinstance(getattr(response, "content", None), list) or getattr(response, "usage", None) is None:
            raise CallFailed("the API answered with something that is not a message")
        return response
    raise CallFailed(f"the model did not answer within {settings.timeout_seconds:g} s")


class LlmOutcome(Frozen):
    dsl: str
    attempts: list[dict]
    notes: list[str] = []
    error: str | None = None


def compile_with_llm(text: str, name: str, settings: LlmSettings, api_key: str,
                     extra_checks: tuple[ExtraCheck, ...] = ()) -> LlmOutcome:
    """Ask the model for DSL, check it, feed diagnostics back; at most MAX_ATTEMPTS attempts.

    Checker diagnostics go back as errors to fix. Disagreeing totals go back once as a request to
    re-read; an answer to it that changes a number the text does not state (or drops a stated total)
    is refused, and the earlier, faithful translation stands, flagged."""
    import anthropic

    client = anthropic.Anthropic(api_key=api_key, base_url=settings.base_url, max_retries=0)
    deadline = time.monotonic() + settings.timeout_seconds
    messages: list[dict] = [{"role": "user", "content": f'Contract name: "{name}"\n\nContract text:\n{text}'}]
    attempts: list[dict] = []
    source = ""
    faithful = None  # (source, checked contract, attempt) of an answer that checks but whose totals disagree
    for attempt in range(1, MAX_ATTEMPTS + 1):
        start = time.perf_counter()
        record: dict = {"attempt": attempt, "request": {"model": settings.model, "messages": list(messages)}}
        try:
            response = create_within(client, deadline, settings, system=system_prompt(), messages=messages)
            reply = redact("".join(block.text for block in response.content if getattr(block, "type", "") == "text"),
                           api_key)
        except CallFailed as exc:
            message = redact(str(exc), api_key)
            record.update(error=message, seconds=time.perf_counter() - start)
            attempts.append(record)
            return LlmOutcome(dsl=source, attempts=attempts, error=message)
        source = extract_source(reply)
        result = check_source(source, "<model>")
        problems = [d.render(source) for d in result.diagnostics]
        if result.ok and not result.contracts:
            problems.append("the reply holds no contract: reply with one contract inside a ```contract block")
        findings = run_checks(result.contracts, extra_checks) if result.ok else []
        record.update(response_text=reply, diagnostics=problems + [f.message for f in findings],
                      seconds=time.perf_counter() - start, input_tokens=response.usage.input_tokens,
                      output_tokens=response.usage.output_tokens)
        attempts.append(record)
        if faithful is not None and result.ok and result.contracts:
            changed = unfaithful_changes(faithful[1], result.contracts[0], text)
            if changed:
                record["rejected"] = changed
                return LlmOutcome(dsl=faithful[0], attempts=attempts, notes=[
                    f"attempt {attempt} was refused and the earlier translation kept, as written: "
                    + "; ".join(changed)])
        if result.ok and result.contracts and not findings:
            return LlmOutcome(dsl=source, attempts=attempts)
        incomplete_only = result.diagnostics and all(d.code.startswith("E4") for d in result.diagnostics)
        if incomplete_only and attempt > 1:
            # parse-incomplete is a legitimate answer once the model has been told: never invent terms
            return LlmOutcome(dsl=source, attempts=attempts)
        if findings:
            if faithful is not None:
                return LlmOutcome(dsl=source, attempts=attempts)  # the model stands by the text's own numbers
            faithful = (source, result.contracts[0], attempt)
            messages += [{"role": "assistant", "content": reply},
                         {"role": "user", "content": consistency_message(findings)}]
            continue
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": repair_message(problems)}]
    if faithful is not None:
        return LlmOutcome(dsl=faithful[0], attempts=attempts, notes=[
            f"no later attempt checked; attempt {faithful[2]}'s translation stands, as written"])
    return LlmOutcome(dsl=source, attempts=attempts, error=f"no checked contract after {MAX_ATTEMPTS} attempts")
