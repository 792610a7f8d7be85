"""A store's lock: the pid of the one run writing there, taken over when that run is gone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from contractlang.files import (
    FileError,
    read_capped,
)


class StoreLock:
    """`path` held by this process for as long as it writes there: the file holds the owner's pid, so a second
    run into the same place refuses at once, and a lock left by a run that died (its pid gone) is taken over.
    A lock that is a link, a directory or anything but a small file of ours is refused, never followed or
    removed."""

    def __init__(self, path: Path, what: str):
        self.path = path
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            except FileExistsError:
                owner = self._owner()
                if owner is not None and owner != os.getpid() and _alive(owner):
                    raise FileError(
                        f"{path.parent}: another run (pid {owner}) is writing {what} there; wait for "
                        "it to end or choose another --out"
                    ) from None
                path.unlink(missing_ok=True)  # its owner is gone: a stale lock
                continue
            except OSError as exc:
                raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
            try:
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError as exc:
                path.unlink(missing_ok=True)
                raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
            finally:
                os.close(fd)
            return
        raise FileError(f"{path}: cannot take the lock; remove the file if no run is writing there")

    def _owner(self) -> int | None:
        """The pid in the lock, None when it holds none (a lock cut short); not a regular file: refused."""
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise FileError(f"cannot use the lock {self.path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "not a file"
            raise FileError(f"{self.path}: the lock is {kind}; remove it if no run is writing there")
        try:
            text = read_capped(self.path, 32).decode("ascii", "replace").strip()
        except FileError:
            return None
        return int(text) if text.isdigit() else None

    def release(self) -> None:
        try:
            mine = self._owner() == os.getpid()
        except FileError:
            return  # replaced by something else while we ran: not ours to remove
        if mine:
            self.path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
