"""A game's LLM limit reached in a one-game command (`run`) ends it with one line and exit 1, as the runner
records such a game as limited: a provider whose rate-limit headers ask for a pause past the game's time limit
is cut by that limit, and the command says which limit it was."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import run_process
from tests.llm_server import ScriptedServer, message

pytestmark = pytest.mark.e2e  # a real process against a loopback server


def paused_until_9999(body):
    """A 200 answer that says no request remains until the year 9999."""
    headers = {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "9999-12-31T23:59:59Z",
    }
    return 200, message('{"kind": "pay", "amount": 0}'), 0, headers


def test_a_game_limit_reached_by_a_lying_provider_is_one_line_and_exit_1(tmp_path):
    with ScriptedServer(paused_until_9999) as server:
        done = run_process(
            *("run", "examples/worked-example-1.contract", "--env", "1", "--customer", "llm"),
            *("--base-url", server.url, "--recordings", tmp_path / "llm.sqlite", "--json"),
            *("--game-time-limit", "3", "--llm-timeout", "2"),
            env={**os.environ, "ANTHROPIC_API_KEY": "sk-test"},
            timeout=120,
        )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert json.loads(done.stdout) == {"ok": False, "error": "the game's seconds limit (3) is reached"}
    assert "Traceback" not in done.stderr
