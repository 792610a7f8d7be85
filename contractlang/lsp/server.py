"""The protocol side of `contractlang lsp` (pygls over stdio): documents in, diagnostics and answers out.

Every feature is a pure function of `contractlang.lsp`; this module converts positions and types, debounces
edits and keeps parsing, checking and z3 off the event loop, so a slow file never stalls the editor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, ValidationError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from contractlang.diagnostics import ContractError, Diagnostic, printable
from contractlang.files import MAX_INPUT_BYTES, FileError
from contractlang.formatter import format_source
from contractlang.lsp.actions import fixes
from contractlang.lsp.analysis import MAX_LIVE_CHARS, Analysis, Board, BoardColours, analyse
from contractlang.lsp.completion import Completion, complete
from contractlang.lsp.hover import hover
from contractlang.lsp.symbols import Symbol, document_symbols
from contractlang.lsp.text import Lines, Position, Range, span_range
from contractlang.lsp.verification import Verify, verify_document
from contractlang.parser import parse

logger = logging.getLogger("contractlang.lsp")

DEBOUNCE_S = 0.15
VERIFY_COMMAND = "contractlang.verify"
_COMPLETION_KINDS = {"keyword": types.CompletionItemKind.Keyword, "product": types.CompletionItemKind.Value,
                     "party": types.CompletionItemKind.Variable, "game": types.CompletionItemKind.Module,
                     "colour": types.CompletionItemKind.Color, "week": types.CompletionItemKind.Constant}


class Settings(BaseModel):
    """The editor's settings (initializationOptions or workspace/didChangeConfiguration's `contractlang`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    board: int | None = None
    env: int | None = None


class Snapshot(NamedTuple):
    version: int | None
    lines: Lines
    analysis: Analysis


class ContractServer(LanguageServer):
    def __init__(self, verify: Verify | None, board_colours: BoardColours | None, debounce: float):
        super().__init__("contractlang", "0.1.0")
        self.verify_contract = verify
        self.board_colours = board_colours
        self.debounce = debounce
        self.settings = Settings()
        self.board: Board | None = None
        self.snapshots: dict[str, Snapshot] = {}
        self.verified: dict[str, tuple[Diagnostic, ...]] = {}
        self.generation: dict[str, int] = defaultdict(int)
        self.locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.tasks: set[asyncio.Task] = set()
        # one worker for parsing and checking, one for z3: a long verification never delays diagnostics
        self.checking = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contractlang-check")
        self.proving = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contractlang-verify")

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or "utf-16")

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
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                             message=f"contractlang: bad settings ({exc})"))
            return
        self.settings, self.board = settings, board
        for uri in list(self.snapshots):
            self.snapshots.pop(uri)
            self.schedule(uri, 0)

    async def snapshot(self, uri: str) -> Snapshot:
        """The analysis of the document's current text, made now (off the event loop) if it is out of date."""
        doc = self.workspace.get_text_document(uri)
        async with self.locks[uri]:
            source = doc.source
            snap = self.snapshots.get(uri)
            if snap is None or snap.version != doc.version or snap.analysis.source != source:
                loop = asyncio.get_running_loop()
                previous = snap.analysis if snap else None
                analysis = await loop.run_in_executor(self.checking, analyse, source, _path(uri), self.board,
                                                      previous)
                snap = Snapshot(version=doc.version, lines=Lines(source), analysis=analysis)
                self.snapshots[uri] = snap
            return snap

    def schedule(self, uri: str, delay: float) -> None:
        """Re-check after `delay` unless another edit comes first (then that edit's check replaces this one)."""
        self.generation[uri] += 1
        self.verified.pop(uri, None)
        task = asyncio.ensure_future(self._refresh(uri, self.generation[uri], delay))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _refresh(self, uri: str, generation: int, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            if self.generation[uri] != generation:
                return
            snap = await self.snapshot(uri)
            if self.generation[uri] == generation:
                self.publish(uri, snap)
        except Exception:
            logger.exception("checking %s failed", uri)

    def publish(self, uri: str, snap: Snapshot) -> None:
        found = snap.analysis.diagnostics + self.verified.get(uri, ())
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=snap.version, diagnostics=[self.lsp_diagnostic(d, snap.lines) for d in found]))

    def position(self, lines: Lines, pos: types.Position) -> Position:
        return lines.from_units(pos.line, pos.character, self.encoding)

    def lsp_position(self, lines: Lines, pos: Position) -> types.Position:
        return types.Position(line=pos.line, character=lines.to_units(pos, self.encoding))

    def lsp_range(self, lines: Lines, rng: Range) -> types.Range:
        return types.Range(start=self.lsp_position(lines, rng.start), end=self.lsp_position(lines, rng.end))

    def lsp_diagnostic(self, d: Diagnostic, lines: Lines) -> types.Diagnostic:
        severity = types.DiagnosticSeverity.Error if d.severity == "error" else types.DiagnosticSeverity.Warning
        return types.Diagnostic(range=self.lsp_range(lines, span_range(d.span)), severity=severity, code=d.code,
                                source="contractlang", message=d.message + (f"\nhint: {d.hint}" if d.hint else ""))

    def lsp_symbol(self, s: Symbol, lines: Lines) -> types.DocumentSymbol:
        kind = types.SymbolKind.Module if s.kind == "contract" else types.SymbolKind.Property
        return types.DocumentSymbol(name=s.name, detail=s.detail, kind=kind, range=self.lsp_range(lines, s.range),
                                    selection_range=self.lsp_range(lines, s.selection),
                                    children=[self.lsp_symbol(c, lines) for c in s.children])


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


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
    ls.schedule(params.text_document.uri, 0)


def did_change(ls: ContractServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.debounce)


def did_close(ls: ContractServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.generation[uri] += 1
    ls.snapshots.pop(uri, None)
    ls.verified.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


async def on_hover(ls: ContractServer, params: types.HoverParams) -> types.Hover | None:
    snap = await ls.snapshot(params.text_document.uri)
    found = hover(snap.analysis, ls.position(snap.lines, params.position))
    if found is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found.markdown),
                       range=ls.lsp_range(snap.lines, found.range))


async def on_completion(ls: ContractServer, params: types.CompletionParams) -> types.CompletionList:
    source = ls.workspace.get_text_document(params.text_document.uri).source
    lines = Lines(source)
    loop = asyncio.get_running_loop()
    found = await loop.run_in_executor(ls.checking, complete, source, ls.position(lines, params.position))
    return types.CompletionList(is_incomplete=False, items=[_completion_item(c) for c in found])


async def on_formatting(ls: ContractServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
    uri = params.text_document.uri
    source = ls.workspace.get_text_document(uri).source
    loop = asyncio.get_running_loop()
    try:
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
    return [types.CodeAction(
        title=f.title, kind=types.CodeActionKind.QuickFix, diagnostics=[ls.lsp_diagnostic(f.diagnostic, snap.lines)],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=ls.lsp_range(snap.lines, e.range), new_text=e.text)
                                                for e in f.edits]}))
        for f in fixes(snap.analysis, touching)]


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
    generation = ls.generation[uri]
    snap = await ls.snapshot(uri)
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(ls.proving, verify_document, snap.analysis, ls.verify_contract,
                                        settings.env, settings.board, line if isinstance(line, int) else None)
    if ls.generation[uri] == generation:
        ls.verified[uri] = result.diagnostics
        ls.publish(uri, snap)
    return [s.model_dump() for s in result.summaries]


def build_server(verify: Verify | None = None, board_colours: BoardColours | None = None,
                 debounce: float = DEBOUNCE_S) -> ContractServer:
    ls = ContractServer(verify, board_colours, debounce)
    ls.feature(types.INITIALIZE)(initialize)
    ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    ls.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    ls.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
    ls.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[" ", ":", "("]))(
        on_completion)
    ls.feature(types.TEXT_DOCUMENT_FORMATTING)(on_formatting)
    ls.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(on_symbols)
    ls.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]))(on_code_action)
    ls.command(VERIFY_COMMAND)(verify_command)
    return ls


class CappedStdin:
    """The client's byte stream as pygls reads it (a header line, then a body of Content-Length bytes), each
    read capped: an endless line (`lsp < /dev/zero`) or a claimed length of gigabytes ends the server in one
    line instead of filling memory or overflowing the read."""

    def __init__(self, stream):
        self.stream = stream

    def readline(self) -> bytes:
        line = self.stream.readline(MAX_INPUT_BYTES + 1)
        if len(line) > MAX_INPUT_BYTES:
            raise FileError(f"stdin: a header line of more than {MAX_INPUT_BYTES // 2**20} MiB; the client is not "
                            "speaking the language server protocol")
        return line

    def read(self, size: int) -> bytes:
        if size > MAX_INPUT_BYTES:
            raise FileError(f"stdin: a message of {size:,} bytes, more than {MAX_INPUT_BYTES // 2**20} MiB; not read")
        return self.stream.read(size)


class KeptStdout:
    """stdout as pygls writes to it. On the editor's `exit` pygls closes the stream it was given, and the CLI's
    flush after the command then failed on a closed file: every clean session ended in exit 3. Closing this one
    only flushes it."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data: bytes) -> int:
        return self.stream.write(data)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


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


def serve(verify: Verify | None = None, board_colours: BoardColours | None = None,
          debounce: float = DEBOUNCE_S) -> None:
    """Run the server on stdin/stdout until the editor says `exit`; logs go to stderr, one line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineLog("contractlang lsp %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    server = build_server(verify, board_colours, debounce)
    server.start_io(CappedStdin(sys.stdin.buffer), KeptStdout(sys.stdout.buffer))
