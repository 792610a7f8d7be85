"""The language server's byte stream (the LSP base protocol): framed messages in, answers out.

The frames are read here rather than by pygls, whose reader skips what it cannot parse and then waits forever
(a misspelt or LF-only header, a negative length), and whose writer keeps logging once the editor is gone.
"""

from __future__ import annotations

import os

from contractlang.diagnostics import printable
from contractlang.files import MAX_INPUT_BYTES, FileError

_READ_BYTES = 2**16


class Frames:
    """The messages of a file descriptor: header lines ending in CRLF, one `Content-Length` of decimal digits
    (at most MAX_INPUT_BYTES), a blank line, then that many bytes of body. Anything else is a FileError that
    says what was wrong: past a broken frame nothing says where the next message begins, so reading stops."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = bytearray()

    def _fill(self, wanted: int = _READ_BYTES) -> bool:
        """Read more into the buffer; False at the end of the input."""
        chunk = os.read(self.fd, max(wanted, _READ_BYTES))
        self.buffer += chunk
        return bool(chunk)

    def _line(self) -> bytes | None:
        """The next header line with its ending; None when the input ends first."""
        searched = 0
        while (at := self.buffer.find(b"\n", searched)) < 0:
            if len(self.buffer) > MAX_INPUT_BYTES:
                raise FileError(
                    f"stdin: a header line of more than {MAX_INPUT_BYTES // 2**20} MiB; the client is not "
                    "speaking the language server protocol"
                )
            searched = len(self.buffer)
            if not self._fill():
                return None
        line = bytes(self.buffer[: at + 1])
        del self.buffer[: at + 1]
        return line

    def next(self) -> bytes | None:
        """The next message's body; None when the input ends between messages."""
        length: int | None = None
        started = False
        while True:
            line = self._line()
            if line is None:
                if started or self.buffer:
                    raise FileError("stdin: the input ended inside a message's header")
                return None
            started = True
            if not line.endswith(b"\r\n"):
                shown = _shown(line.rstrip(b"\r\n"))
                raise FileError(
                    f"stdin: the header line {shown} ends in a bare LF; the protocol ends each header line in CRLF"
                )
            if line == b"\r\n":
                break
            name, colon, value = line[:-2].partition(b":")
            if not colon:
                raise FileError(f"stdin: {_shown(line)} is not a header line (`Name: value`)")
            if name.strip().lower() == b"content-length":
                if length is not None:
                    raise FileError("stdin: a message with two Content-Length headers")
                length = _length(value.strip())
            # other headers (Content-Type) say nothing the server needs
        if length is None:
            raise FileError("stdin: a message without a Content-Length header (is its name misspelt?)")
        while len(self.buffer) < length:
            if not self._fill(length - len(self.buffer)):
                raise FileError(f"stdin: the input ended {len(self.buffer):,} bytes into a message of {length:,} bytes")
        body = bytes(self.buffer[:length])
        del self.buffer[:length]
        return body


def _length(value: bytes) -> int:
    if not value.isdigit():  # bytes.isdigit: ASCII digits only, so no sign, no space, no other script's digits
        raise FileError(f"stdin: Content-Length {_shown(value)} is not a number of bytes")
    if len(value) > 30:
        raise FileError(
            f"stdin: a message of a {len(value):,}-digit number of bytes, more than "
            f"{MAX_INPUT_BYTES // 2**20} MiB; not read"
        )
    length = int(value)
    if length > MAX_INPUT_BYTES:
        raise FileError(f"stdin: a message of {length:,} bytes, more than {MAX_INPUT_BYTES // 2**20} MiB; not read")
    return length


def _shown(data: bytes) -> str:
    """Bytes of the stream in a message: quoted, control characters shown, at most 40 characters."""
    text = printable(data[:40].decode("utf-8", "replace"))
    return f"'{text}'" + ("…" if len(data) > 40 else "")


class Output:
    """The editor's end of the stream, written with the file descriptor (no buffer is left to flush at exit).
    When it fails (the editor closed it), `lost` is told once and nothing more is written."""

    def __init__(self, fd: int, lost):
        self.fd = fd
        self.lost = lost
        self.broken = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view and not self.broken:
                view = view[os.write(self.fd, view) :]
        except OSError as exc:
            if not self.broken:
                self.broken = True
                self.lost(FileError(f"stdout: cannot write to the editor ({exc.strerror or exc}); stopping"))

    def close(self) -> None:
        """pygls closes its writer on `exit`; stdout stays open for the command's own end."""
