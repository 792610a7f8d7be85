"""Usage errors (exit 2, before any work): options that do not apply, unbounded requests, empty list items,
unusable URLs and time limits, unknown board sets; an unreachable Ray cluster is one line at once."""

from __future__ import annotations

import json
import time

import pytest

from tests.hardening.hostile import SWAP, WORKED, cli, no_traceback, one_json_failure
from tests.helpers import assert_each_fails_in_one_line, run_cli, run_process


@pytest.mark.parametrize(
    "args",
    [
        ["run", WORKED, "--env", "1", "--seed", "-1"],
        ["ctbench", "sweep", "--boards", "1", "--seed", "-5"],
        ["ctbench", "sweep", "--boards", "1", "--workers", "-1"],
        ["ctbench", "sweep", "--boards", "1", "--workers", "0"],
        ["run", WORKED, "--env", "1", "--board", "3"],
        ["run", SWAP, "--board", "24", "--env", "1"],
        ["verify", WORKED, "--board", "3"],
        ["verify", SWAP, "--env", "1"],
        ["render", SWAP, "--setting", "hotel"],
        ["fmt", "--check", "--write", WORKED],
        ["no-such-command"],
        ["tournament"],
        ["tournament", "--game", "ctbench", "--out", "t"],
    ],
)
def test_options_that_do_not_apply_are_usage_errors(tmp_path, args):
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    one_json_failure(cli(*args, "--json", cwd=tmp_path), code=2)


@pytest.mark.e2e
def test_an_unreachable_ray_cluster_is_one_line_at_once(tmp_path):
    start = time.monotonic()
    # a real process: an attempt to join a cluster leaves Ray's state behind in the process that made it
    payload = one_json_failure(
        no_traceback(
            run_process("ctbench", "sweep", "--boards", "1", "--ray", "127.0.0.1:1", "--out", tmp_path, "--json")
        )
    )
    assert "cannot reach a Ray cluster at 127.0.0.1:1" in payload["error"] and time.monotonic() - start < 30


@pytest.mark.parametrize(
    "args",
    [
        ["ctbench", "sweep", "--boards", "1", "--repeats", str(10**12)],
        [
            "ctbench",
            "sweep",
            "--boards",
            ",".join(map(str, range(80))),
            "--repeats",
            "1000",
            "--agents",
            "planner:planner,planner:exploiter",
        ],
        ["negotiate", "--env", "1", "--games", str(2**64)],
        ["synth", "--starts", str(10**12)],
        ["ctbench", "sweep", "--boards", "1,,2"],
        ["ctbench", "sweep", "--boards", ""],
        ["ctbench", "sweep", "--boards", "1", "--conditions", "none,"],
        ["ctbench", "sweep", "--boards", "1", "--modes", ",pfp"],
        ["negotiate", "--env", "1,,2"],
        ["synth", "--search-envs", ""],
        ["synth", "--rhos", "0.9,,0.5"],
        ["tournament", "--agents", "rcc", "--workers", str(10**30), "--estimate"],
        ["experiment", "performance", "--agent", "rcc", "--workers", "1025", "--estimate"],
        ["tournament", "--agents", "rcc", "--limit", "1", "--estimate", "--out", ""],
        ["test", ""],
        ["test", WORKED, "--junit", ""],
    ],
    ids=[
        "repeats",
        "games-in-all",
        "negotiate-games",
        "starts",
        "boards-gap",
        "boards-empty",
        "conditions-trailing",
        "modes-leading",
        "env-gap",
        "search-envs-empty",
        "rhos-gap",
        "tournament-workers",
        "performance-workers",
        "out-empty",
        "paths-empty",
        "junit-empty",
    ],
)
def test_unbounded_requests_and_empty_list_items_are_usage_errors(tmp_path, args):
    start = time.monotonic()
    proc = cli(*args, "--json", cwd=tmp_path)
    assert proc.returncode == 2 and json.loads(proc.stdout)["ok"] is False, proc.stdout
    assert time.monotonic() - start < 60 and list(tmp_path.iterdir()) == []  # nothing run, nothing written


@pytest.mark.parametrize(
    "args, message",
    [
        # urlparse raised ValueError on these: exit 3
        (
            ["run", SWAP, "--board", "24", "--red", "llm:m", "--base-url", "http://[::1"],
            "--base-url must be an http://",
        ),
        (
            ["translate", SWAP, "--backend", "openai", "--model", "m", "--base-url", "http://x:99999"],
            "--base-url must be an http://",
        ),
        (
            ["translate", SWAP, "--backend", "openai", "--model", "m", "--base-url", "http://x:0"],
            "--base-url must be an http://",
        ),
        # click's range check lets NaN and infinity through; a NaN deadline failed every call as a "connection error"
        (["run", SWAP, "--board", "24", "--red", "llm:m", "--llm-timeout", "nan"], "nan is not a number of seconds"),
        (["negotiate", "--env", "1", "--customer", "llm:m", "--llm-timeout", "inf"], "inf is not a number of seconds"),
        (["translate", SWAP, "--backend", "anthropic", "--timeout", "nan"], "nan is not a number of seconds"),
    ],
)
def test_unusable_urls_and_time_limits_are_usage_errors(args, message):
    for proc in (run_cli(*args), run_cli(*args, "--json")):
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert message in proc.stdout and json.loads(proc.stdout)["ok"] is False


def test_an_unknown_board_set_is_refused_wherever_it_is_named():
    """`--set bogus` (or `--set ''`) played or drew our boards, as if no set had been named."""
    assert_each_fails_in_one_line(
        run_cli,
        [
            (("run", SWAP, "--board", "24", "--set", "bogus"), "unknown board set 'bogus' (--set)"),
            (("ctbench", "show", "1", "--set", "bogus"), "unknown board set 'bogus' (--set); choose from ours, paper"),
            (("verify", SWAP, "--board", "24", "--set", ""), "unknown board set '' (--set)"),
        ],
    )


def test_a_facade_verb_s_complaint_names_the_option_given_on_the_command_line(tmp_path):
    """The verb's own words (`tournament(detect=-1.0): …`) read as the option the user typed."""
    for given in (["--detect", "-1"], ["--detect=-1"]):
        proc = cli("tournament", "--agents", "rcc", *given, "--plan", "--limit", "1", "--out", tmp_path / "t")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == "error: usage: --detect -1.0: Input should be greater than 0\n"
    assert not (tmp_path / "t").exists()
