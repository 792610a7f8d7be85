"""`experiment performance` (issue #31): an agent against RCC/RC/RE on a synthetic set — built-in, external
(`cmd:`) and LLM agents through the one command, regret from the rational records, resume after an API
failure, and hostile input. The set is the smallest `synth` can write: one base contract in Env 1 (Example 1's
terms, the worked examples of docs/rules/checks.md) with two of its variants, solved directly instead of searched (a search takes minutes)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from contractlang.llm import cost_of
from tests.helpers import fresh, run_cli
from tests.llm_server import ScriptedServer, message, prompt_of

KEY = "sk-test-not-a-real-key"
MODEL = "claude-haiku-4-5"
EXAMPLE_AGENT = f"cmd:{sys.executable} examples/agents/external_agent.py"


def performance(directory: Path, *args, **kwargs):
    done = run_cli("experiment", "performance", directory, *args, "--workers", "1", "--json", **kwargs)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def rows(directory: Path, folder: str, key: str) -> dict:
    report = json.loads((directory / folder / "tables.json").read_text())
    return {(r["role"], r["counterparty"], r["policy"]): r["summary"] for r in report[key]}


@pytest.mark.e2e
def test_rcc_as_the_agent_reproduces_the_rational_rcc_rows_cell_for_cell(synthetic, tmp_path):
    """The agent runs need the rational records first, so a set without them plays them into the rational
    experiment's own store; `experiment rational` then plays nothing, and both give the same RCC rows."""
    directory = fresh(synthetic, tmp_path)
    first = performance(directory, "--agent", "rcc")
    assert first["played_now"] == {"rational": 2, "agents": 2 * 2 * 3} and first["contracts"] == 2
    rational = run_cli("experiment", "rational", directory, "--workers", "1", "--json")
    assert rational.returncode == 0 and json.loads(rational.stdout)["played_now"] == 0, rational.stderr
    ours, theirs = rows(directory, "performance", "rows"), rows(directory, "rational", "rows")
    assert len(ours) == 6
    for (role, other, _agent), summary in ours.items():
        assert summary == theirs[role, other, "rcc"], (role, other)
    assert rows(directory, "performance", "rational") == theirs  # the rational rows of the same run
    md = (directory / "performance" / "tables.md").read_text()
    for utility in (
        215,
        50,
    ):  # worked example 1 (docs/rules/checks.md), RCC vs RCC: U_Cust 215, U_Supp 50 (in both variants)
        assert f"| RCC | rcc | {utility}.0 ± 0.0 | {utility}.0 ± 0.0 | 0.0 ± 0.0 |" in md
    assert "| RCC | RC (paper) | 323.5 ± 88.2 |" in md and "Table 10 — Supplier, micro" in md
    # the paper's LLM agents beside the user's (Table 7, macro; Table 10, pooled weeks), and Welch's test of each
    assert "| RCC | Claude Opus 5 (paper) | 324.4 ± 95.6 | 324.4 ± 95.6 | -1.0 ± 33.8 |" in md
    assert "| RE | GPT–5.6-Sol (paper) | -0.4 ± 4.0 | -0.4 ± 4.0 | 0.4 ± 4.0 | 0.4 ± 4.0 | 0.2 ± 2.1 |" in md
    assert "| RCC | RE (paper) | 46.2 ± 32.4 | 8.3 ± 18.3 | 6.5 ± 49.2 | 44.1 ± 45.2 | 5.3 ± 8.8 | 7.3 ± 9.6 |" in md
    welch = md.split("### Table 7 — Customer, macro: does each agent differ")[1].split("\n\n")[1].splitlines()
    opus = next(line for line in welch if line.startswith("| RCC | rcc vs Claude Opus 5 (paper) |"))
    assert opus.split(" | ")[2] == "n<10"  # U 215 ± 0 over 2 runs: too few for a p against the paper's 180
    assert "Welch's two-sample t-test" in md
    assert (directory / "performance" / "figure4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = json.loads((directory / "performance" / "figure4.json").read_text())["series"]
    rcc = next(
        s
        for s in figure
        if (s["policy"], s["role"], s["counterparty"], s["axis"]) == ("rcc", "customer", "rcc", "contingencies")
    )
    assert [(b["label"], b["runs"], b["compliance"]) for b in rcc["bins"]] == [("0", 1, 1.0), ("2", 1, 1.0)]
    before = {p.name: p.read_bytes() for p in (directory / "performance").iterdir()}
    again = performance(directory, "--agent", "rcc")
    assert again["played_now"] == {"rational": 0, "agents": 0}
    assert {p.name: p.read_bytes() for p in (directory / "performance").iterdir()} == before
    # the other convention scores the same records into files of its own, beside these [CS-19a]
    paper = performance(directory, "--agent", "rcc", "--convention", "paper-tables")
    assert paper["played_now"] == {"rational": 0, "agents": 0} and paper["tables"].endswith("tables.paper-tables.md")
    after = {p.name: p.read_bytes() for p in (directory / "performance").iterdir()}
    assert {name: after[name] for name in before} == before
    assert set(after) - set(before) == {
        "tables.paper-tables.md",
        "tables.paper-tables.json",
        "figure4.paper-tables.png",
        "figure4.paper-tables.json",
    }
    assert after["tables.paper-tables.md"].startswith(b"Scored under the paper-tables convention, [CS-19a]")
    report = json.loads(after["tables.paper-tables.json"])
    assert report["convention"] == "paper-tables"
    assert [r["summary"] for r in report["rows"]] == [r["summary"] for r in report["rational"] if r["policy"] == "rcc"]


@pytest.mark.e2e
def test_a_setting_changes_names_and_money_only(synthetic, tmp_path):
    """Table 11: RCC told in Hotel Cleaning (money × 100) and in AI Hosting (× 1,000) plays the games it plays in
    Catering, so in base units its rows are the rational RCC rows cell for cell, side by side in Table 11."""
    directory = fresh(synthetic, tmp_path)
    done = performance(directory, "--agent", "rcc", "--setting", "hotel", "--setting", "ai-hosting")
    assert done["played_now"]["agents"] == 2 * 2 * 2 * 3
    ours, rational = rows(directory, "performance", "rows"), rows(directory, "performance", "rational")
    assert {k[2] for k in ours} == {"rcc (hotel)", "rcc (ai-hosting)"}
    for (role, other, label), summary in ours.items():
        assert summary == rational[role, other, "rcc"], label
    md = (directory / "performance" / "tables.md").read_text()
    assert "## Table 11 — setting robustness" in md
    table = md.split("## Table 11 — setting robustness")[1].split("\n\n")[1].splitlines()
    assert [line.split(" | ")[:3] for line in table[2:]] == [
        ["| rcc", "hotel", "204.0"],
        ["| rcc", "ai-hosting", "204.0"],
    ]
    assert table[2].split(" | ")[2:] == table[3].split(" | ")[2:]  # the same numbers in both settings
    store = [json.loads(line) for line in (directory / "jobs" / "performance.jsonl").read_text().splitlines()]
    assert {(r["job"]["setting"], r["run"]["multiplier"]) for r in store} == {("hotel", 100), ("ai-hosting", 1000)}


@pytest.mark.e2e
def test_an_external_program_is_an_agent_like_any_other(synthetic, tmp_path):
    """The example program pays what is due, which is what RC pays (eq. 7): the same games, so its rows are
    the rational RC Customer's, regret included."""
    directory = fresh(synthetic, tmp_path)
    done = performance(directory, "--agent", EXAMPLE_AGENT, "--role", "customer")
    assert done["played_now"]["agents"] == 2 * 3 and done["roles"] == ["customer"]
    ours, rational = rows(directory, "performance", "rows"), rows(directory, "performance", "rational")
    assert {k[:2] for k in ours} == {("customer", c) for c in ("rcc", "rc", "re")}
    for (role, other, _), summary in ours.items():
        assert summary == {**rational[role, other, "rc"], "policy": summary["policy"]}  # all but the agent's name
        assert summary["policy"].startswith("cmd:")
    assert "Table 8" not in (directory / "performance" / "tables.md").read_text()


def scripted_customer(requests: list, fail_after: list[int | None]):
    """An LLM Customer that pays $18 in weeks 1–9 except week 7 (a defection) and nothing in week 11; each reply
    counts 100 input, 50 output, 30 cache-read and 20 cache-write tokens. From request `fail_after[0] + 1` on the
    API refuses every request (a quota), until the test lifts it."""

    def reply(body):
        requests.append(body)
        if fail_after[0] is not None and len(requests) > fail_after[0]:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "quota"}}
        week = int(re.findall(r"Week (\d+) \(a payment week\)", prompt_of(body))[-1])
        answer = message(json.dumps({"payment": 18 if week <= 9 and week != 7 else 0}))
        answer["usage"].update(cache_read_input_tokens=30, cache_creation_input_tokens=20)
        return 200, answer

    return reply


def llm_args(directory: Path, url: str, recordings: Path, *extra) -> list:
    """`experiment performance` of an LLM Customer on `directory`'s set against the API at `url`."""
    return [
        "experiment",
        "performance",
        directory,
        "--agent",
        f"llm:{MODEL}",
        "--role",
        "customer",
        "--base-url",
        url,
        "--recordings",
        recordings,
        *extra,
    ]


@pytest.mark.e2e
def test_an_llm_agent_is_scored_and_costed_and_resumes_after_the_api_fails(synthetic, tmp_path):
    """6 games of 6 payment weeks. Uninterrupted, then a run one game at a time whose API refuses requests
    after the 15th: its third game errors, which --fail-on-error 0 does not allow (one line, the first two
    kept, the third stored as errored); the rerun retries it and plays the other 3, serving the third game's 3
    recorded answers, and writes the same bytes."""
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
    whole = fresh(synthetic, tmp_path / "whole")
    requests: list = []
    with ScriptedServer(scripted_customer(requests, [None])) as server:
        done = run_cli(*llm_args(whole, server.url, tmp_path / "whole.sqlite"), "--workers", "1", "--json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    [usage] = out["llm"]
    assert len(requests) == 36 and usage["games"] == 6 and usage["calls"] == 36 and usage["failed"] == 0
    assert (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["cache_read_tokens"],
        usage["cache_write_tokens"],
        usage["total_tokens"],
    ) == (3600, 1800, 1080, 720, 7200)
    assert usage["cost_usd"] == pytest.approx(36 * cost_of(MODEL, 100, 50, cache_read=30, cache_write=20))
    md = (whole / "performance" / "tables.md").read_text()
    assert f"| RCC | llm:{MODEL} | " in md and "## LLM usage" in md and "| 7,200 |" in md
    agent = rows(whole, "performance", "rows")["customer", "rcc", f"llm:{MODEL}"]
    assert agent["defection"]["mean"] == 1.0 and agent["regret"]["mean"] > 0  # its week-7 shortfall costs it
    assert (whole / "performance" / "figure4.png").exists()

    cut = fresh(synthetic, tmp_path / "cut")
    requests, quota = [], [15]
    with ScriptedServer(scripted_customer(requests, quota)) as server:
        failed = run_cli(
            *llm_args(cut, server.url, tmp_path / "cut.sqlite"),
            "--workers",
            "1",
            "--max-connections",
            "1",
            "--fail-on-error",
            "0",
            "--json",
            env=env,
        )
        assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
        error = json.loads(failed.stdout)["error"]
        assert "API error 400" in error and "more than --fail-on-error 0" in error, error
        assert len(failed.stdout.splitlines()) == 1
        assert (cut / "jobs" / "performance.jsonl").read_text().count("\n") == 2
        errored = (cut / "jobs" / "performance.unfinished.jsonl").read_text().count('"status": "errored"')
        # the game the one thread took up while the first failure was being counted may fail on the spent quota too
        assert errored in (1, 2), errored
        assert not (cut / "performance").exists()
        quota[0], asked = None, len(requests)
        resumed = run_cli(*llm_args(cut, server.url, tmp_path / "cut.sqlite"), "--workers", "1", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"retrying {errored} errored agent games" in resumed.stderr
    assert not (cut / "jobs" / "performance.unfinished.jsonl").exists()
    assert len(requests) - asked == 36 - 15  # the 3 answers of the game cut short come from the recordings
    assert f"llm:{MODEL}: 6 games, 36 LLM calls (0 failed), 7,200 tokens" in resumed.stdout
    for name in ("tables.json", "tables.md", "figure4.json", "figure4.png"):
        assert (cut / "performance" / name).read_bytes() == (whole / "performance" / name).read_bytes(), name


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("--agent", "oracle"), 1, "unknown agent 'oracle'; choose from rc, re, rcc, random"),
        (("--agent", "llm:nowhere/x"), 1, "unknown agent 'llm:nowhere/x'"),
        (("--agent", "rcc", "--role", "x"), 1, "unknown role 'x'; choose from customer, supplier, both"),
        (("--agent", "rcc", "--seeds", ""), 2, "usage: --seeds takes a comma-separated list with no empty item"),
        (("--agent", "rcc", "--seeds", "-1"), 1, "--seeds takes seeds of 0 or more"),
        (
            ("--agent", "rcc", "--setting", "bogus"),
            1,
            "unknown setting 'bogus'; choose from catering, hotel, ai-hosting",
        ),
        (("--agent", "llm"), 1, "export ANTHROPIC_API_KEY="),
        ((), 2, "Missing option '--agent'"),
    ],
)
def test_bad_input_is_one_line(synthetic, args, code, message):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    for extra in ((), ("--json",)):
        done = run_cli("experiment", "performance", synthetic, *args, *extra, env=env)
        assert done.returncode == code and "Traceback" not in done.stderr + done.stdout, done.stderr
        text = json.loads(done.stdout)["error"] if extra else done.stderr
        assert message in text and len(text.strip().splitlines()) == 1, text
    assert not (synthetic / "performance").exists()


def test_a_directory_that_is_not_a_synthetic_set_is_one_line(tmp_path):
    done = run_cli("experiment", "performance", tmp_path / "nowhere", "--agent", "rcc", "--json")
    assert done.returncode == 1
    assert "nowhere/manifest.json: no manifest there" in json.loads(done.stdout)["error"]


@pytest.mark.e2e
def test_a_cold_cache_is_announced_with_an_estimate_before_the_solving_phase(synthetic, tmp_path):
    """Issue #46 item 5: the run first says how many tables it must solve and about how long that takes; a warm
    rerun with nothing left to play says nothing of it."""
    directory = fresh(synthetic, tmp_path)
    env = {**os.environ, "CONTRACTLANG_DP_CACHE": str(tmp_path / "cold-cache")}
    first = run_cli("experiment", "performance", directory, "--agent", "rcc", "--workers", "1", env=env)
    assert first.returncode == 0, first.stderr
    assert "2 of 2 contracts to play have no solved DP table in " in first.stderr
    # 2 × 3.3 s, and the kernels' compilation when this is the machine's first solve
    assert re.search(r"about (7|24) s in all on an idle 2-core machine \(3\.3 s a table\)", first.stderr)
    again = run_cli("experiment", "performance", directory, "--agent", "rcc", "--workers", "1", env=env)
    assert again.returncode == 0 and "no solved DP table" not in again.stderr
