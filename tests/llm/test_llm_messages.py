"""What the LLM agents send and what their failures say, through the real clients against scripted servers on
127.0.0.1 (issue #33): a judge summary after prose is read whole and its feedback is plain words, a performance
prompt states the contract in words, negotiate sends translate's and run's output limits, and a retry the timeout
cuts short reports the error that caused it."""

import json
import re

import pytest

from contractlang import check_source
from contractlang.llm import CallFailed, LlmClient, LlmSettings
from tests.helpers import ROOT
from tests.llm.test_llm_agents import KEY, CTBenchScript, closed_port_url, path_tiles, play
from tests.llm_server import ScriptedServer, message, prompt_of

pytestmark = pytest.mark.e2e  # games with LLM agents against scripted servers on 127.0.0.1


SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "internal error"}}


def test_a_retry_the_retry_budget_cuts_short_reports_the_error_that_caused_it():
    """No retry-after: the client's own backoff is not 'the API asked to wait'; the HTTP 500 is the news."""
    with ScriptedServer([(500, SERVER_ERROR, 0, {})] * 30) as server:
        client = LlmClient(LlmSettings(base_url=server.url, model="m", retry_seconds=1.2, max_retries=30), KEY)
        with pytest.raises(CallFailed) as failed:
            client.complete("test", "S", [{"role": "user", "content": "x"}])
    assert "API error 500" in str(failed.value) and "internal error" in str(failed.value)
    assert "asked" not in str(failed.value)
    assert re.search(
        r"the next retry would wait [\d.]+ s, more than the [\d.]+ s left of the 1.2 s retry budget", str(failed.value)
    ), str(failed.value)
    client = LlmClient(LlmSettings(base_url=closed_port_url(), model="m", retry_seconds=1.2, max_retries=5), KEY)
    with pytest.raises(CallFailed, match="connection error") as failed:
        client.complete("test", "S", [{"role": "user", "content": "x"}])
    assert "asked" not in str(failed.value)


class ProseJudge(CTBenchScript):
    """A judge that answers its summary after a sentence of prose, once with entries that are not objects,
    with its coverage entries' colours left open."""

    def __init__(self):
        super().__init__()
        self.summaries = 0

    def judge(self, prompt: str) -> str:
        if "Summarise the agreed terms" not in prompt:
            return super().judge(prompt)
        self.summaries += 1
        if self.summaries == 1:
            return 'Sure: {"(0,1)": "P-Red pays"}'
        entries = json.loads(super().judge(prompt))
        return "Sure, here is the summary: " + json.dumps({k: {**v, "color": "unknown"} for k, v in entries.items()})


def test_a_judge_summary_after_prose_is_read_whole_and_its_feedback_is_plain_words(tmp_path):
    with ScriptedServer(ProseJudge()) as server:
        record = play("prog_trading", server.url, tmp_path)
    summaries = [c for c in record.llm_calls if c.purpose == "judge summary"]
    assert len(summaries) == 2 and record.negotiation.contract is not None and record.contract_active
    feedback = summaries[1].prompt
    assert feedback.startswith("That summary cannot be used") and "string indices" not in feedback
    assert "is not an object with giver, receiver and color" in feedback
    coverage = record.contract_terms["coverage"]
    assert len(coverage) == len(path_tiles("red", "blue") + path_tiles("blue", "red"))
    assert all(c["color"] is None for c in coverage)
    prompts = [c.prompt for c in record.llm_calls]
    assert not any("None chip" in p for p in prompts)
    assert any("with a chip of the tile's colour; if" in p for p in prompts)
    [confirm, _] = [c.prompt for c in record.llm_calls if c.purpose == "ctbench confirm"]
    assert "Board (R red, B blue, G green)" in confirm and "Your best path to the goal" in confirm  # game context
    assert "P-Blue's best path" in confirm


def test_a_performance_prompt_states_the_contract_in_words():
    from games.contractsim.environments import environment
    from games.contractsim.llm_agents import LlmPerformer

    [checked] = check_source((ROOT / "examples/worked-example-1.contract").read_text(), "w").contracts
    assert checked.ir.asserts  # `total pay == total value` and `total pay == $90`
    performer = LlmPerformer("customer", LlmClient(LlmSettings(), KEY), checked.ir, environment(1))
    system = performer.conversation.system
    assert "==" not in system and "total_" not in system
    assert (
        "Stated: the total payment equals the total value." in system
        and "Stated: the total payment equals $90." in system
    )


def test_negotiate_sends_the_translator_and_performance_limits_of_translate_and_run(tmp_path):
    from contractlang.translate.rules import translate as rules_translate
    from games.contractsim.environments import environment
    from games.contractsim.session import negotiate_and_perform
    from solver.dp import TableCache

    def script(body):
        if body["system"][0]["text"].startswith("You convert"):
            text = prompt_of(body).split("Contract text:\n", 1)[1]
            return 200, message("```contract\n" + rules_translate(text, "proposal").dsl + "```")
        return 200, message('{"payment": 0}')

    offers = [
        c.ir
        for f in sorted((ROOT / "examples").glob("catering*.contract"))
        for c in check_source(f.read_text(), str(f)).contracts
    ]
    with ScriptedServer(script) as server:
        client = LlmClient(LlmSettings(base_url=server.url, model="scripted-model", max_tokens=16384), KEY)
        run = negotiate_and_perform(
            environment(1), "scripted", "scripted", offers, TableCache(), "llm", ("llm", "rc"), (42,), client
        )
    assert run.metrics.agreed and run.performances
    limits = {
        ("translation" if b["system"][0]["text"].startswith("You convert") else "performance", b["max_tokens"])
        for b in server.requests
    }
    assert limits == {("translation", 4096), ("performance", 8192)}
