"""Reading inputs with a size cap and writing outputs atomically: every command's files go through here."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from contractlang.errors import ContractlangError

MAX_INPUT_BYTES = 64 * 2**20  # contracts, texts and logs are small; /dev/zero or an endless pipe is not
# A contract or its prose is a few KB, and the parser reads about 60 KB a second: 1 MiB is checked in seconds,
# where a contract file of 64 MiB would keep `check` busy for twenty minutes.
MAX_CONTRACT_BYTES = 2**20


T = TypeVar("T")


class FileError(ContractlangError):
    """A file that cannot be read or written, as one line naming the file."""


MAX_RECORDS_BYTES = 2**30  # a JSON-lines store of records: each line within MAX_INPUT_BYTES, the whole within this


def open_regular(path: Path, limit: int = MAX_INPUT_BYTES):
    """A binary reader of a file of at most `limit` bytes: a FIFO (nothing may ever write to it) is refused at
    once rather than waited on, a larger regular file (a sparse one of gigabytes) before a byte is read, a
    directory is named as one. Callers still read at most `limit + 1` bytes: a file may grow, a device (/dev/zero)
    has no size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except IsADirectoryError:
        raise FileError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    status = os.fstat(fd)
    problem = None
    if stat.S_ISDIR(status.st_mode):
        problem = "is a directory, not a file"
    elif stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode):
        problem = "is a pipe, not a file; not read (save what it carries to a file first)"
    elif stat.S_ISREG(status.st_mode) and status.st_size > limit:
        problem = f"more than {_mib(limit)}; not read (is it the file you meant?)"
    if problem is not None:
        os.close(fd)
        raise FileError(f"{path}: {problem}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _mib(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"


def read_capped(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes, refusing more than `limit` (so an endless device ends in an error) and a pipe."""
    handle = open_regular(path, limit)
    try:
        with handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileError(f"{path}: more than {_mib(limit)}; not read (is it the file you meant?)")
    return data


def read_lines_capped(path: Path, line_limit: int = MAX_INPUT_BYTES, limit: int = MAX_RECORDS_BYTES) -> list[bytes]:
    """The file's lines (line ends kept), each at most `line_limit` bytes and all together at most `limit`: a
    records file may be larger than one input, but /dev/zero or a runaway line still ends in an error."""
    handle = open_regular(path, limit)
    lines: list[bytes] = []
    total = 0
    try:
        with handle:
            while line := handle.readline(line_limit + 1):
                total += len(line)
                if len(line) > line_limit:
                    raise FileError(
                        f"{path}:{len(lines) + 1}: a line of more than {line_limit // 2**20} MiB; not "
                        "read (is it the file you meant?)"
                    )
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


RECORD_CHECK = "sha256"
"""The field every line of a job store ends with: the first 16 hex digits of the SHA-256 of the check of the
line before (empty for the first) and the record's canonical JSON (keys sorted, no spaces)."""


def _chained(previous: str, record: dict) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(f"{previous}\n{canonical}".encode()).hexdigest()[:16]


def sealed_line(record: dict, previous: str) -> tuple[bytes, str]:
    """A record as a store holds it, one JSON line ending in its check chained to `previous`; and that check."""
    check = _chained(previous, record)
    return (json.dumps({**record, RECORD_CHECK: check}) + "\n").encode(), check


def sealed_lines(records: Iterable[dict]) -> tuple[bytes, str]:
    """A whole store of `records` in order, and the check of its last line."""
    check, lines = "", []
    for record in records:
        line, check = sealed_line(record, check)
        lines.append(line)
    return b"".join(lines), check


def open_sealed_line(
    line: bytes, previous: str, where: str, what: str, read: Callable[[dict], T], unsealed: bool = False
) -> tuple[T, str]:
    """`read` of the record a store line holds (a ValueError from it: not such a record) and the line's check,
    when that follows from `previous` (`unsealed`: a line without a check is taken as it is, and given one);
    else one line at `where` saying what is wrong."""
    try:
        data = parse_json(line)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise FileError(f"{where}: not a {what} (not a JSON object); move the file away or choose another --out")
    check = data.pop(RECORD_CHECK, None)
    try:
        value = read(data)
        expected = _chained(previous, data)
    except ValueError:
        raise FileError(f"{where}: not a {what} of this version; move the file away or choose another --out") from None
    if check is None and unsealed:
        return value, expected
    if check is None:
        raise FileError(
            f"{where}: a {what} without its check (a store from before checks); if you trust the file, "
            "seal it with `contractlang seal FILE`, else move it away"
        )
    if check != expected:
        raise FileError(
            f"{where}: the {what} does not match its check (edited, or lines repeated, swapped or "
            "removed); move the file away or choose another --out"
        )
    return value, check


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


LINK_RULE = "outputs are never written through links"


def _open_folder(path: Path) -> int:
    """A descriptor of the folder `path` is written in, refusing a folder that is a link (or not a folder): every
    later step names the file relative to it, so nothing can redirect the write between a check and the write."""
    folder = path.parent
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if folder.is_symlink():
            raise FileError(
                f"cannot write {path}: its folder {folder} is a symbolic link; {LINK_RULE} (name the "
                "folder it points to)"
            ) from None
        if exc.errno == errno.ENOTDIR:
            raise FileError(f"cannot write {path}: {folder} is a file, not a folder") from None
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None


def _replaceable(path: Path, folder: int) -> os.stat_result | None:
    """The status of the file a write would replace (None when new), or the reason it refuses: a link, a
    non-regular file or a read-only file stays as it is."""
    try:
        current = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(current.st_mode):
        raise FileError(
            f"cannot write {path}: it is a symbolic link; {LINK_RULE} (remove the link or choose another path)"
        )
    if stat.S_ISDIR(current.st_mode):
        raise FileError(f"cannot write {path}: it is a directory, not a file")
    if not stat.S_ISREG(current.st_mode):
        raise FileError(f"cannot write {path}: not a regular file")
    if not current.st_mode & 0o222:
        raise FileError(f"cannot write {path}: the file is read-only; it was left as it is")
    return current


def _temporary(path: Path, folder: int, mode: int) -> tuple[str, int]:
    """A new file beside `path` (a name nobody could have planted a link at: created exclusively)."""
    for _ in range(100):
        name = f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=folder)
        except FileExistsError:
            continue
        except OSError as exc:
            raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    raise FileError(f"cannot write {path}: no temporary name free beside it")


def check_writable(path: Path) -> None:
    """Refuse, before any long work, an output `write_atomically` could not write at the end: a link, a read-only
    or non-regular target, or a folder that is a link or where no file can be created."""
    folder = _open_folder(path)
    try:
        _replaceable(path, folder)
        name, fd = _temporary(path, folder, 0o600)
        os.close(fd)
        os.unlink(name, dir_fd=folder)
    finally:
        os.close(folder)


def write_atomically(path: Path, data: str | bytes, entry: bool = False) -> None:
    """Replace `path` in one step: a new file in the same folder, renamed over it.

    Never through a link: a target or a folder that is a symbolic link is refused, as are a read-only target and
    one that is not a regular file; the target keeps its permission bits; a failure leaves the target untouched
    and no temporary file behind. An `entry` of a cache replaces whatever file, link or pipe is at the target
    (the rename replaces the name, never what a link points to), since a bad entry is solved afresh."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = _open_folder(path)
    try:
        current = None if entry else _replaceable(path, folder)
        name, fd = _temporary(path, folder, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fchmod(handle.fileno(), stat.S_IMODE(current.st_mode) if current is not None else _new_file_mode())
                os.fsync(handle.fileno())
            os.replace(name, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException as exc:
            os.unlink(name, dir_fd=folder)
            if isinstance(exc, OSError):
                raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
            raise
    finally:
        os.close(folder)


def open_for_appending(path: Path) -> tuple[int, bool]:
    """A descriptor appending to `path` (created if new) and whether it was created: refused, as by
    `write_atomically`, when the file or its folder is a link or the file is not a writable regular file."""
    folder = _open_folder(path)
    try:
        current = _replaceable(path, folder)
        try:
            fd = os.open(path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666, dir_fd=folder)
        except OSError as exc:
            raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
        return fd, current is None
    finally:
        os.close(folder)


def refuse_link(path: Path) -> None:
    """A file we write in place (a store, a database) that is a link or sits in a folder that is one is refused:
    a write would land in whatever it points to."""
    os.close(_open_folder(path))
    if path.is_symlink():
        raise FileError(
            f"cannot write {path}: it is a symbolic link; {LINK_RULE} (remove the link or choose another path)"
        )


def check_folder(folder: Path) -> None:
    """Refuse now, creating nothing, a folder `make_folder` would refuse: the folder a link, or a part of it a
    file."""
    if folder.is_symlink():
        raise FileError(f"cannot write in {folder}: it is a symbolic link; {LINK_RULE} (name the folder it points to)")
    for part in (folder, *folder.parents):
        if part.exists():
            if not part.is_dir():
                raise FileError(f"cannot write in {folder}: {'it' if part == folder else part} is a file, not a folder")
            return


def check_outputs(paths: Iterable[Path]) -> None:
    """Refuse now, before any long work and creating nothing, the outputs a run could not write at its end."""
    for path in paths:
        check_folder(path.parent)
        if path.parent.is_dir():
            check_writable(path)


def make_folder(folder: Path) -> None:
    """`folder` and its parents, created as needed; refused as by `check_folder` in one line."""
    check_folder(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileError(f"cannot write in {folder}: {exc.strerror or exc}") from None


def damaged(path: Path, what: str, option: str, why: str) -> FileError:
    return FileError(f"{path}: the {what} is damaged ({why}); delete it or pass {option} with another file")


class SqliteFile:
    """An SQLite file of ours (tables `ours`, schema `ddl`, created when missing), and one connection to it that
    the threads of this process share, one transaction at a time: hundreds of threads each with its own
    connection wait on SQLite's file lock, whose busy handler lets some of them starve past any timeout. A forked
    child opens its own connection. Another program's database, a damaged file or an unusable path is one line naming
    it and `option`, the way to choose another; a lock another process holds past the timeout is said to be
    one, not damage; the file is never opened through a link."""

    def __init__(self, path: Path, ours: set[str], ddl: str, what: str, option: str, busy_timeout: float = 30.0):
        self.path, self.what, self.option, self.busy_timeout = Path(path), what, option, busy_timeout
        self._fresh()
        make_folder(self.path.parent)
        try:
            with self._connected() as db:
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if tables and not tables & ours:
                    raise FileError(
                        f"{path}: an SQLite database of something else, not a {what}; pass {option} with another file"
                    )
                db.executescript(ddl)
        except sqlite3.DatabaseError as exc:
            raise FileError(f"{path}: not a usable {what} ({exc}); pass {option} with another file") from None
        except OSError as exc:
            raise FileError(f"{path}: cannot open the {what}: {exc.strerror or exc}") from None

    def _fresh(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = os.getpid()

    @contextmanager
    def session(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one transaction (committed at the end, rolled back on an error)."""
        try:
            with self._connected() as db:
                yield db
        except sqlite3.DatabaseError as exc:
            raise self.damaged(str(exc)) from None

    @contextmanager
    def _connected(self) -> Iterator[sqlite3.Connection]:
        if self._pid != os.getpid():
            self._fresh()  # a lock and a connection inherited through fork belong to the parent
        with self._lock:
            try:
                if self._db is None:
                    refuse_link(self.path)
                    self._db = sqlite3.connect(self.path, timeout=self.busy_timeout, check_same_thread=False)
                with self._db:
                    yield self._db
            except sqlite3.DatabaseError as exc:
                self._disconnect()  # the next session starts from a new connection
                if getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise FileError(
                        f"{self.path}: the {self.what} stayed locked by another process for {self.busy_timeout:g} "
                        f"s; let it finish or pass {self.option} with another file"
                    ) from None
                raise

    def damaged(self, why: str) -> FileError:
        return damaged(self.path, self.what, self.option, why)

    def close(self) -> None:
        with self._lock:
            self._disconnect()

    def _disconnect(self) -> None:
        if self._db is not None and self._pid == os.getpid():
            with suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in ("path", "what", "option", "busy_timeout")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._fresh()


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
