"""LLM backend: the model writes DSL source; the parser and checker (and any extra checks the caller
passes, such as the z3 verifier) answer with diagnostics; the model repairs, at most 3 attempts.

The model's output is untrusted text: it is only ever parsed, never executed.
"""

from __future__ import annotations

import re
import time

from contractlang import build
from contractlang.formatter import format_contracts
from contractlang.llm import CallFailed, LlmClient
from contractlang.parser import grammar_text
from contractlang.source import check_source
from contractlang.translate.checks import ExtraCheck, Inconsistency, run_checks, unfaithful_changes
from contractlang.vocab import PRODUCTION_WEEKS, SETTINGS, Frozen

MAX_ATTEMPTS = 3
MAX_TOKENS = 4096  # output limit per attempt, `translate`'s default


WORKED_EXAMPLE_TEXT = """Catering supply agreement "lunch-service"
The Customer pays $20 in week 1 and $15 in each later payment week except week 11, when nothing is due.
Every delivery week the Caterer brings 1 Margherita Pizza, 1 Pesto Pasta and 2 Tomato Soups.
Pizzas cost $10, pasta $5 and soup $2.5 is not allowed, so soup is $2 each.
If a delivery is short, the next payment is reduced by the price of what is missing.
A breach by either side ends the agreement."""

WORKED_EXAMPLE_DSL = format_contracts(
    build.contract(
        "lunch-service",
        "contractsim.catering",
        (
            build.prices({"pizza": 10, "pasta": 5, "soup": 2}),
            build.deliver([(PRODUCTION_WEEKS, {"pizza": 1, "pasta": 1, "soup": 2})]),
            build.pay([([1], 20), ([3, 5, 7, 9], 15), ([11], 0)]),
            build.payment_deduction(),
            build.on_breach(),
        ),
    )
).rstrip("\n")


def system_prompt() -> str:
    vocab = "\n".join(
        f"- game {s.game_id}: products {', '.join(s.products)} ({', '.join(s.product_titles)}); "
        f"money in multiples of ${s.granularity:,}"
        for s in SETTINGS.values()
    )
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
- A term the language cannot express (a fixed penalty, a deduction of a stated amount rather than the
  missing items' price, interest, a term of another kind) is left out of the contract and listed after the
  block, one line each: `missing: <the text's own words>`. Never drop a stated term silently.
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
    return (
        "That contract does not check. Fix every problem below and reply with the whole corrected "
        "contract in one ```contract block. Leave out any term the text does not state.\n\n" + "\n\n".join(diagnostics)
    )


def consistency_message(findings: list[Inconsistency]) -> str:
    """Ask the model to re-read, never to reconcile: the text's own numbers are not the model's to change."""
    return (
        "That contract checks, but its totals disagree:\n"
        + "\n".join(f"- {f.message}" for f in findings)
        + "\n\nThis is either an extraction error or a contradiction in the text itself. Compare every "
        "price, quantity, payment and stated total with the text. Correct only a number you misread or "
        "left out. Never change a number, or drop a stated total, to make the totals agree: if the text "
        "states these numbers, reply with the same contract unchanged. A text that contradicts itself is "
        "translated as written and reported, never fixed. Reply with the whole contract in one "
        "```contract block."
    )


_SAID_MISSING = re.compile(r"^[ \t]*missing:[ \t]*(.+?)[ \t]*$", re.M | re.I)


def said_missing(response_text: str) -> list[str]:
    """The `missing: …` lines a reply lists outside its blocks: stated terms the language cannot express."""
    outside = _FENCE.sub("", response_text)
    return [f"could not express: {term}" for term in _SAID_MISSING.findall(outside)]


class LlmOutcome(Frozen):
    """The repair loop's answer; `unread` the terms its chosen reply says the language cannot express."""

    dsl: str
    attempts: list[dict]
    notes: list[str] = []
    error: str | None = None
    unread: list[str] = []


def compile_with_llm(text: str, name: str, client: LlmClient, extra_checks: tuple[ExtraCheck, ...] = ()) -> LlmOutcome:
    """The repair loop's outcome as it is written and shown (cache, output file, stdout): keys redacted in it,
    never in the replies the loop reads."""
    outcome = _repair(text, name, client, extra_checks)
    chosen = [a["response_text"] for a in outcome.attempts if extract_source(a.get("response_text", "")) == outcome.dsl]
    outcome = outcome.model_copy(update={"unread": said_missing(chosen[-1]) if chosen else []})
    return LlmOutcome(**client.redact(outcome.model_dump()))


def _repair(text: str, name: str, client: LlmClient, extra_checks: tuple[ExtraCheck, ...]) -> LlmOutcome:
    """Ask the model for DSL, check it, feed diagnostics back; at most MAX_ATTEMPTS attempts, all within the
    client's timeout.

    Checker diagnostics go back as errors to fix. Disagreeing totals go back once as a request to
    re-read; an answer to it that changes a number the text does not state (or drops a stated total)
    is refused, and the earlier, faithful translation stands, flagged."""
    settings = client.settings
    deadline = time.monotonic() + settings.timeout_seconds
    messages: list[dict] = [{"role": "user", "content": f'Contract name: "{name}"\n\nContract text:\n{text}'}]
    attempts: list[dict] = []
    source = ""
    faithful = None  # (source, checked contract, attempt) of an answer that checks but whose totals disagree
    for attempt in range(1, MAX_ATTEMPTS + 1):
        start = time.perf_counter()
        record: dict = {"attempt": attempt, "request": {"model": settings.model, "messages": list(messages)}}
        try:
            reply = client.complete("translation", system_prompt(), messages, deadline=deadline)
        except CallFailed as exc:
            record.update(error=str(exc), seconds=time.perf_counter() - start)
            attempts.append(record)
            return LlmOutcome(dsl=source, attempts=attempts, error=str(exc))
        call = client.calls[-1]
        source = extract_source(reply)
        result = check_source(source, "<model>")
        problems = [d.render(source) for d in result.diagnostics]
        if result.ok and not result.contracts:
            problems.append("the reply holds no contract: reply with one contract inside a ```contract block")
        findings = run_checks(result.contracts, extra_checks) if result.ok else []
        record.update(
            response_text=reply,
            diagnostics=problems + [f.message for f in findings],
            seconds=time.perf_counter() - start,
            input_tokens=call.input_tokens,
            output_tokens=call.output_tokens,
        )
        attempts.append(record)
        if faithful is not None and result.ok and result.contracts:
            changed = unfaithful_changes(faithful[1], result.contracts[0], text)
            if changed:
                record["rejected"] = changed
                return LlmOutcome(
                    dsl=faithful[0],
                    attempts=attempts,
                    notes=[
                        f"attempt {attempt} was refused and the earlier translation kept, as written: "
                        + "; ".join(changed)
                    ],
                )
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
            messages += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": consistency_message(findings)},
            ]
            continue
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": repair_message(problems)}]
    if faithful is not None:
        return LlmOutcome(
            dsl=faithful[0],
            attempts=attempts,
            notes=[f"no later attempt checked; attempt {faithful[2]}'s translation stands, as written"],
        )
    return LlmOutcome(dsl=source, attempts=attempts, error=f"no checked contract after {MAX_ATTEMPTS} attempts")
