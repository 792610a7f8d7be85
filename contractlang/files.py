"""Reading inputs with a size cap and writing outputs atomically: every command's files go through here."""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MAX_INPUT_BYTES = 64 * 2**20  # contracts, texts and logs are small; /dev/zero or an endless pipe is not


class FileError(Exception):
    """A file that cannot be read or written, as one line naming the file."""


def read_capped(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes, refusing more than `limit` (so an endless device or pipe ends in an error)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except IsADirectoryError:
        raise FileError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileError(f"{path}: more than {limit // 2**20} MiB; not read (is it the file you meant?)")
    return data


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace `path` in one step: a unique temporary file beside the real target, renamed over it.

    A symlink is written through (the file it names is replaced, the link stays); the target keeps its
    permission bits; a read-only target or one that is not a regular file is refused; a failure leaves
    the target untouched and no temporary file behind."""
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
