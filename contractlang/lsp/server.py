"""The protocol side of `contractlang lsp` (pygls over stdio): documents in, diagnostics and answers out.

Every feature is a pure function of `contractlang.lsp`; this module converts positions and types, debounces
edits and keeps parsing, checking and z3 off the event loop, so a slow file never stalls the editor.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, ValidationError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path, urlparse

from contractlang.diagnostics import ContractError, Diagnostic, Span, printable
from contractlang.files import MAX_CONTRACT_BYTES, FileError, read_capped
from contractlang.formatter import format_source
from contractlang.lsp.actions import fixes
from contractlang.lsp.analysis import (
    MAX_LIVE_CHARS,
    Analysis,
    Board,
    BoardColours,
    analyse,
    not_analysed,
)
from contractlang.lsp.completion import Completion, complete
from contractlang.lsp.hover import hover
from contractlang.lsp.stdio import Frames, Output
from contractlang.lsp.symbols import Symbol, document_symbols
from contractlang.lsp.tests import RUN_TEST_COMMAND, run_named_test, test_lenses
from contractlang.lsp.text import (
    ChangesRefused,
    Lines,
    Position,
    Range,
    apply_changes,
    span_range,
)
from contractlang.lsp.verification import Verify, verify_document
from contractlang.parser import parse
from contractlang.scenario.world import Worlds

logger = logging.getLogger("contractlang.lsp")

DEBOUNCE_S = 0.15
VERIFY_COMMAND = "contractlang.verify"
_COMPLETION_KINDS = {
    "keyword": types.CompletionItemKind.Keyword,
    "product": types.CompletionItemKind.Value,
    "party": types.CompletionItemKind.Variable,
    "game": types.CompletionItemKind.Module,
    "colour": types.CompletionItemKind.Color,
    "week": types.CompletionItemKind.Constant,
}


class Settings(BaseModel):
    """The editor's settings (initializationOptions or workspace/didChangeConfiguration's `contractlang`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    board: int | None = None
    env: int | None = None


class Document(NamedTuple):
    """An open document's text at the editor's version; `refused` says why the editor's last changes could not
    be applied (the text is then out of step with the editor's until it sends the whole text again)."""

    version: int | None
    text: str
    refused: str | None = None


class Snapshot(NamedTuple):
    document: Document
    lines: Lines
    analysis: Analysis


class ContractProtocol(LanguageServerProtocol):
    """pygls's protocol held to the parts of JSON-RPC and LSP it leaves out: a body that is not JSON is answered
    with ParseError, a request after `shutdown` with InvalidRequest, `exit` ends the server with 1 unless
    `shutdown` came first, and an error's answer is one line (pygls put the traceback in its data)."""

    _server: ContractServer

    def receive(self, body: bytes) -> None:
        """Handle one message's body."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested past the parser's depth
            logger.error("a message that is not JSON: %s", exc)
            self.answer_unknown(JsonRpcParseError(f"the message is not JSON: {exc}"))
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != self.VERSION:
            logger.error("a message that is not a JSON-RPC 2.0 object")
            self.answer_unknown(JsonRpcInvalidRequest("not a JSON-RPC 2.0 object"))
            return
        ident = data.get("id")
        if not _is_id(ident) or not isinstance(data.get("method", ""), str):
            logger.error("a message whose id is not a string or an integer, or whose method is not a string")
            error = JsonRpcInvalidRequest("the id must be a string or an integer, the method a string")
            if _is_id(ident) and ident is not None:
                self._send_response(ident, error=error.to_response_error())
            else:
                self.answer_unknown(error)
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:  # logged by pygls
            if "method" in data and ident is not None:
                self._send_response(ident, error=exc.to_response_error())
            return
        self.handle_message(message)

    def answer_unknown(self, error: JsonRpcException) -> None:
        """An error answering a message whose id could not be read: `"id": null`, which JSON-RPC requires and
        lsprotocol's converter would leave out."""
        self._send_data({"jsonrpc": self.VERSION, "id": None, "error": {"code": error.code, "message": error.message}})

    def handle_message(self, message) -> None:
        if self._shutdown and isinstance(message, RPCRequest) and message.method != types.EXIT:
            self._send_response(
                message.id,
                error=JsonRpcInvalidRequest(
                    f"the server is shutting down; {message.method} is not answered"
                ).to_response_error(),
            )
            return
        super().handle_message(message)

    def _send_response(self, msg_id, result=None, error: types.ResponseError | None = None) -> None:
        """Every answer passes here: an error keeps its code and its message's first line, never pygls's data."""
        if error is not None:
            error = types.ResponseError(code=error.code, message=printable(error.message.split("\n")[0]))
        super()._send_response(msg_id, result, error)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args) -> None:
        self._server.end(0 if self._shutdown else 1)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args) -> None:
        """Cancel the requests in flight (pygls's own loop over them failed when a cancelled future's callback
        removed its entry) and refuse every later request."""
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

    # The server keeps the documents itself (ContractServer.documents): pygls's workspace would hold a second
    # copy and apply each edit to the whole text.
    def _handled(self, method: str, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._handled(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._handled(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._handled(types.TEXT_DOCUMENT_DID_CLOSE, params)


class ContractServer(LanguageServer):
    def __init__(
        self, verify: Verify | None, board_colours: BoardColours | None, debounce: float, worlds: Worlds | None = None
    ):
        super().__init__("contractlang", "0.1.0", protocol_cls=ContractProtocol)
        self.verify_contract = verify
        self.board_colours = board_colours
        self.worlds = worlds  # the games' engines a test's utilities are played on
        self.debounce = debounce
        self.settings = Settings()
        self.board: Board | None = None
        self.documents: dict[str, Document] = {}
        self.snapshots: dict[str, Snapshot] = {}
        self.verified: dict[str, tuple[Diagnostic, ...]] = {}
        self.generation: dict[str, int] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.refreshing: dict[str, asyncio.Task] = {}
        self.ended: asyncio.Future[int] | None = None
        # one worker for parsing and checking, one for z3: a long verification never delays diagnostics
        self.checking = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contractlang-check")
        self.proving = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contractlang-verify")

    async def run(self, frames: Frames, stdout: int) -> int:
        """Serve the messages of `frames`, answering on file descriptor `stdout`, until `exit` (its exit code),
        the end of the input (0), or a stream that breaks (FileError, after a ParseError answer if stdin broke).

        A daemon thread reads stdin, one message ahead of the event loop: nothing waits on it at exit."""
        loop = asyncio.get_running_loop()
        self.ended = loop.create_future()
        self.protocol.set_writer(Output(stdout, self.end))
        taken = threading.Semaphore(0)

        def read() -> None:
            while True:
                try:
                    item: bytes | FileError | None = frames.next()
                except FileError as exc:
                    item = exc
                except OSError as exc:
                    item = FileError(f"stdin: cannot read ({exc.strerror or exc})")
                try:
                    loop.call_soon_threadsafe(self.receive, item, taken)
                except RuntimeError:  # the loop has closed: the server is done
                    return
                if not isinstance(item, bytes):
                    return
                taken.acquire()

        threading.Thread(target=read, name="contractlang-stdin", daemon=True).start()
        try:
            return await self.ended
        finally:
            for task in self.refreshing.values():
                task.cancel()
            self.checking.shutdown(wait=False, cancel_futures=True)
            self.proving.shutdown(wait=False, cancel_futures=True)

    def receive(self, item: bytes | FileError | None, taken: threading.Semaphore) -> None:
        if self.ended is None or self.ended.done():  # stopped (stdout broke): nothing more is read or answered
            return
        if isinstance(item, bytes):
            try:
                self.protocol.receive(item)
            except Exception:  # a message pygls cannot route: the client's error, the next message may be fine
                logger.exception("a message could not be handled")
            taken.release()
        elif item is None:
            self.end(0)
        else:
            self.protocol.answer_unknown(JsonRpcParseError(str(item)))
            self.end(item)

    def end(self, outcome: int | FileError) -> None:
        """Stop serving with an exit code, or with the stream error to report (the first outcome wins)."""
        if self.ended is None or self.ended.done():
            return
        if isinstance(outcome, FileError):
            self.ended.set_exception(outcome)
        else:
            self.ended.set_result(outcome)

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding  # PositionEncodingKind, whose str() is its Python name
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def configure(self, options) -> None:
        """Take new settings; a bad value is reported to the user and leaves the old ones in place."""
        try:
            settings = Settings.model_validate(options or {})
            board = None
            if settings.board is not None:
                if self.board_colours is None:
                    raise ValueError("this server has no CT-Bench boards")
                board = Board(id=settings.board, colours=self.board_colours(settings.board))
        except (ValidationError, ValueError, LookupError) as exc:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=f"contractlang: bad settings ({exc})")
            )
            return
        self.settings, self.board = settings, board
        self.snapshots.clear()
        for uri in self.documents:
            self.schedule(uri, 0)

    def document(self, uri: str) -> Document:
        """The open document, else the file the URI names, if it is a regular file of at most MAX_CONTRACT_BYTES
        (a FIFO would block the server, a device fill its memory); otherwise the request's params are invalid."""
        if (doc := self.documents.get(uri)) is not None:
            return doc
        path = Path(to_fs_path(uri) or uri)
        try:
            if urlparse(uri)[0] != "file":
                raise FileError(f"{printable(uri)}: not open in the editor, and not a file")
            try:
                regular = stat.S_ISREG(path.stat().st_mode)
            except OSError as exc:
                raise FileError(f"{path}: not open in the editor, and cannot be read ({exc.strerror or exc})") from None
            if not regular:
                raise FileError(f"{path}: not open in the editor, and not a regular file; not read")
            data = read_capped(path, MAX_CONTRACT_BYTES)
            try:
                return Document(version=None, text=data.decode("utf-8"))
            except UnicodeDecodeError:
                raise FileError(f"{path}: not open in the editor, and not UTF-8 text") from None
        except FileError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    async def snapshot(self, uri: str) -> Snapshot:
        """The analysis of the document's current text, made now (off the event loop) if it is out of date; kept
        only while the document is open and unchanged."""
        doc = self.document(uri)
        snap = self.snapshots.get(uri)
        if snap is not None and snap.document is doc:
            return snap
        if uri not in self.documents:
            return await self._analysed(uri, doc, None)
        async with self.locks.setdefault(uri, asyncio.Lock()):
            snap = self.snapshots.get(uri)
            if snap is None or snap.document is not doc:
                snap = await self._analysed(uri, doc, snap.analysis if snap else None)
                if self.documents.get(uri) is doc:
                    self.snapshots[uri] = snap
            return snap

    async def _analysed(self, uri: str, doc: Document, previous: Analysis | None) -> Snapshot:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.checking, _snapshot, doc, _path(uri), self.board, previous)

    def schedule(self, uri: str, delay: float) -> None:
        """Re-check after `delay`; an edit before then cancels this check (queued or waiting) for its own."""
        self.generation[uri] = self.generation.get(uri, 0) + 1
        self.verified.pop(uri, None)
        if (earlier := self.refreshing.pop(uri, None)) is not None:
            earlier.cancel()
        task = asyncio.ensure_future(self._refresh(uri, delay))
        self.refreshing[uri] = task
        task.add_done_callback(lambda done: self.refreshing.pop(uri) if self.refreshing.get(uri) is done else None)

    async def _refresh(self, uri: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            self.publish(uri, await self.snapshot(uri))
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("checking %s failed", uri)

    def forget(self, uri: str) -> None:
        """Drop everything kept for a closed document: its text, analysis, verdicts and pending check."""
        self.documents.pop(uri, None)
        self.snapshots.pop(uri, None)
        self.verified.pop(uri, None)
        self.locks.pop(uri, None)
        self.generation.pop(uri, None)
        if (pending := self.refreshing.pop(uri, None)) is not None:
            pending.cancel()

    def publish(self, uri: str, snap: Snapshot) -> None:
        found = snap.analysis.diagnostics + self.verified.get(uri, ())
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=snap.document.version, diagnostics=[self.lsp_diagnostic(d, snap.lines) for d in found]
            )
        )

    def position(self, lines: Lines, pos: types.Position) -> Position:
        return lines.from_units(pos.line, pos.character, self.encoding)

    def lsp_position(self, lines: Lines, pos: Position) -> types.Position:
        return types.Position(line=pos.line, character=lines.to_units(pos, self.encoding))

    def lsp_range(self, lines: Lines, rng: Range) -> types.Range:
        return types.Range(start=self.lsp_position(lines, rng.start), end=self.lsp_position(lines, rng.end))

    def lsp_diagnostic(self, d: Diagnostic, lines: Lines) -> types.Diagnostic:
        severity = types.DiagnosticSeverity.Error if d.severity == "error" else types.DiagnosticSeverity.Warning
        return types.Diagnostic(
            range=self.lsp_range(lines, span_range(d.span)),
            severity=severity,
            code=d.code,
            source="contractlang",
            message=d.message + (f"\nhint: {d.hint}" if d.hint else ""),
        )

    def lsp_symbol(self, s: Symbol, lines: Lines) -> types.DocumentSymbol:
        kind = {"contract": types.SymbolKind.Module, "test": types.SymbolKind.Method}.get(
            s.kind, types.SymbolKind.Property
        )
        return types.DocumentSymbol(
            name=s.name,
            detail=s.detail,
            kind=kind,
            range=self.lsp_range(lines, s.range),
            selection_range=self.lsp_range(lines, s.selection),
            children=[self.lsp_symbol(c, lines) for c in s.children],
        )


def _is_id(ident) -> bool:
    """A JSON-RPC id the server can answer to: absent (a notification), a string or an integer."""
    return ident is None or isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def _snapshot(doc: Document, path: str, board: Board | None, previous: Analysis | None) -> Snapshot:
    """The document's analysis and line table (on the checking worker: both read the whole text)."""
    if doc.refused is not None:
        analysis = not_analysed(
            doc.text,
            path,
            board,
            Diagnostic(
                code="L002",
                severity="warning",
                file=path,
                span=Span.point(1, 1),
                message=f"the editor's last changes to this file were not applied: {doc.refused}",
                hint="close and reopen the file (or undo and redo the change in smaller steps)",
            ),
        )
    else:
        analysis = analyse(doc.text, path, board, previous)
    return Snapshot(document=doc, lines=Lines(doc.text), analysis=analysis)


def _completion_item(c: Completion) -> types.CompletionItem:
    return types.CompletionItem(label=c.label, kind=_COMPLETION_KINDS[c.kind], detail=c.detail or None)


def _formatted(source: str, path: str) -> str:
    """The formatter's text for the document; ValueError says why there is none."""
    if len(source) > MAX_LIVE_CHARS:
        raise ValueError(f"the file is over {MAX_LIVE_CHARS:,} characters; run `contractlang fmt` on it")
    try:
        return format_source(parse(source, path))
    except ContractError as err:
        first = err.diagnostics[0]
        raise ValueError(f"fix the syntax error first (line {first.span.line}: {first.message})") from None


def initialize(ls: ContractServer, params: types.InitializeParams) -> None:
    ls.configure(params.initialization_options)


def did_change_configuration(ls: ContractServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    ls.configure(settings.get("contractlang", settings) if isinstance(settings, dict) else None)


def did_open(ls: ContractServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    ls.documents[item.uri] = Document(version=item.version, text=item.text)
    ls.schedule(item.uri, 0)


def did_change(ls: ContractServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = ls.documents.get(uri)
    if doc is None:
        logger.warning("a change to %s, which is not open: ignored", uri)
        return
    changes = [
        (
            None
            if isinstance(c, types.TextDocumentContentChangeWholeDocument)
            else (c.range.start.line, c.range.start.character, c.range.end.line, c.range.end.character),
            c.text,
        )
        for c in params.content_changes
    ]
    version = params.text_document.version
    if doc.refused is not None:  # out of step with the editor until it sends the whole text again
        whole = [k for k, (where, _) in enumerate(changes) if where is None]
        changes = changes[whole[-1] :] if whole else []
    try:
        doc = Document(
            version=version,
            text=apply_changes(doc.text, changes, ls.encoding),
            refused=doc.refused if doc.refused is not None and not changes else None,
        )
    except ChangesRefused as exc:
        doc = Document(version=version, text=doc.text, refused=str(exc))
    ls.documents[uri] = doc
    ls.schedule(uri, ls.debounce)


def did_close(ls: ContractServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.forget(uri)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


async def on_hover(ls: ContractServer, params: types.HoverParams) -> types.Hover | None:
    snap = await ls.snapshot(params.text_document.uri)
    found = hover(snap.analysis, ls.position(snap.lines, params.position))
    if found is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found.markdown),
        range=ls.lsp_range(snap.lines, found.range),
    )


def _completions(source: str, line: int, units: int, encoding: str) -> tuple[Completion, ...]:
    if len(source) > MAX_LIVE_CHARS:  # before the line table: a document too large to check is not read
        return ()
    return complete(source, Lines(source).from_units(line, units, encoding))


async def on_completion(ls: ContractServer, params: types.CompletionParams) -> types.CompletionList:
    doc = ls.document(params.text_document.uri)
    loop = asyncio.get_running_loop()
    found = (
        ()
        if doc.refused
        else await loop.run_in_executor(
            ls.checking, _completions, doc.text, params.position.line, params.position.character, ls.encoding
        )
    )
    return types.CompletionList(is_incomplete=False, items=[_completion_item(c) for c in found])


async def on_formatting(ls: ContractServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
    uri = params.text_document.uri
    doc = ls.document(uri)
    source = doc.text
    loop = asyncio.get_running_loop()
    try:
        if doc.refused is not None:
            raise ValueError("the file is out of step with the editor; close and reopen it")
        text = await loop.run_in_executor(ls.checking, _formatted, source, _path(uri))
    except ValueError as exc:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"contractlang: {exc}"))
        return None
    if text == source:
        return []
    lines = Lines(source)
    whole = Range(start=Position(line=0, character=0), end=lines.end())
    return [types.TextEdit(range=ls.lsp_range(lines, whole), new_text=text)]


async def on_symbols(ls: ContractServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    snap = await ls.snapshot(params.text_document.uri)
    return [ls.lsp_symbol(s, snap.lines) for s in document_symbols(snap.analysis)]


async def on_code_action(ls: ContractServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    snap = await ls.snapshot(uri)
    start, end = ls.position(snap.lines, params.range.start), ls.position(snap.lines, params.range.end)
    wanted = Range(start=start, end=end)
    touching = tuple(d for d in snap.analysis.diagnostics if _overlaps(d, wanted))
    return [
        types.CodeAction(
            title=f.title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[ls.lsp_diagnostic(f.diagnostic, snap.lines)],
            edit=types.WorkspaceEdit(
                changes={
                    uri: [types.TextEdit(range=ls.lsp_range(snap.lines, e.range), new_text=e.text) for e in f.edits]
                }
            ),
        )
        for f in fixes(snap.analysis, touching)
    ]


def _overlaps(d: Diagnostic, rng: Range) -> bool:
    first = (d.span.line - 1, d.span.column - 1)
    last = (d.span.end_line - 1, d.span.end_column - 1)
    return first <= (rng.end.line, rng.end.character) and (rng.start.line, rng.start.character) <= last


async def verify_command(ls: ContractServer, *arguments) -> list[dict]:
    """`contractlang.verify [uri, {env, board, line}]`: z3 on the document; refutations published as warnings."""
    if ls.verify_contract is None:
        raise ValueError("this server was started without the verifier")
    if not arguments or not isinstance(arguments[0], str):
        raise ValueError("contractlang.verify takes the document's URI, then optionally {env, board, line}")
    uri = arguments[0]
    options = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], dict) else {}
    settings = Settings.model_validate({**ls.settings.model_dump(), **options})
    line = options.get("line")
    generation = ls.generation.get(uri)
    snap = await ls.snapshot(uri)
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(
        ls.proving,
        verify_document,
        snap.analysis,
        ls.verify_contract,
        settings.env,
        settings.board,
        line if isinstance(line, int) else None,
    )
    if ls.generation.get(uri) == generation:
        ls.verified[uri] = result.diagnostics
        ls.publish(uri, snap)
        if uri not in ls.documents:  # nothing is kept for a file that is not open
            ls.verified.pop(uri)
    return [s.model_dump() for s in result.summaries]


async def on_code_lens(ls: ContractServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    snap = await ls.snapshot(uri)
    return [
        types.CodeLens(
            range=ls.lsp_range(snap.lines, lens.range),
            command=types.Command(title=lens.title, command=RUN_TEST_COMMAND, arguments=[uri, lens.test]),
        )
        for lens in test_lenses(snap.analysis)
    ]


async def run_test_command(ls: ContractServer, *arguments) -> dict:
    """`contractlang.runTest [uri, name]`: run one scenario test of the document; its outcome, also shown."""
    if len(arguments) < 2 or not all(isinstance(a, str) for a in arguments[:2]):
        raise ValueError("contractlang.runTest takes the document's URI and the test's name")
    uri, name = arguments[0], arguments[1]
    snap = await ls.snapshot(uri)
    loop = asyncio.get_running_loop()
    outcome = await loop.run_in_executor(ls.checking, run_named_test, snap.analysis, _path(uri), name, ls.worlds)
    summary = f"test {name!r}: " + ("passed" if outcome["passed"] else "FAILED\n" + "\n".join(outcome["failures"]))
    kind = types.MessageType.Info if outcome["passed"] else types.MessageType.Error
    ls.window_show_message(types.ShowMessageParams(type=kind, message=summary))
    return outcome


def build_server(
    verify: Verify | None = None,
    board_colours: BoardColours | None = None,
    debounce: float = DEBOUNCE_S,
    worlds: Worlds | None = None,
) -> ContractServer:
    ls = ContractServer(verify, board_colours, debounce, worlds)
    ls.feature(types.INITIALIZE)(initialize)
    ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    ls.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    ls.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    ls.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[" ", ":", "("]))(
        on_completion
    )
    ls.feature(types.TEXT_DOCUMENT_FORMATTING)(on_formatting)
    ls.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(on_symbols)
    ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )(on_code_action)
    ls.command(VERIFY_COMMAND)(verify_command)
    ls.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(on_code_lens)
    ls.command(RUN_TEST_COMMAND)(run_test_command)
    return ls


class OneLineLog(logging.Formatter):
    """A log record on one line: pygls logs a message it cannot handle (not JSON, an unknown shape, a position
    out of range) with its traceback, as the record's exception or inside its text (`Unable to deserialize
    message\n<traceback>`); that is the client's error, not ours. The line keeps the text's first line and the
    exception's type and message; CONTRACTLANG_DEBUG=1 keeps the traceback, as on the CLI."""

    def formatException(self, ei) -> str:
        return f"{ei[0].__name__}: {printable(str(ei[1]))}"  # printable: no newline either

    def format(self, record: logging.LogRecord) -> str:
        if os.environ.get("CONTRACTLANG_DEBUG") == "1":
            return logging.Formatter(self._fmt).format(record)
        first = logging.makeLogRecord({**record.__dict__, "msg": record.getMessage().split("\n")[0], "args": None})
        return super().format(first).replace("\n", ": ")


def serve(
    verify: Verify | None = None,
    board_colours: BoardColours | None = None,
    debounce: float = DEBOUNCE_S,
    worlds: Worlds | None = None,
) -> int:
    """Run the server on stdin/stdout until the editor says `exit` or closes stdin; its exit code (0 after
    `shutdown`, else 1). A broken stream is a FileError. Logs go to stderr, one line each. A test's utilities
    are played on the game engines in `worlds`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineLog("contractlang lsp %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    server = build_server(verify, board_colours, debounce, worlds)
    return asyncio.run(server.run(Frames(sys.stdin.fileno()), sys.stdout.fileno()))
