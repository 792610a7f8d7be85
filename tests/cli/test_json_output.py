"""`--json` on every command: a failure is one object on stdout, a success has `ok: true` at the top, and nothing
goes to stderr beside it."""

from __future__ import annotations

import json

import pytest

from tests.hardening.hostile import SWAP, WORKED, cli, one_json_failure
from tests.helpers import ROOT, run_cli


@pytest.mark.parametrize(
    "args",
    [
        ["check", "{tmp}/missing.contract"],
        ["run", "{tmp}/missing.contract", "--env", "1"],
        ["run", WORKED, "--env", "9"],
        ["solve", SWAP, "--env", "1"],
        ["verify", ROOT / "tests" / "invalid" / "tile-off-board.contract"],
        ["trace", WORKED, "{tmp}/missing.jsonl"],
        ["metrics", "{tmp}/missing.jsonl"],
        ["ctbench", "sweep", "--boards", "99"],
        ["ctbench", "boards", "--no-such-option"],
    ],
)
def test_every_failure_under_json_is_one_object_on_stdout(tmp_path, args):
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in args]
    proc = cli(*args, "--json", cwd=tmp_path)
    payload = one_json_failure(proc, code=proc.returncode)
    assert proc.returncode in (1, 2)
    if "tile-off-board" in args[1]:
        assert payload["diagnostics"][0]["code"] == "E601"


@pytest.mark.e2e
def test_every_json_success_has_ok_true_at_the_top(tmp_path):
    """run, trace, verify, solve, ctbench boards and metrics printed their payload without it (metrics a bare list)."""
    record = run_cli("run", WORKED, "--env", "1", "--customer", "re", "--supplier", "re", "--json", cwd=tmp_path)
    (tmp_path / "runs.jsonl").write_text(record.stdout)
    outputs = [
        record,
        run_cli("run", SWAP, "--board", "24", "--json"),
        run_cli("trace", WORKED, "examples/traces/worked-example-1-late-breach.jsonl", "--json"),
        run_cli("verify", WORKED, "--json"),
        run_cli("ctbench", "boards", "--json"),
        run_cli("metrics", tmp_path / "runs.jsonl", "--json", cwd=tmp_path),
    ]
    for proc in outputs:
        assert proc.returncode == 0 and list(json.loads(proc.stdout))[0] == "ok", proc.args
        assert json.loads(proc.stdout)["ok"] is True
    assert json.loads(outputs[-1].stdout)["roles"][0]["role"] == "customer"


def test_translate_under_json_writes_nothing_to_stderr(tmp_path):
    """The rules backend's notice went to stderr beside the JSON object, which names the backend itself."""
    prose = tmp_path / "prose.txt"
    prose.write_text("hello world\n")
    proc = run_cli("translate", prose, "--json", "--cache", tmp_path / "t.sqlite")
    assert proc.returncode == 1 and proc.stderr == "" and json.loads(proc.stdout)["backend"] == "rules"


def test_the_testing_commands_json_successes_have_ok_true_at_the_top(tmp_path):
    """coverage and test --generate printed their payload without it."""
    log = tmp_path / "game.jsonl"
    assert run_cli("run", WORKED, "--env", "1", "--log", log).returncode == 0
    bare = tmp_path / "w.contract"
    text = WORKED.read_text()
    bare.write_text(text[: text.index("  // The story")] + "}\n")  # its one test cut off: every clause untested
    outputs = [run_cli("coverage", log, "--json"), run_cli("test", "--generate", bare, "--json")]
    for proc in outputs:
        assert proc.returncode == 0 and list(json.loads(proc.stdout))[0] == "ok", (proc.args, proc.stderr)
    assert json.loads(outputs[1].stdout)["written"] == [str(tmp_path / "w.generated.contract")]
