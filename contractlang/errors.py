"""The library's one error for a name that names nothing, so callers catch exactly it (never a bare KeyError)."""

from __future__ import annotations


class UnknownName(LookupError):
    """An unknown agent, policy, guidance clause, board ID, environment, setting or other chosen name; the
    message says what the choices are."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RunEnded(Exception):
    """A run of games that stopped before its end, by a limit, its errors or an interrupt: the message says
    why in one line and how to resume; `code` is the exit status the command ends with."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code
