"""Reading inputs with a size cap and writing outputs atomically: every command's files go through here."""

from __future__ import annotations

import errno

import json
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MAX_INPUT_BYTES = 64 * 2**20  # contracts, texts and logs are small; /dev/zero or an endless pipe is not
# A contract or its prose is a few KB, and the parser reads about 60 KB a second: 1 MiB is checked in seconds,
# where a contract file of 64 MiB would keep `check` busy for twenty minutes.
MAX_CONTRACT_BYTES = 2**20


class FileError(Exception):
    """A file that cannot be read or written, as one line naming the file."""


MAX_RECORDS_BYTES = 2**30  # a JSON-lines store of records: each line within MAX_INPUT_BYTES, the whole within this


def _open_for_reading(path: Path):
    """A binary reader of a file that is there to be read: a FIFO (nothing may ever write to it) is refused
    at once rather than waited on, a directory is named as one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except IsADirectoryError:
        raise FileError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise FileError(f"{path}: is a directory, not a file")
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        os.close(fd)
        raise FileError(f"{path}: is a pipe, not a file; not read (save what it carries to a file first)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_capped(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes, refusing more than `limit` (so an endless device ends in an error) and a pipe."""
    handle = _open_for_reading(path)
    try:
        with handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileError(f"{path}: more than {limit // 2**20} MiB; not read (is it the file you meant?)")
    return data


def read_lines_capped(path: Path, line_limit: int = MAX_INPUT_BYTES, limit: int = MAX_RECORDS_BYTES) -> list[bytes]:
    """The file's lines (line ends kept), each at most `line_limit` bytes and all together at most `limit`: a
    records file may be larger than one input, but /dev/zero or a runaway line still ends in an error."""
    handle = _open_for_reading(path)
    lines: list[bytes] = []
    total = 0
    try:
        with handle:
            while line := handle.readline(line_limit + 1):
                total += len(line)
                if len(line) > line_limit:
                    raise FileError(f"{path}:{len(lines) + 1}: a line of more than {line_limit // 2**20} MiB; not "
                                    "read (is it the file you meant?)")
                if total > limit:
                    raise FileError(f"{path}: more than {limit // 2**20} MiB; not read (is it the file you meant?)")
                lines.append(line)
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return lines


def parse_json(text: str | bytes):
    """`json.loads`, with input nested too deeply for the parser refused as a ValueError like any bad JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _writable_target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file `write_atomically` would replace and its status (None when new), or the reason it would refuse."""
    target = Path(os.path.realpath(path))
    try:
        current = target.stat()
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    if current is not None and not stat.S_ISREG(current.st_mode):
        raise FileError(f"cannot write {path}: not a regular file")
    if current is not None and not current.st_mode & 0o222:
        raise FileError(f"cannot write {path}: the file is read-only; it was left as it is")
    return target, current


def check_writable(path: Path) -> None:
    """Refuse, before any long work, an output `write_atomically` could not write at the end: a read-only or
    non-regular target, or a directory where no file can be created."""
    target, _ = _writable_target(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace `path` in one step: a unique temporary file beside the real target, renamed over it.

    A symlink is written through (the file it names is replaced, the link stays); the target keeps its
    permission bits; a read-only target or one that is not a regular file is refused; a failure leaves
    the target untouched and no temporary file behind."""
    target, current = _writable_target(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(current.st_mode) if current is not None else _new_file_mode())
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def open_sqlite_store(path: Path, ours: set[str], ddl: str, what: str, option: str) -> None:
    """Create or check an SQLite file of ours (tables `ours`, schema `ddl`): another program's database, a
    corrupt file or an unusable path is refused with one line naming `option`, the way to choose another."""

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path, timeout=30) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and not tables & ours:
                raise FileError(f"{path}: an SQLite database of something else, not a {what}; pass {option} with "
                                "another file")
            db.executescript(ddl)
    except sqlite3.DatabaseError as exc:
        raise FileError(f"{path}: not a usable {what} ({exc}); pass {option} with another file") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot open the {what}: {exc.strerror or exc}") from None


def damaged(path: Path, what: str, option: str, why: str) -> FileError:
    return FileError(f"{path}: the {what} is damaged ({why}); delete it or pass {option} with another file")


@contextmanager
def sqlite_session(path: Path, what: str, option: str) -> Iterator[sqlite3.Connection]:
    """A connection to an SQLite file of ours (one transaction); a damaged file (a corrupt page) is one line
    naming it and `option`, the way to choose another."""
    try:
        with sqlite3.connect(path, timeout=30) as db:
            yield db
    except sqlite3.DatabaseError as exc:
        raise damaged(path, what, option, str(exc)) from None


class OutputError(FileError):
    """Standard output that cannot be written (a full device, a closed pipe); `reader_left` when the reading end
    of a pipe closed (`| head`), which nobody needs to be told about."""

    def __init__(self, message: str, reader_left: bool = False):
        super().__init__(message)
        self.reader_left = reader_left


def _output_error(exc: OSError) -> OutputError:
    return OutputError(f"cannot write the output: {exc.strerror or exc}", reader_left=exc.errno == errno.EPIPE)


class GuardedOutput:
    """A text stream whose write failures are `OutputError`, one line, instead of an OSError from anywhere."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise _output_error(exc) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise _output_error(exc) from None

    def __getattr__(self, name: str):
        return getattr(self.stream, name)
