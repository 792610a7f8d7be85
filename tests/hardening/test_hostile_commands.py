"""The newer commands given what an attacker gives them: `test` on a folder with no tests, `coverage` on a log cut
short, `tournament` on a field too large to make or a store it cannot read; the RL factories given what they
cannot play. Each is one line (exit 1 for bad input, 2 for usage), never a traceback, and nothing is written."""

from __future__ import annotations

import pytest

import contractlang as cl
from tests.hardening.hostile import WORKED, cli, one_json_failure
from tests.helpers import assert_each_fails_in_one_line


def test_a_test_run_that_finds_no_test_or_a_file_past_the_contract_limit_fails_and_writes_no_report(tmp_path):
    (tmp_path / "empty").mkdir()
    bare = tmp_path / "bare"
    bare.mkdir()
    text = WORKED.read_text()
    (bare / "w.contract").write_text(text[: text.index("  // The story")] + "}\n")  # its one test cut off
    huge = tmp_path / "huge"
    huge.mkdir()
    (huge / "h.contract").write_text("// pad\n" * 2**18)  # 1.75 MiB: more than any contract `check` reads
    report = tmp_path / "junit.xml"
    assert_each_fails_in_one_line(
        cli,
        [
            (("test", tmp_path / "empty", "--junit", report), "no tests under"),
            (("test", huge), "h.contract: more than 1 MiB; not read"),
            (("test", bare), f'no tests under {bare}: write `test "NAME"'),
            (("test", WORKED, "--name", "nothing of the sort"), "no test named 'nothing of the sort'"),
        ],
    )
    assert not report.exists()


def test_a_game_log_cut_short_or_foreign_is_bad_data_at_its_line(tmp_path):
    log = tmp_path / "game.jsonl"
    done = cli("run", WORKED, "--env", "1", "--log", log)
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    (tmp_path / "cut.jsonl").write_text("\n".join([*lines[:-1], lines[-1][:10]]))  # its last line cut short
    (tmp_path / "foreign.jsonl").write_text(lines[0] + '\n{"type": "bogus"}\n')
    (tmp_path / "null.jsonl").write_text(lines[0] + "\nnull\n")
    assert_each_fails_in_one_line(
        cli,
        [
            (("coverage", tmp_path / "cut.jsonl"), f"cut.jsonl:{len(lines)}: invalid JSON"),
            (("coverage", tmp_path / "foreign.jsonl"), "foreign.jsonl:2: unknown event type 'bogus'"),
            (("coverage", tmp_path / "null.jsonl"), "null.jsonl:2: each line must be one JSON object"),
            (("trace", tmp_path / "cut.jsonl"), f"cut.jsonl:{len(lines)}: invalid JSON"),
        ],
    )


def test_a_tournament_too_large_to_make_is_refused_before_its_jobs(tmp_path):
    payload = one_json_failure(
        cli("tournament", "--agents", "rcc,rc", "--seeds", "100000", "--estimate", "--json", cwd=tmp_path), code=2
    )
    assert payload["error"].startswith("usage: --seeds 100000 make a tournament of 72,000,000 games, more than")
    assert list(tmp_path.iterdir()) == []


def test_a_tournament_refuses_what_it_cannot_read_or_write(tmp_path):
    (tmp_path / "file").write_text("not a folder\n")
    store = tmp_path / "t" / "jobs" / "contractsim.jsonl"
    store.parent.mkdir(parents=True)
    store.write_text("\x00\xff binary\n")
    field = ("tournament", "--agents", "rcc,rc", "--limit", "1", "--seeds", "1", "--out")
    assert_each_fails_in_one_line(
        cli,
        [
            ((*field, tmp_path / "file"), "it is a file, not a folder"),
            ((*field, tmp_path / "t"), "contractsim.jsonl:1: not a tournament game record"),
            (("tournament", "--agents", "a=rcc,a=rc", "--out", tmp_path / "a"), "two agents are labelled 'a'"),
        ],
    )
    assert store.read_text() == "\x00\xff binary\n" and not (tmp_path / "t" / "tournament.json").exists()
    assert not (tmp_path / "a").exists()


def test_the_rl_factories_refuse_what_they_cannot_play_with_the_library_errors():
    from contractlang.api import rl

    with pytest.raises(rl.EnvInputError, match=r"^games: 10{30}; a whole number of games, 2 to 1,048,576$"):
        rl.evaluate_policy(WORKED, env=1, policy=abs, games=10**30)
    with pytest.raises(rl.EnvInputError, match="^policy: None; a function"):
        rl.evaluate_policy(WORKED, env=1, policy=None, games=2)
    with pytest.raises(cl.ContractlangError, match="nope.contract: cannot read"):
        rl.contractsim_vector_env("nope.contract", env=1, num_envs=1)
