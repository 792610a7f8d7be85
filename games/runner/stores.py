"""Job stores: sealed JSON-lines files of finished records, appended as jobs end and rewritten in job order."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping
from functools import partial
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from contractlang.files import (
    FileError,
    make_folder,
    open_for_appending,
    open_sealed_line,
    read_lines_capped,
    refuse_link,
    sealed_line,
    sealed_lines,
    write_atomically,
)
from games.runner.locks import StoreLock

Job = TypeVar("Job", bound=Hashable)
Record = TypeVar("Record", bound=BaseModel)


class Records(MutableMapping[Job, Record]):
    """Finished records by job, each kept as its JSON text and read again (as a store's line is) when asked for:
    a run holds every record it stored, and a record's Python objects take several times its JSON (an LLM game's
    45 KB against 10 KB)."""

    def __init__(self, record_type: type[Record], records: Iterable[tuple[Job, Record]] = ()):
        self._type = record_type
        self._text: dict[Job, str] = {}
        for job, record in records:
            self[job] = record

    def __getitem__(self, job: Job) -> Record:
        return self._type.model_validate_json(self._text[job], strict=True)

    def __setitem__(self, job: Job, record: Record) -> None:
        self.put_data(job, record.model_dump(mode="json"))

    def put_data(self, job: Job, data: dict) -> None:
        """Keep the record whose JSON data (`model_dump(mode="json")`) is `data`."""
        self._text[job] = json.dumps(data)

    def __delitem__(self, job: Job) -> None:
        del self._text[job]

    def __iter__(self) -> Iterator[Job]:
        return iter(self._text)

    def __len__(self) -> int:
        return len(self._text)

    def __contains__(self, job: object) -> bool:
        return job in self._text

    def reordered(self, jobs: Iterable[Job]) -> Records[Job, Record]:
        """The records of `jobs`, in that order."""
        records = Records(self._type)
        records._text = {j: self._text[j] for j in jobs}
        return records

    def data(self) -> Iterator[dict]:
        """Each record as JSON data, in order."""
        return (json.loads(text) for text in self._text.values())


class JobStore(Generic[Job, Record]):
    """A JSON-lines file of finished records, one complete line each, appended to as jobs finish.

    Every line carries `sealed_line`'s check, chained to the line before, so a changed number, a line repeated,
    swapped or removed from the middle, or a line from another store stops the reader with its line number. Only
    the last line can be cut short by an interrupted run: it is dropped (the file is rewritten without it) so
    that new lines never follow a partial one. A write that fails (a full disk) takes back what it wrote, so the
    file never ends in half a line, and a store this run created and never wrote to is not left behind empty.
    The store, like every output, is never read or written through a link. While open, the store is locked
    (`StoreLock`) against a second run writing into it."""

    def __init__(self, path: Path, record_type: type[Record], job_of: Callable[[Record], Job], what: str):
        self.path = path
        self.records: Records[Job, Record] = Records(record_type)
        self.dropped_cut_line = False
        self._job_of = job_of
        self._fd: int | None = None
        self._check = ""
        make_folder(path.parent)
        refuse_link(path)
        self._lock = StoreLock(path.with_name(path.name + ".lock"), f"{what} records")
        try:
            self._read(record_type, what)
        except BaseException:
            self._lock.release()
            raise

    def _read(self, record_type: type[Record], what: str) -> None:
        path = self.path
        lines = read_lines_capped(path) if path.exists() else []
        records, self._check, self.dropped_cut_line = read_records(path, lines, record_type, self._job_of, what)
        self.records = Records(record_type, records.items())
        if self.dropped_cut_line:
            write_atomically(path, b"".join(lines[:-1]))

    def missing(self, jobs: Iterable[Job]) -> list[Job]:
        return [j for j in dict.fromkeys(jobs) if j not in self.records]

    def add(self, record: Record, replace: bool = False) -> None:
        """Append `record`; a job is stored once, its first record, unless `replace` (the store is rewritten
        with the new one in its place)."""
        job = self._job_of(record)
        if job in self.records:
            if replace and record != self.records[job]:
                self.records[job] = record
                self._rewrite()
            return
        dumped = record.model_dump(mode="json")
        data, check = sealed_line(dumped, self._check)
        created = False
        try:
            if self._fd is None:
                self._fd, created = open_for_appending(self.path)
            before = os.fstat(self._fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                os.ftruncate(self._fd, before)
                if created and before == 0:
                    os.close(self._fd)
                    self._fd = None
                    self.path.unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise FileError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        self.records.put_data(job, dumped)
        self._check = check

    def put_in_order(self, jobs: Iterable[Job], drop: Iterable[Job] = ()) -> None:
        """Rewrite the store so that the records of `jobs` stand in that order, in the places they hold (the records
        of other jobs, from runs over other slices, stay where they are), leaving out those of `drop`: once every
        job has ended, its bytes no longer depend on which worker finished first. A store already in order is left
        as it is."""
        gone = set(drop)
        kept = [j for j in self.records if j not in gone]
        wanted = [j for j in dict.fromkeys(jobs) if j in self.records and j not in gone]
        ours, slots = set(wanted), iter(wanted)
        ordered = [next(slots) if j in ours else j for j in kept]
        if ordered == list(self.records):
            return
        self.records = self.records.reordered(ordered)
        self._rewrite()

    def _rewrite(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if not self.records:
            self.path.unlink(missing_ok=True)  # no empty store is left behind
            self._check = ""
            return
        data, self._check = sealed_lines(self.records.data())
        write_atomically(self.path, data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._lock.release()


def read_records(
    path: Path, lines: list[bytes], record_type: type[Record], job_of: Callable[[Record], Job], what: str
) -> tuple[dict[Job, Record], str, bool]:
    """A store's records, the check of its last line and whether that line is cut short (an interrupted write,
    or one still under way: a line without its end that starts as every record does); any other line that is
    not a sealed record of this version, or that repeats a job, stops the reader with its number."""
    records: dict[Job, Record] = {}
    check = ""
    read = partial(_validated, record_type)
    for number, line in enumerate(lines, start=1):
        if number == len(lines) and not line.endswith(b"\n") and line.startswith(b'{"'):
            return records, check, True
        where = f"{path}:{number}"
        record, check = open_sealed_line(line, check, where, f"{what} record", read)
        job = job_of(record)
        if job in records:
            raise FileError(
                f"{where}: a second record of the same job; the store was edited or joined from two "
                "runs (move it away, or remove the line)"
            )
        records[job] = record
    return records, check, False


def _validated(record_type: type[Record], data: dict) -> Record:
    return record_type.model_validate_json(json.dumps(data), strict=True)  # JSON's types, not Python's


def stored_records(
    path: Path, record_type: type[Record], job_of: Callable[[Record], Job], what: str
) -> dict[Job, Record]:
    """The records a store holds now, checked but read without its lock or any repair, so a running generation
    can be watched and read: a line still being appended is left out. A store is a run's output, so one that
    is a link is refused before anything of it is read, as when the run opens it."""
    if path.is_symlink() or path.exists():
        refuse_link(path)
    lines = read_lines_capped(path) if path.exists() else []
    return read_records(path, lines, record_type, job_of, what)[0]


def seal_store(path: Path) -> int:
    """Give every line of a store written before stores carried checks its check (lines already sealed are
    checked and kept); how many lines it holds. The records are the user's to vouch for: nothing can tell an
    unsealed store from one whose checks were removed to hide an edit."""
    refuse_link(path)
    lock = StoreLock(path.with_name(path.name + ".lock"), "records")
    try:
        records = []
        check = ""
        for number, line in enumerate(read_lines_capped(path), start=1):
            data, check = open_sealed_line(line, check, f"{path}:{number}", "record", dict, unsealed=True)
            records.append(data)
        data, _ = sealed_lines(records)
        write_atomically(path, data)
        return len(records)
    finally:
        lock.release()


def shared_store(source: Path | None, out: Path, name: str) -> Path | None:
    """The store `jobs/NAME` of the set `source` a run reads, to reuse read-only while the run writes into `out`;
    None when there is no such set or the run writes into it."""
    if source is None or source.resolve() == out.resolve():
        return None
    return source / "jobs" / name
