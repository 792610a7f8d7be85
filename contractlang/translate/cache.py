"""SQLite cache and audit trail for translations, so any run can be replayed offline.

Key: (schema version, backend, model, endpoint, SHA-256 of the input text). A finished translation is
kept with its final DSL and result; every run, finished or failed, leaves one audit row per attempt with
the raw response, diagnostics, token counts, timing and error. API keys are never stored: requests are
recorded as the messages sent, not as HTTP headers, and every text is redacted before it is written.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path

from contractlang.files import SqliteFile

SCHEMA_VERSION = 2  # 2: translations carry well_formed, inconsistencies and notes; audit rows per run

_OURS = {"translations_v2", "audit_v2", "translations", "attempts"}  # v1 tables are left as they are
_DDL = """
CREATE TABLE IF NOT EXISTS translations_v2 (
  key TEXT PRIMARY KEY, schema_version INTEGER, backend TEXT, model TEXT, endpoint TEXT, input_sha256 TEXT,
  created_at REAL, ok INTEGER, result_json TEXT);
CREATE TABLE IF NOT EXISTS audit_v2 (
  key TEXT, run TEXT, attempt INTEGER, created_at REAL, request_json TEXT, response_text TEXT,
  diagnostics_json TEXT, input_tokens INTEGER, output_tokens INTEGER, seconds REAL, error TEXT,
  PRIMARY KEY (key, run, attempt));
"""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(backend: str, model: str, text: str, endpoint: str = "") -> str:
    raw = f"{SCHEMA_VERSION}\x1f{backend}\x1f{model}\x1f{endpoint}\x1f{text_sha256(text)}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class TranslationCache:
    """A cache file of ours: refused with one line when it is corrupt or another program's database."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._file = SqliteFile(self.path, _OURS, _DDL, "translation cache", "--cache")

    def _db(self):
        return self._file.session()

    def get(self, key: str) -> dict | None:
        """The kept translation for `key`; None for none, or for a row that is not a translation's JSON (that
        one is translated afresh and replaced)."""
        with self._db() as db:
            row = db.execute("SELECT result_json FROM translations_v2 WHERE key = ?", (key,)).fetchone()
        try:
            value = json.loads(row[0]) if row else None
        except (TypeError, ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    def put(
        self, key: str, backend: str, model: str, endpoint: str, text: str, result: dict | None, attempts: list[dict]
    ) -> None:
        """Audit one run's attempts and, when `result` is given, keep it as the answer (all or nothing)."""
        run, now = uuid.uuid4().hex, time.time()
        with self._db() as db:
            if result is not None:
                db.execute(
                    "INSERT OR REPLACE INTO translations_v2 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        SCHEMA_VERSION,
                        backend,
                        model,
                        endpoint,
                        text_sha256(text),
                        now,
                        int(result["ok"]),
                        json.dumps(result),
                    ),
                )
            db.executemany(
                "INSERT INTO audit_v2 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        key,
                        run,
                        a["attempt"],
                        now,
                        json.dumps(a.get("request")),
                        a.get("response_text"),
                        json.dumps(a.get("diagnostics", [])),
                        a.get("input_tokens"),
                        a.get("output_tokens"),
                        a.get("seconds"),
                        a.get("error"),
                    )
                    for a in attempts
                ],
            )

    def attempts(self, key: str) -> list[dict]:
        """Every audited attempt for `key`, run by run in the order they were made."""
        with self._db() as db:
            rows = db.execute(
                "SELECT attempt, response_text, diagnostics_json, input_tokens, output_tokens, error "
                "FROM audit_v2 WHERE key = ? ORDER BY created_at, run, attempt",
                (key,),
            ).fetchall()
        return [
            {
                "attempt": r[0],
                "response_text": r[1],
                "diagnostics": json.loads(r[2]),
                "input_tokens": r[3],
                "output_tokens": r[4],
                "error": r[5],
            }
            for r in rows
        ]
