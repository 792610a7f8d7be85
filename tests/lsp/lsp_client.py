"""A real LSP client (pygls) driving `python -m contractlang lsp` over stdio, for tests and the benchmark."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tests.helpers import ROOT


class Session:
    """One server process: every notification it publishes is kept, and can be waited for."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.published: list[types.PublishDiagnosticsParams] = []
        self.messages: list[types.ShowMessageParams] = []
        self.arrived = asyncio.Event()
        self.log = ""  # the server's stderr, read once it has exited

    def on_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.append(params)
        self.arrived.set()

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="contract", version=version, text=text)
            )
        )

    def replace(self, uri: str, text: str, version: int) -> None:
        """A full-text change (every client may send one; incremental edits are tested separately)."""
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=start[0], character=start[1]),
                            end=types.Position(line=end[0], character=end[1]),
                        ),
                        text=text,
                    )
                ],
            )
        )

    async def diagnostics(
        self, uri: str, version: int | None = None, after: int = 0, timeout: float = 60
    ) -> list[types.Diagnostic]:
        """The latest diagnostics published for `uri` (at `version`, if given; among the notifications from
        index `after` on), waiting for them to arrive."""

        async def wait():
            while True:
                for p in reversed(self.published[after:]):
                    if p.uri == uri and (version is None or p.version == version):
                        return list(p.diagnostics)
                self.arrived.clear()
                await self.arrived.wait()

        return await asyncio.wait_for(wait(), timeout)

    def doc(self, uri: str) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=uri)


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


@asynccontextmanager
async def session(options: dict | None = None, args: tuple[str, ...] = ()):
    client = LanguageClient("contractlang-tests", "1")
    s = Session(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        s.on_diagnostics(params)

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams) -> None:
        s.messages.append(params)

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    await client.start_io(sys.executable, "-m", "contractlang", "lsp", *args, env=env, cwd=str(ROOT))
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=ROOT.as_uri(), initialization_options=options
        )
    )
    client.initialized(types.InitializedParams())
    try:
        yield s
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await asyncio.wait_for(client.stop(), 30)
        s.log = (await client._server.stderr.read()).decode()  # pygls keeps the process private


def frame(message: dict) -> bytes:
    """One message as the base protocol frames it."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def unframe(stream: bytes) -> list[dict]:
    """The messages of a well-framed byte stream (what the server wrote)."""
    out = []
    while stream:
        head, _, rest = stream.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        out.append(json.loads(rest[:length]))
        stream = rest[length:]
    return out


INITIALIZE = (
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
)


def run_raw(data: bytes | BinaryIO, timeout: float = 60) -> subprocess.CompletedProcess:
    """`contractlang lsp` in a real process reading `data` (bytes, or an open file) and then the end of its input."""
    feed = {"input": data} if isinstance(data, bytes) else {"stdin": data}
    return subprocess.run(
        [sys.executable, "-m", "contractlang", "lsp"],
        **feed,
        capture_output=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
