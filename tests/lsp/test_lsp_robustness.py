"""`contractlang lsp` under attack (issues #48 and #49), through the real server process: completion on huge
words, documents of megabytes, 100,000 edits in one notification, documents opened and closed by the hundred,
broken framing, unopened FIFOs and devices, and the protocol's rules for shutdown, exit and errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from contractlang.files import MAX_CONTRACT_BYTES
from contractlang.lsp.analysis import MAX_LIVE_CHARS
from contractlang.lsp.text import MAX_CHANGE_WORK
from tests.lsp.lsp_client import INITIALIZE, ROOT, frame, run_raw, session, unframe, uri_of

pytestmark = pytest.mark.e2e  # the language server in a real process

EXAMPLE = ROOT / "examples" / "catering-env5-a.contract"


HANG_S = 60  # a guard against a hang only, far above any answer on a loaded machine; the timings are in bench/lsp.py


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 240))


def guarded(awaitable):
    """The awaitable, failing the test only if it hangs (HANG_S): the regressions these tests pin took minutes."""
    return asyncio.wait_for(awaitable, HANG_S)


def completion(s, uri: str, line: int, character: int):
    return s.client.text_document_completion_async(
        types.CompletionParams(text_document=s.doc(uri), position=types.Position(line=line, character=character))
    )


def hover(s, uri: str, line: int = 0, character: int = 0):
    return s.client.text_document_hover_async(
        types.HoverParams(text_document=s.doc(uri), position=types.Position(line=line, character=character))
    )


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status_file:
        status = status_file.read()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def test_completion_after_a_word_of_600000_characters_answers():
    """The word before the cursor was found by a regex search, quadratic in the run of word characters: a 40k
    word froze the server 7.8 s, 150k over 30 s, so 600k would take over 8 minutes."""
    head = 'contract "x" {\n  game contractsim.hotel\n  prices { '
    word = "a" * 600_000

    async def go():
        async with session() as s:
            uri = "file:///tmp/long-word.contract"
            s.open(uri, head + word + " ")
            await s.diagnostics(uri, 1)
            for character in (len("  prices { ") + len(word), len("  prices { ") + len(word) + 1):
                found = await guarded(completion(s, uri, 2, character))
                assert not found.items
            s.replace(uri, head + "king", 2)  # short words still complete
            found = await completion(s, uri, 2, len("  prices { king"))
            assert [i.label for i in found.items] == ["conference_room", "king_room", "single_room"]

    run(go())


def test_a_document_of_5_mb_leaves_hover_completion_and_shutdown_answering():
    huge = 'contract "x" {\n  game contractsim.hotel\n  prices { ' + "a" * 5_000_000

    async def go():
        async with session() as s:
            uri = "file:///tmp/five-megabytes.contract"
            s.open(uri, huge)
            s.open(uri_of(EXAMPLE), EXAMPLE.read_text())
            (warning,) = await s.diagnostics(uri, 1)
            assert warning.code == "L001" and f"live checking stops at {MAX_LIVE_CHARS:,}" in warning.message
            assert not (await guarded(completion(s, uri, 2, 5_000_000))).items
            assert await guarded(hover(s, uri, 2, 100)) is None
            assert "Price $10 each" in (await guarded(hover(s, uri_of(EXAMPLE), 5, 13))).contents.value
        # leaving the session shuts the server down and waits for it to exit, within run()'s guard

    run(go())


def test_a_notification_of_100000_edits_is_applied_promptly():
    """pygls applied each edit to the whole text, line by line in Python: no answer for 300 s and more."""
    text = EXAMPLE.read_text()
    lines = text.split("\n")
    week = next(k for k, line in enumerate(lines) if "week 2:" in line)
    column = lines[week].index("week 2:") + 5
    edits = []
    for k in range(50_000):  # each pair types a letter on some line and takes it away again
        line = k % len(lines)
        at = (line, k % (len(lines[line]) + 1))
        edits += [(at, at, "x"), (at, (at[0], at[1] + 1), "")]
    edits.append(((week, column), (week, column + 1), "3"))  # then week 2 becomes week 3

    async def go():
        async with session() as s:
            uri = uri_of(EXAMPLE)
            s.open(uri, text)
            assert await s.diagnostics(uri, 1) == []
            s.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(
                                start=types.Position(line=a[0], character=a[1]),
                                end=types.Position(line=b[0], character=b[1]),
                            ),
                            text=t,
                        )
                        for a, b, t in edits
                    ],
                )
            )
            assert (await guarded(hover(s, uri, 5, 13))).contents.value.startswith("**pizza**")
            assert [d.code for d in await guarded(s.diagnostics(uri, 2))] == ["E402", "E203"]  # the editor's text

    run(go())


def test_edits_that_would_take_minutes_are_refused_and_the_whole_text_resynchronises():
    """Each edit costs the length of the line it touches: 100,000 edits deep in one long line would take minutes,
    so a notification that touches over MAX_CHANGE_WORK characters is not applied, and says so."""
    line = "é" * 200_000

    async def go():
        async with session() as s:
            uri = "file:///tmp/long-line.contract"
            s.open(uri, line)
            await s.diagnostics(uri, 1)
            s.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(
                                start=types.Position(line=0, character=k), end=types.Position(line=0, character=k)
                            ),
                            text="x",
                        )
                        for k in range(1_000)
                    ],
                )
            )
            (refused,) = await guarded(s.diagnostics(uri, 2))
            assert refused.code == "L002" and f"over {MAX_CHANGE_WORK:,}" in refused.message
            assert (
                await s.client.text_document_formatting_async(
                    types.DocumentFormattingParams(
                        text_document=s.doc(uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)
                    )
                )
                is None
            )
            assert "out of step with the editor" in s.messages[-1].message
            s.edit(uri, 3, (0, 0), (0, 0), "x")  # still out of step: only the whole text brings it back
            assert [d.code for d in await s.diagnostics(uri, 3)] == ["L002"]
            s.replace(uri, EXAMPLE.read_text(), 4)
            assert await s.diagnostics(uri, 4) == []

    run(go())


def test_closed_documents_are_released():
    """Documents (and their analyses, queued or done) were kept after didClose: opening and closing 1,500
    documents of 200 KB grew the server from 163 to 740 MB. Here 150 of them, after 50 that warm it up (bench/lsp.py
    runs all 1,500)."""
    body = EXAMPLE.read_text()
    text = "\n".join([body.replace('"catering-env5-a"', f'"c{k}"') for k in range(200_000 // len(body))])
    kept = "file:///tmp/kept.contract"

    async def open_and_close(s, uris) -> None:
        for uri in uris:
            s.open(uri, text)
            s.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=s.doc(uri)))
        # answered on the checking worker once the one analysis that had started is done (the rest are cancelled)
        await completion(s, kept, 0, 0)

    async def go():
        async with session() as s:
            pid = s.client._server.pid  # pygls keeps the process private
            s.open(kept, body)
            await open_and_close(s, [f"file:///tmp/warm-{k}.contract" for k in range(50)])
            before = rss_mb(pid)
            await open_and_close(s, [f"file:///tmp/doc-{k}.contract" for k in range(150)])
            grown = rss_mb(pid) - before
            with pytest.raises(JsonRpcException, match="not open in the editor"):
                await hover(s, "file:///tmp/doc-0.contract")
            return grown

    grown = run(go())
    assert grown < 10, f"RSS grew {grown:.0f} MB for 150 documents of 200 KB opened and closed (30 MB of text)"


@pytest.mark.parametrize(
    "stream, said",
    [
        (b"Content-Lenght: 2\r\n\r\n{}", "stdin: a message without a Content-Length header (is its name misspelt?)"),
        (
            b"Content-Length: 2\n\n{}",
            "stdin: the header line 'Content-Length: 2' ends in a bare LF; the protocol ends each header line in CRLF",
        ),
        (b"Content-Length: ten\r\n\r\n{}", "stdin: Content-Length 'ten' is not a number of bytes"),
        (b"Content-Length: -5\r\n\r\n{}", "stdin: Content-Length '-5' is not a number of bytes"),
        (b'Content-Length: 500\r\n\r\n{"jsonrpc": ', "stdin: the input ended 12 bytes into a message of 500 bytes"),
        (b"Content-Length: 5\r\nContent-Length: 5\r\n\r\n{}{}{", "stdin: a message with two Content-Length headers"),
        (b"Content-Length: 2\r\n", "stdin: the input ended inside a message's header"),
    ],
)
def test_a_broken_frame_is_answered_with_a_parse_error_and_ends_the_server_in_one_line(stream, said):
    """Each of these left the server silent forever (pygls skips lines it cannot read and waits for more)."""
    hello = b"".join(frame(m) for m in INITIALIZE)
    proc = run_raw(hello + stream, timeout=30)
    assert proc.returncode == 1 and proc.stderr.decode().splitlines() == [f"error: {said}"]
    initialized, answer = unframe(proc.stdout)
    assert initialized["id"] == 0 and answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": said},
    }


def test_a_body_that_is_not_json_or_not_json_rpc_is_answered_and_the_server_goes_on():
    deep = b"[" * 100_000 + b"]" * 100_000
    stream = b"".join(frame(m) for m in INITIALIZE)
    for body in (b"{not json", deep, b"\xff\xfe", b"[1, 2]", b'{"jsonrpc": "1.0", "id": 5, "method": "x"}'):
        stream += b"Content-Length: %d\r\n\r\n" % len(body) + body
    # an id or method of the wrong type was an internal error (pygls: TypeError, unhashable type: 'list')
    for message in (
        {"jsonrpc": "2.0", "id": 6, "method": 5},
        {"jsonrpc": "2.0", "id": [1], "method": "shutdown"},
        {"jsonrpc": "2.0", "id": True, "method": "shutdown"},
    ):
        stream += frame(message)
    stream += frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"})
    proc = run_raw(stream, timeout=30)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.decode()
    answers = unframe(proc.stdout)
    assert [(a.get("id"), a.get("error", {}).get("code")) for a in answers[1:]] == [
        (None, -32700),
        (None, -32700),
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (6, -32600),
        (None, -32600),
        (None, -32600),
        (9, None),
    ]


def test_requests_about_unopened_files_read_only_small_regular_files(tmp_path):
    """An unopened FIFO blocked the server for good; /dev/zero grew it to 3.7 GB."""
    fifo = tmp_path / "pipe.contract"
    os.mkfifo(fifo)
    big = tmp_path / "big.contract"
    big.write_bytes(b"// x\n" * (MAX_CONTRACT_BYTES // 5 + 1))
    closed = tmp_path / "closed.contract"
    closed.write_text(EXAMPLE.read_text())

    async def go():
        async with session() as s:
            pid = s.client._server.pid
            before = rss_mb(pid)
            for path, why in (
                (fifo, "not a regular file"),
                ("/dev/zero", "not a regular file"),
                (tmp_path, "not a regular file"),
                (big, "more than 1 MiB"),
            ):
                for request in (
                    hover(s, path.as_uri() if hasattr(path, "as_uri") else f"file://{path}"),
                    completion(s, f"file://{path}", 0, 0),
                ):
                    with pytest.raises(JsonRpcException, match=why):
                        await asyncio.wait_for(request, 10)
            with pytest.raises(JsonRpcException, match="not open in the editor, and not a file"):
                await hover(s, "untitled:Untitled-1")
            assert "Price $10 each" in (await hover(s, closed.as_uri(), 5, 13)).contents.value
            assert rss_mb(pid) - before < 50

    run(go())


def test_shutdown_then_requests_are_invalid_and_exit_codes_follow_the_protocol():
    hello = b"".join(frame(m) for m in INITIALIZE)
    hover_request = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///tmp/x.contract"}, "position": {"line": 0, "character": 0}},
    }
    shut = run_raw(
        hello
        + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + frame(hover_request)
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    assert shut.returncode == 0 and shut.stderr == b""
    assert unframe(shut.stdout)[1:] == [
        {"jsonrpc": "2.0", "id": 2, "result": None},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32600, "message": "the server is shutting down; textDocument/hover is not answered"},
        },
    ]
    # a request still in flight at shutdown is cancelled (pygls's loop over them raised RuntimeError: dictionary
    # changed size during iteration)
    verify = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "workspace/executeCommand",
        "params": {"command": "contractlang.verify", "arguments": [uri_of(EXAMPLE)]},
    }
    busy = run_raw(
        hello
        + frame(verify)
        + frame({"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    assert busy.returncode == 0 and busy.stderr == b""
    assert [(a["id"], a.get("error", {}).get("code")) for a in unframe(busy.stdout)[1:]] == [(4, -32800), (5, None)]
    rude = run_raw(hello + frame({"jsonrpc": "2.0", "method": "exit"}))
    assert rude.returncode == 1 and rude.stderr == b""  # exit without shutdown: 1, as the protocol says


def test_an_internal_error_is_answered_in_one_line_without_a_traceback():
    """pygls put the traceback in the error's data."""

    async def go():
        async with session() as s:
            with pytest.raises(JsonRpcException) as failed:
                await s.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="contractlang.verify", arguments=[{"not": "a uri"}])
                )
            with pytest.raises(JsonRpcException) as unreadable:
                await s.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(
                        command="contractlang.verify", arguments=["file:///nonexistent/x.contract"]
                    )
                )
            return failed.value, unreadable.value, s

    error, unreadable, s = run(go())
    assert (error.code, error.message, error.data) == (
        -32603,
        "ValueError: contractlang.verify takes the document's URI, then optionally {env, board, line}",
        None,
    )
    assert (unreadable.code, unreadable.message, unreadable.data) == (
        -32602,
        "/nonexistent/x.contract: not open in the editor, and cannot be read (No such file or directory)",
        None,
    )
    assert "Traceback" not in s.log


def test_a_closed_stdout_ends_the_server_at_once_in_one_line():
    """The server logged one error per reply for 20 s when the editor closed its end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "contractlang", "lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    proc.stdout.close()
    try:
        proc.stdin.write(b"".join(frame(m) for m in INITIALIZE))
        for k in range(50):
            proc.stdin.write(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": k + 1,
                        "method": "textDocument/hover",
                        "params": {
                            "textDocument": {"uri": "file:///tmp/x.contract"},
                            "position": {"line": 0, "character": 0},
                        },
                    }
                )
            )
        proc.stdin.flush()
    except BrokenPipeError:  # it may already have gone
        pass
    code = proc.wait(timeout=HANG_S)  # stdin stays open: nothing but the broken stdout ends it
    stderr = proc.stderr.read().decode()
    proc.stdin.close()
    proc.stderr.close()
    assert code == 1 and stderr.splitlines() == ["error: stdout: cannot write to the editor (Broken pipe); stopping"]


def test_the_limits_in_the_editors_page_are_the_code_s():
    page = (ROOT / "docs" / "how-to" / "editors.md").read_text()
    for figure in (f"{MAX_LIVE_CHARS:,}", f"{MAX_CHANGE_WORK:,}", "1 MiB", "64 MiB"):
        assert figure in page, figure


def whole_session(*messages: dict) -> subprocess.CompletedProcess:
    """A whole editor session around `messages`, in one stream: initialize, the messages, shutdown, exit."""
    end = ({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"})
    return run_raw(b"".join(frame(m) for m in (*INITIALIZE, *messages, *end)))


def test_a_clean_language_server_session_exits_0():
    """pygls closes stdout on `exit`; the CLI's flush after the command then failed: exit 3 after every session."""
    clean = whole_session()
    assert clean.returncode == 0 and clean.stderr == b"" and b'"id": 2' in clean.stdout


def test_a_message_the_server_cannot_read_is_logged_without_a_traceback():
    """pygls writes the traceback into the text of `Unable to deserialize message`."""
    nowhere = whole_session(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": "file:///nonexistent"}, "position": {"line": 10**12, "character": -1}},
        }
    )
    log = nowhere.stderr.decode()
    assert (
        nowhere.returncode == 0
        and "Traceback" not in log
        and log.splitlines()[0] == "contractlang lsp ERROR pygls.protocol.json_rpc: Unable to deserialize message"
    )


def test_the_language_server_caps_its_stream_and_logs_a_bad_message_in_one_line():
    with open("/dev/zero", "rb") as zero:  # an endless header line: it filled memory
        endless = run_raw(zero)
    assert endless.returncode == 1 and endless.stderr.decode().splitlines() == [
        "error: stdin: a header line of more than 64 MiB; the client is not speaking the language server protocol"
    ]
    huge = run_raw(b"Content-Length: 99999999999999999999\r\n\r\n{}")  # was exit 3: OverflowError
    assert huge.returncode == 1 and huge.stderr.decode().splitlines() == [
        "error: stdin: a message of 99,999,999,999,999,999,999 bytes, more than 64 MiB; not read"
    ]
    garbage = run_raw(b"Content-Length: 10\r\n\r\n[[[[[[[[[[")  # pygls logged its traceback
    log = garbage.stderr.decode()
    assert (
        garbage.returncode == 0
        and "Traceback" not in log
        and log.splitlines()
        == [
            "contractlang lsp ERROR contractlang.lsp: a message that is not JSON: Expecting value: line 1 column 11 "
            "(char 10)"
        ]
    )
