"""The fault scenarios of the LLM scale benchmark (issue #47, bench/llm_scale.py) scaled down to seconds: an LLM
Supplier plays the 6 games of test_performance's smallest synthetic set against the loopback API
(bench/loopback_llm.py) through a burst of 429s and through an outage of 529s, 3 s each; both ask for a retry
after 0.5 s, so the test takes seconds."""

from __future__ import annotations

import json
import os

import pytest

from bench.llm_scale import AGENT, KEY, STORE, limit_recovery, lines_of
from bench.loopback_llm import Fault, LoopbackLlm, zero_action
from tests.helpers import fresh, run_cli

pytestmark = pytest.mark.e2e  # the real CLI against a loopback LLM API

GAMES = 6  # 2 contracts × 3 counterparties


def test_the_loopback_reply_is_the_zero_action_each_request_names():
    assert json.loads(zero_action('Week 2, purchasing.\nReply {"buy_flour": <units>, "buy_eggs": <units>}.')) == {
        "buy_flour": 0,
        "buy_eggs": 0,
    }
    assert json.loads(
        zero_action('Your reply is not a JSON object. Reply with exactly one such object, e.g. {"payment": 0}.')
    ) == {"payment": 0}


def _history(out, *limits) -> None:
    path = out / STORE.with_name("performance.limits.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    changes = [{"t": float(t), "limit": n, "reason": "x"} for t, n in enumerate(limits)]
    path.write_text(json.dumps({"limit_history": {"anthropic/m": changes}}))


def test_recovery_is_read_from_the_run_s_history_and_needs_0_9_n_after_the_lowest_point(tmp_path):
    _history(tmp_path, 10, 5, 1, 2, 4, 8, 9)
    assert limit_recovery(tmp_path, 10) == {
        "changes": 7,
        "lowest": 1,
        "first_lowered_at": 1.0,
        "lowest_at": 2.0,
        "back_to_0.9n_at": 6.0,
        "lowered_then_recovered": True,
    }
    _history(tmp_path, 10, 5, 1, 2, 4, 8)
    assert limit_recovery(tmp_path, 10)["lowered_then_recovered"] is False  # 8 < 0.9 × 10
    assert limit_recovery(tmp_path / "none", 10) is None


@pytest.mark.parametrize(
    "fault",
    [Fault("burst429", at=0.5, seconds=3.0, retry_after=0.5), Fault("outage529", at=0.5, seconds=3.0, retry_after=0.5)],
    ids=lambda f: f.kind,
)
def test_every_game_completes_through_a_fault_and_the_limit_falls_then_recovers(synthetic, tmp_path, fault):
    """Before issue #47 either fault ended the run (exit 1, bench/results/llm_scale_before.json); now every game
    completes with all its decisions, and the in-flight limit falls, then climbs back (its history in the output)."""
    directory = fresh(synthetic, tmp_path)
    with LoopbackLlm(delay=0.05, fault=fault) as server:
        done = run_cli(
            "experiment",
            "performance",
            directory,
            "--agent",
            AGENT,
            "--role",
            "supplier",
            "--base-url",
            server.url,
            "--recordings",
            tmp_path / "llm.sqlite",
            "--max-connections",
            "4",
            "--json",
            env={**os.environ, "ANTHROPIC_API_KEY": KEY},
            timeout=60,
        )
    status = 429 if fault.kind == "burst429" else 529
    assert server.counts.by_status.get(status, 0) >= 2  # the fault was played
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines_of(directory / STORE) == GAMES
    assert server.counts.by_status[200] == 10 * GAMES  # no game lost a decision to the fault
    limit = limit_recovery(directory, 4)
    assert limit is not None, "the run wrote no in-flight limit history (jobs/performance.limits.json)"
    assert limit["lowered_then_recovered"] and limit["lowest"] < 4, limit
