"""The SQLite record/replay store of provider responses."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import ValidationError

from contractlang.files import FileError, SqliteFile
from contractlang.llm.providers import ApiKeys, LlmModel, redact
from contractlang.llm.usage import TOKEN_COUNT_LIMIT, USAGE_FIELDS, TokenCount
from contractlang.llm.wire import capped
from contractlang.vocab import Frozen

DEFAULT_RECORDINGS = Path(".contractlang-cache") / "llm.sqlite"


class _RecordedUsage(Frozen):
    """The token counts a recording keeps (and a reply's usage block becomes)."""

    input_tokens: TokenCount
    output_tokens: TokenCount
    cache_read_tokens: TokenCount
    cache_write_tokens: TokenCount


class Recordings:
    """The record/replay store: one row per provider response, keyed by request hash and occurrence. A row
    that cannot be read (a corrupt page, a NULL reply, usage that is not token counts) is a FileError: one line
    naming the file."""

    _DDL = """CREATE TABLE IF NOT EXISTS llm_recordings_v1 (
      key TEXT, occurrence INTEGER, namespace TEXT, purpose TEXT, model TEXT, created_at REAL,
      request_json TEXT, reply TEXT, usage_json TEXT, PRIMARY KEY (key, occurrence));"""

    def __init__(self, path: Path, replay: bool = False):
        self.path = Path(path)
        if replay and not self.path.exists():
            raise FileError(
                f"{self.path}: no such recordings file to replay from; record the run first (without "
                "--replay) or pass --recordings with the file it was recorded in"
            )
        self._file = SqliteFile(
            self.path, {"llm_recordings_v1"}, self._DDL, "recordings file of LLM responses", "--recordings"
        )

    def _db(self):
        return self._file.session()

    def close(self) -> None:
        self._file.close()

    def _unusable(self, why: str) -> FileError:
        return self._file.damaged(why)

    def get(self, key: str, occurrence: int) -> tuple[str, dict] | None:
        with self._db() as db:
            row = db.execute(
                "SELECT reply, usage_json FROM llm_recordings_v1 WHERE key = ? AND occurrence = ?", (key, occurrence)
            ).fetchone()
        if row is None:
            return None
        reply, usage_json = row
        if not isinstance(reply, str):
            raise self._unusable(f"a recorded reply is {'NULL' if reply is None else type(reply).__name__}, not text")
        try:
            usage = _RecordedUsage.model_validate_json(usage_json, strict=True)
        except (TypeError, ValidationError):
            raise self._unusable("a recorded response's token counts are unreadable") from None
        return capped(reply), usage.model_dump()

    def put(
        self,
        key: str,
        occurrence: int,
        namespace: str,
        purpose: str,
        model: str,
        request: dict,
        reply: str,
        usage: dict,
        keys: ApiKeys,
    ) -> None:
        """Record one response; the request and reply are written with `keys` redacted."""
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO llm_recordings_v1 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    occurrence,
                    namespace,
                    purpose,
                    model,
                    time.time(),
                    redact(json.dumps(request), keys),
                    redact(reply, keys),
                    json.dumps(usage),
                ),
            )

    def count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM llm_recordings_v1").fetchone()[0]

    def averages(self, model: LlmModel, purpose: str | None = None) -> tuple[int, dict] | None:
        """How many calls of `model` (of `purpose`, when given) are recorded and their mean token counts; None
        when there are none. The counts are checked as `get` checks them: a row whose counts are not whole numbers
        from 0 to TOKEN_COUNT_LIMIT makes the file unusable, so an estimate is never negative or absurd."""
        where = "model = ? AND COALESCE(json_extract(request_json, '$.provider'), 'anthropic') = ?"
        args: tuple = (model.model, model.provider)
        if purpose is not None:
            where, args = where + " AND purpose = ?", (*args, purpose)
        counts = " AND ".join(
            f"json_type(usage_json, '$.{name}') = 'integer' AND "
            f"json_extract(usage_json, '$.{name}') BETWEEN 0 AND {TOKEN_COUNT_LIMIT}"
            for name in USAGE_FIELDS
        )
        fields = ", ".join(f"AVG(json_extract(usage_json, '$.{name}'))" for name in USAGE_FIELDS)
        with self._db() as db:
            bad = db.execute(
                f"SELECT COUNT(*) FROM llm_recordings_v1 WHERE {where} AND "
                f"NOT COALESCE(CASE WHEN json_valid(usage_json) THEN {counts} ELSE 0 END, 0)",
                args,
            ).fetchone()[0]
            if bad:
                raise self._unusable("a recorded response's token counts are unreadable")
            count, *means = db.execute(
                f"SELECT COUNT(*), {fields} FROM llm_recordings_v1 WHERE {where}", args
            ).fetchone()
        if not count:
            return None
        return count, dict(zip(USAGE_FIELDS, (m or 0.0 for m in means)))
