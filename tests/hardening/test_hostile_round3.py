"""The CLI as an attacker drives it, third round (issue #30's acceptance: a fresh run of the same kinds of attack
finds no traceback and no exit 3): the language server's byte stream, contracts with thousands of errors or of
megabytes, a live directory tree given to `ctbench import`, and files with no contract given to `fmt`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.helpers import ROOT, assert_each_fails_in_one_line, run_cli

WORKED = ROOT / "examples" / "worked-example-1.contract"
SWAP = ROOT / "examples" / "ctbench-board-24-swap.contract"


def lsp(stdin, timeout: float = 60) -> subprocess.CompletedProcess:
    """`contractlang lsp` in a real process reading `stdin` (bytes, or an open file)."""
    data = stdin if isinstance(stdin, bytes) else None
    return subprocess.run([sys.executable, "-m", "contractlang", "lsp"], input=data,
                          stdin=None if data is not None else stdin, capture_output=True, cwd=ROOT, timeout=timeout)


def message(obj: dict) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def session(*messages: dict) -> subprocess.CompletedProcess:
    """A whole editor session around `messages`: initialize, the messages, shutdown, exit."""
    return lsp(b"".join(message(m) for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}}, *messages,
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"})))


def test_a_clean_language_server_session_exits_0():
    """pygls closes stdout on `exit`; the CLI's flush after the command then failed: exit 3 after every session."""
    clean = session()
    assert clean.returncode == 0 and clean.stderr == b"" and b'"id": 2' in clean.stdout


def test_a_message_the_server_cannot_read_is_logged_without_a_traceback():
    """pygls writes the traceback into the text of `Unable to deserialize message`."""
    nowhere = session({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///nonexistent"}, "position": {"line": 10**12, "character": -1}}})
    log = nowhere.stderr.decode()
    assert nowhere.returncode == 0 and "Traceback" not in log and log.splitlines()[0] == \
        "contractlang lsp ERROR pygls.protocol.json_rpc: Unable to deserialize message"


def test_the_language_server_caps_its_stream_and_logs_a_bad_message_in_one_line():
    with open("/dev/zero", "rb") as zero:  # an endless header line: it filled memory
        endless = lsp(zero)
    assert endless.returncode == 1 and endless.stderr.decode().splitlines() == [
        "error: stdin: a header line of more than 64 MiB; the client is not speaking the language server protocol"]
    huge = lsp(b"Content-Length: 99999999999999999999\r\n\r\n{}")  # was exit 3: OverflowError
    assert huge.returncode == 1 and huge.stderr.decode().splitlines() == [
        "error: stdin: a message of 99,999,999,999,999,999,999 bytes, more than 64 MiB; not read"]
    garbage = lsp(b"Content-Length: 10\r\n\r\n[[[[[[[[[[")  # pygls logged its traceback
    log = garbage.stderr.decode()
    assert garbage.returncode == 0 and "Traceback" not in log and log.splitlines() == [
        "contractlang lsp ERROR contractlang.lsp: a message that is not JSON: Expecting value: line 1 column 11 "
        "(char 10)"]


def test_twenty_thousand_errors_print_in_linear_time(tmp_path):
    """Each diagnostic split the whole source again to show its line: 20,000 errors in a 480 KB file took
    seven minutes to print."""
    many = tmp_path / "many.contract"
    many.write_text(WORKED.read_text().replace("on breach", "  prices { pizza: $10 }\n" * 20000 + "on breach"))
    proc = run_cli("check", many, timeout=120)
    assert proc.returncode == 1 and proc.stderr.count("error[E104]") == 20000 and "Traceback" not in proc.stderr


def test_a_contract_of_megabytes_is_refused_at_once(tmp_path):
    """The parser reads about 60 KB a second: a 5 MB contract kept every command busy for minutes."""
    big = tmp_path / "big.contract"
    big.write_text(WORKED.read_text().replace("on breach", "  assert total pay == $90\n" * 200000 + "on breach"))
    prose = tmp_path / "prose.txt"
    prose.write_text("The caterer delivers 1 pizza in week 2. " * 50000)
    start = time.monotonic()
    assert_each_fails_in_one_line(run_cli, [
        (("check", big), f"{big}: more than 1 MiB; not read"),
        (("fmt", big), f"{big}: more than 1 MiB; not read"),
        (("run", big, "--env", "1"), f"{big}: more than 1 MiB; not read"),
        (("negotiate", "--env", "1", "--candidates", big), f"{big}: more than 1 MiB; not read"),
        (("translate", prose), f"{prose}: more than 1 MiB; not read"),
    ])
    assert time.monotonic() - start < 60


def test_import_of_a_live_tree_is_one_line():
    """/proc changes while it is walked: a process directory that vanished was an exit 3 (FileNotFoundError)."""
    proc = run_cli("ctbench", "import", "/proc", "--out", "/nonexistent/runs.jsonl", timeout=300)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: ")
    assert "internal error" not in proc.stderr


def test_fmt_refuses_a_file_with_no_contract(tmp_path):
    """`check` says E005 for a file with no contract; fmt passed it, and --write made an empty file a blank line."""
    empty = tmp_path / "empty.contract"
    empty.write_text("")
    comment = tmp_path / "comment.contract"
    comment.write_text("// nothing but a comment\n")
    for args in (("fmt", empty, comment), ("fmt", "--check", empty, comment), ("fmt", "--write", empty, comment)):
        proc = run_cli(*args)
        assert proc.returncode == 1 and proc.stderr.count("error[E005]: the file holds no contract") == 2, args
    assert empty.read_text() == "" and comment.read_text() == "// nothing but a comment\n"


@pytest.mark.parametrize("args, message", [
    # urlparse raised ValueError on these: exit 3
    (["run", SWAP, "--board", "24", "--red", "llm:m", "--base-url", "http://[::1"], "--base-url must be an http://"),
    (["translate", SWAP, "--backend", "openai", "--model", "m", "--base-url", "http://x:99999"],
     "--base-url must be an http://"),
    (["translate", SWAP, "--backend", "openai", "--model", "m", "--base-url", "http://x:0"],
     "--base-url must be an http://"),
    # click's range check lets NaN and infinity through; a NaN deadline failed every call as a "connection error"
    (["run", SWAP, "--board", "24", "--red", "llm:m", "--llm-timeout", "nan"], "nan is not a number of seconds"),
    (["negotiate", "--env", "1", "--customer", "llm:m", "--llm-timeout", "inf"], "inf is not a number of seconds"),
    (["translate", SWAP, "--backend", "anthropic", "--timeout", "nan"], "nan is not a number of seconds"),
])
def test_unusable_urls_and_time_limits_are_usage_errors(args, message):
    for proc in (run_cli(*args), run_cli(*args, "--json")):
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert message in proc.stdout and json.loads(proc.stdout)["ok"] is False


def test_an_unknown_board_set_is_refused_wherever_it_is_named():
    """`--set bogus` (or `--set ''`) played or drew our boards, as if no set had been named."""
    assert_each_fails_in_one_line(run_cli, [
        (("run", SWAP, "--board", "24", "--set", "bogus"), "unknown board set 'bogus' (--set)"),
        (("ctbench", "show", "1", "--set", "bogus"), "unknown board set 'bogus' (--set); choose from ours, paper"),
        (("verify", SWAP, "--board", "24", "--set", ""), "unknown board set '' (--set)"),
    ])


def test_every_json_success_has_ok_true_at_the_top(tmp_path):
    """run, trace, verify, solve, ctbench boards and metrics printed their payload without it (metrics a bare list)."""
    record = run_cli("run", WORKED, "--env", "1", "--customer", "re", "--supplier", "re", "--json", cwd=tmp_path)
    (tmp_path / "runs.jsonl").write_text(record.stdout)
    outputs = [record, run_cli("run", SWAP, "--board", "24", "--json"),
               run_cli("trace", WORKED, "examples/traces/worked-example-1-late-breach.jsonl", "--json"),
               run_cli("verify", WORKED, "--json"), run_cli("ctbench", "boards", "--json"),
               run_cli("metrics", tmp_path / "runs.jsonl", "--json", cwd=tmp_path)]
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
