"""The clause coverage a game's contract pane shows: for the terms of the viewed games, which clauses agents
triggered and in how many games, which they never did, and which scenario tests under the viewed folder fire each."""

from __future__ import annotations

import json
from pathlib import Path

from contractlang.api.tests import games_of_record, stored_record
from contractlang.api.view.games import RUN_RECORDS
from contractlang.api.view.index import GameRow, ViewIndex, unwrapped
from contractlang.diagnostics import ContractError
from contractlang.files import FileError
from contractlang.scenario.clauses import terms_key
from contractlang.scenario.played import PlayedContract, game_of_log, summarise
from contractlang.scenario.suite import ContractCoverage, run_tests


def coverage_view(index: ViewIndex) -> dict:
    """`data/coverage.json`: per contract (by `terms_key`), each clause's counts over the viewed games and the
    tests that fire it, with where both came from (files named relative to the viewed root, as in a bundle)."""
    games, files, unread = [], {}, 0
    seen: set[tuple[int, int]] = set()
    for row in index.rows:
        if (row.source, row.line) in seen:  # a rational record's nine games are listed as eighteen rows
            continue
        seen.add((row.source, row.line))
        try:
            found = _games(index.line(row), row, index.paths[row.source].name)
        except Exception:  # noqa: BLE001 -- a record is data from anywhere: one that cannot be replayed is counted
            unread += 1
            continue
        name = index._relative(index.paths[row.source])
        for checked, game in found:
            games.append((checked, game))
            files.setdefault(terms_key(checked.ir), {}).setdefault(name, None)
    played = summarise([], games).contracts
    tested = _tests(index)
    return {
        "games": len(games),
        "unread": unread,
        "contracts": [_played(c, list(files[c.terms])) for c in played],
        "tests": [_tested(c, index) for c in tested],
    }


def _games(raw: bytes, row: GameRow, name: str) -> list:
    if row.line == 0:  # an event log: with a header it names its contract, else nothing judges it
        logged = game_of_log(raw, name)
        return [] if logged is None else [logged]
    obj = unwrapped(json.loads(raw))
    record = stored_record(obj)
    marker, read = RUN_RECORDS.get(row.game, (None, None))
    if record is None and marker in obj:
        record = read(obj)  # a `run --json` record
    return [] if record is None else games_of_record(record)


def _played(c: PlayedContract, files: list[str]) -> dict:
    return {
        "terms": c.terms,
        "contract": c.contract,
        "games": c.games,
        "files": files,
        "clauses": [
            {
                "span": row.clause.span_key,
                "clause": row.clause.label,
                "enforcement": row.clause.enforcement,
                "games": row.games,
                "observable_in": row.observable_in,
                "status": row.status,
            }
            for row in c.clauses
        ],
    }


def _tests(index: ViewIndex) -> tuple[ContractCoverage, ...]:
    """The coverage of the scenario tests in the viewed folder's `.contract` files (none when it has none, or
    when none of them checks)."""
    files = index.contract_files()
    try:
        return run_tests(files, coverage=True).coverage if files else ()
    except (FileError, ContractError):  # a file gone or unreadable since the walk: no tests to show
        return ()


def _tested(c: ContractCoverage, index: ViewIndex) -> dict:
    return {
        "terms": c.terms,
        "contract": c.contract,
        "file": index._relative(Path(c.file)),
        "tests": len({name for clause in c.clauses for name in clause.fired_by}),
        "clauses": [
            {"span": row.clause.span_key, "clause": row.clause.label, "tests": list(row.fired_by), "dead": row.dead}
            for row in c.clauses
        ],
    }
