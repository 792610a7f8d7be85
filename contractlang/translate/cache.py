"""SQLite cache and audit trail for translations, so any run can be replayed offline.

Key: (schema version, backend, model, SHA-256 of the input text). Each record keeps the final DSL and
result; each attempt keeps the raw response, diagnostics, token counts and timing. API keys are never
stored: requests are recorded as the messages sent, not as HTTP headers.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

SCHEMA_VERSION = 2  # 2: translations carry well_formed, inconsistencies and notes

_DDL = """
CREATE TABLE IF NOT EXISTS translations (
  key TEXT PRIMARY KEY, schema_version INTEGER, backend TEXT, model TEXT, input_sha256 TEXT,
  created_at REAL, ok INTEGER, result_json TEXT);
CREATE TABLE IF NOT EXISTS attempts (
  key TEXT, attempt INTEGER, request_json TEXT, response_text TEXT, diagnostics_json TEXT,
  input_tokens INTEGER, output_tokens INTEGER, seconds REAL, error TEXT,
  PRIMARY KEY (key, attempt));
"""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(backend: str, model: str, text: str) -> str:
    raw = f"{SCHEMA_VERSION}\x1f{backend}\x1f{model}\x1f{text_sha256(text)}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class TranslationCache:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(_DDL)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, key: str) -> dict | None:
        with self._connect() as db:
            row = db.execute("SELECT result_json FROM translations WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, backend: str, model: str, text: str, result: dict, attempts: list[dict]) -> None:
        """Store a finished translation and its attempts in one transaction (all or nothing)."""
        with self._connect() as db:
            db.execute("DELETE FROM attempts WHERE key = ?", (key,))
            db.execute("INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, SCHEMA_VERSION, backend, model, text_sha256(text), time.time(), int(result["ok"]),
                        json.dumps(result)))
            db.executemany(
                "INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, a["attempt"], json.dumps(a.get("request")), a.get("response_text"),
                  json.dumps(a.get("diagnostics", [])), a.get("input_tokens"), a.get("output_tokens"),
                  a.get("seconds"), a.get("error")) for a in attempts])

    def attempts(self, key: str) -> list[dict]:
        with self._connect() as db:
            rows = db.execute("SELECT attempt, response_text, diagnostics_json, input_tokens, output_tokens, error "
                              "FROM attempts WHERE key = ? ORDER BY attempt", (key,)).fetchall()
        return [{"attempt": r[0], "response_text": r[1], "diagnostics": json.loads(r[2]), "input_tokens": r[3],
                 "output_tokens": r[4], "error": r[5]} for r in rows]
