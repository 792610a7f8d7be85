"""What `contractlang view` shows under a path: its games (one row each, read incrementally, so a sweep still
running is seen as it grows), its tables and its figures. A game's page is built only when it is opened."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_core import from_json

from contractlang.files import MAX_INPUT_BYTES, MAX_RECORDS_BYTES, FileError, open_regular, read_capped
from contractlang.interpreter.ctbench import CTBenchMonitor
from contractlang.interpreter.events import CONTRACTSIM_TYPES, CTBENCH_TYPES
from contractlang.interpreter.rounds import DEFAULT_FLOORS
from contractlang.vocab import Frozen
from games.game import game_type, is_game

MAX_FILES = 2_000  # files looked at under a directory; a viewer over a home directory stops here
MAX_DEPTH = 4
SKIPPED_DIRS = {"contracts", "node_modules", "__pycache__"}
GAME_FILES = (".jsonl", ".json")
TABLE_FILES = (".md",)
FIGURE_FILES = (".png",)
JSON_TABLES = ("summary.json", "tournament.json")
MAX_TABLE_BYTES = 2 * 2**20
WRITING_SECONDS = 60.0
_RECORD_PROBLEM = re.compile(r":[0-9]+$")  # "path:line": a record's problem, not its file's
MAX_PROBLEMS = 200  # files and records not shown, each with why; past this only counted


class GameRow(Frozen):
    """One game as the game list shows it; `role` is the side `agent` plays (a rational store's game is listed
    once per role, so either side can be compared). Numbers are taken strictly: a record whose seed is not an
    integer or whose utility is not a finite number is not a game the list can show."""

    model_config = Frozen.model_config | {"allow_inf_nan": False}

    id: str
    game: str  # contractsim | ctbench
    source: int  # index into ViewIndex.sources
    line: int  # 1-based line of the record (0: the whole file is one event log)
    offset: int  # byte offset of that line
    part: int = -1  # the run within a multi-run line (a rational record); -1: the line is the record
    contract: str
    where: str  # "env 5" or "board 24"
    variant: str = ""  # what else sets the game apart: the CT-Bench mode, the setting a game was told in
    role: str
    agent: str
    counterparty: str
    seed: int | None = Field(None, strict=True)
    outcome: str  # "breach" | "no breach" | "forfeit" | "finished" ...
    first_breach: str | None = None  # customer | supplier | red | blue
    breach_week: int | None = Field(None, strict=True)
    utility: float | None = Field(None, strict=True)  # the role's utility (ContractSim, base units) or score
    other_utility: float | None = Field(None, strict=True)
    kept: bool  # the record holds the game's events; else its page rebuilds the game
    header: bool = False  # an event log that starts with a header naming its contract and game


class Source(Frozen):
    index: int  # the games file's number: its rows' `source`, and its report's `data/report/INDEX.json`
    path: str  # relative to the viewed root ("" when the root is the file)
    kind: str  # performance | rational | runs | ctbench-report | contractsim-events | ctbench-events
    games: int
    rows: int  # rows of the list: a rational game is listed once per role


class Table(Frozen):
    """A table file: Markdown (`tables.md`) as text, a sweep's `summary.json` as its rows, or a tournament's
    `tournament.json` as the report its leaderboard is drawn from (docs/explanation/tournaments.md)."""

    path: str
    text: str = ""
    rows: tuple[dict, ...] = ()
    leaderboard: dict | None = None


class IndexSummary(Frozen):
    """`data/index.json`: what the page loads first; the game rows come in chunks of CHUNK."""

    root: str  # the viewed folder's or file's name: a bundle is meant to be published, its place on disk is not
    version: int  # grows when listed rows changed, or a table or figure did: the page reloads its chunks then
    reading: bool  # the first scan is still under way: more rows are coming
    games: int
    chunk: int
    sources: tuple[Source, ...]
    tables: tuple[Table, ...]
    figures: tuple[str, ...]
    agents: tuple[str, ...]
    contracts: tuple[str, ...]
    wheres: tuple[str, ...]
    problems: tuple[str, ...] = ()  # files and records not shown, each "path[:line]: why"
    more_problems: int = 0  # problems past MAX_PROBLEMS


CHUNK = 1_000


class _FileState:
    """How far a JSON-lines file has been read: new complete lines are read from `offset` on the next scan."""

    def __init__(self, index: int):
        self.index = index
        self.offset = 0
        self.line = 0
        self.mtime = 0.0
        self.inode = 0
        self.kind: str | None = None
        self.games = 0
        self.rows = 0


class ViewIndex:
    """The games, tables and figures under `root` (a file or a directory), re-read on `refresh` as files grow."""

    def __init__(self, root: Path, scan: bool = True):
        self.root = root.resolve()
        self.rows: list[GameRow] = []  # only appended to, or replaced whole: readers need no lock
        self.by_id: dict[str, GameRow] = {}
        self.paths: list[Path] = []
        self._files: dict[Path, _FileState] = {}
        self._tables: dict[Path, tuple[float, Table]] = {}
        self._figures: list[Path] = []
        self.problems: dict[str, str] = {}  # "path" or "path:line" -> why it is not shown
        self.version = 0  # grows when rows already listed change (a file read again) or a table or figure does
        self.reading = True  # until the first scan is done
        self._scan = threading.Lock()
        if scan:
            self.refresh()

    def candidates(self) -> list[Path]:
        """The files a scan reads: game records, tables and figures."""
        return [p for p in self._walk() if p.suffix.lower() in GAME_FILES + TABLE_FILES + FIGURE_FILES]

    def _walk(self) -> list[Path]:
        """The files under the root (the root itself when it is a file); a link that leads out of the root is
        left out, so nothing outside what the user named is listed, served or bundled."""
        if not self.root.is_dir():
            return [self.root]
        found: list[Path] = []
        for top, dirs, files in os.walk(self.root):
            depth = len(Path(top).relative_to(self.root).parts)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS and depth < MAX_DEPTH)
            for name in sorted(files):
                path = Path(top) / name
                if name.startswith("."):
                    continue
                if self.inside(path):
                    found.append(path)
                elif path.suffix.lower() in GAME_FILES + TABLE_FILES + FIGURE_FILES:
                    self.problems[self._relative(path)] = "a link to a file outside the viewed folder; not read"
            if len(found) >= MAX_FILES:
                break
        return found[:MAX_FILES]

    def contract_files(self) -> list[Path]:
        """The `.contract` files under the root (none when the root is a file): where its scenario tests are."""
        return [p for p in self._walk() if p.suffix == ".contract"] if self.root.is_dir() else []

    def inside(self, path: Path) -> bool:
        """Whether `path`, links followed, is the root or lies under it."""
        return Path(os.path.realpath(path)).is_relative_to(self.root)

    def refresh(self, wait: bool = True) -> None:
        """Read what changed since the last scan: new lines of the game files, changed tables, new figures. One
        scan at a time; without `wait`, a scan under way is left to finish."""
        if not self._scan.acquire(blocking=wait):
            return
        try:
            # a file's own problem is found again by this scan if it still has it; a record's stays with its line
            before = self.problems
            self.problems = {k: v for k, v in before.items() if _RECORD_PROBLEM.search(k)}
            changed = False
            figures = []
            for path in self._walk():
                suffix = path.suffix.lower()
                if path.name in JSON_TABLES or suffix in TABLE_FILES:
                    changed |= self._read_table(path)
                elif suffix in GAME_FILES:
                    changed |= self._read_games(path)
                elif suffix in FIGURE_FILES:
                    figures.append(path)
            if figures != self._figures:
                self._figures, changed = figures, True
            if changed or self.problems != before:
                self.version += 1
        finally:
            self.reading = False
            self._scan.release()

    def _read_table(self, path: Path) -> bool:
        try:
            mtime = path.stat().st_mtime
        except OSError as exc:  # gone since the walk, or a link to nothing
            return self._problem(self._relative(path), f"cannot read: {exc.strerror or exc}")
        if path in self._tables and self._tables[path][0] == mtime:
            return False
        try:
            text = read_capped(path, MAX_TABLE_BYTES).decode("utf-8", "replace")
        except FileError as exc:
            return self._problem(self._relative(path), _why(exc, path))
        if path.suffix == ".json":
            try:
                rows = from_json(text, allow_inf_nan=False)
            except ValueError:  # still being written, or not JSON a browser reads
                return False
            if path.name == "tournament.json":
                if not isinstance(rows, dict) or not isinstance(rows.get("ratings"), list):
                    return self._problem(self._relative(path), "not a tournament report (no ratings)")
                table = Table(path=self._relative(path), leaderboard=rows)
            else:
                table = Table(
                    path=self._relative(path),
                    rows=tuple(r for r in rows if isinstance(r, dict)) if isinstance(rows, list) else (),
                )
        else:
            table = Table(path=self._relative(path), text=text)
        self._tables[path] = (mtime, table)
        return True

    def _read_games(self, path: Path) -> bool:
        state = self._files.get(path)
        where = self._relative(path)
        try:
            with open_regular(path, MAX_RECORDS_BYTES) as handle:
                stat = os.fstat(handle.fileno())
                if state is not None and (stat.st_size, stat.st_mtime) == (state.offset, state.mtime):
                    return False
                if state is None:
                    state = self._files[path] = _FileState(len(self.paths))
                    self.paths.append(path)
                # a whole-file record, or a file rewritten — shorter (a store dropped a cut line), or a new file
                # renamed over it (a finished run's store rewritten in job order: the same size, other records at
                # the offsets read): read it again
                if (
                    path.suffix == ".json"
                    or stat.st_size < state.offset
                    or (state.inode and stat.st_ino != state.inode)
                ):
                    self._forget(state)
                state.inode = stat.st_ino
                handle.seek(state.offset)
                lines = _complete_lines(handle, path)
        except FileError as exc:
            if state is not None:
                self._forget(state)
            return self._problem(where, _why(exc, path))
        changed = self.problems.pop(where, None) is not None
        position = state.offset
        for raw in lines:
            state.line += 1
            if raw.strip():
                changed |= self._add_line(state, raw, position)
            position += len(raw)
        state.offset = position
        state.mtime = stat.st_mtime
        if (state.kind or "").endswith("-events"):
            self._log_outcome(state, path)
            return True  # a log that grew: its page changed
        return changed

    def _log_outcome(self, state: _FileState, path: Path) -> None:
        """An event log with a header: its row's outcome from its events, replayed through the contract's monitor
        (who breached first and when; CT-Bench: who forfeited); left as it is when they cannot be read."""
        row = next((r for r in self.rows if r.source == state.index), None)
        if row is None or not row.header:
            return
        try:
            outcome = log_outcome(record_line(path, row), row.game, path.name)
        except (FileError, ValueError):
            return
        if outcome:
            new = row.model_copy(update=outcome)
            self.rows = [new if r is row else r for r in self.rows]
            self.by_id[row.id] = new

    def _problem(self, where: str, why: str) -> bool:
        """Note a file or record not shown; whether that changed what the index says."""
        if self.problems.get(where) == why:
            return False
        self.problems[where] = why
        return True

    def _forget(self, state: _FileState) -> None:
        lines = self._relative(self.paths[state.index]) + ":"
        self.problems = {k: v for k, v in self.problems.items() if not k.startswith(lines)}
        if state.rows:
            self.rows = [r for r in self.rows if r.source != state.index]
            self.by_id = {r.id: r for r in self.rows}
            self.version += 1
        state.offset, state.line, state.kind, state.games, state.rows = 0, 0, None, 0, 0

    def _add(self, row: GameRow, state: _FileState) -> None:
        self.rows.append(row)
        self.by_id[row.id] = row
        state.rows += 1
        state.games += not row.id.endswith("-s")  # a rational game's second row, its Supplier's

    def _add_line(self, state: _FileState, raw: bytes, offset: int) -> bool:
        """The game rows of one line; whether the line is a record that cannot be listed (noted as a problem)."""
        try:
            obj = from_json(raw)  # pydantic's parser: a third faster than the json module on these records
        except ValueError:
            return False
        if not isinstance(obj, dict):
            return False
        if (state.kind or "").endswith("-events"):
            return False
        if state.line == 1 and obj.get("type") == "header" and is_game(str(obj.get("game"))):
            state.kind = f"{obj['game']}-events"
            self._add(_header_row(obj, state.index, self.paths[state.index].name), state)
            return False
        if obj.get("type") in CONTRACTSIM_TYPES + CTBENCH_TYPES and state.line == 1:
            state.kind = "contractsim-events" if obj["type"] in CONTRACTSIM_TYPES else "ctbench-events"
            name = self.paths[state.index].name
            self._add(
                GameRow(
                    id=f"g{state.index}",
                    game=state.kind.split("-")[0],
                    source=state.index,
                    line=0,
                    offset=0,
                    contract=name,
                    where="",
                    role="",
                    agent="",
                    counterparty="",
                    outcome="events only",
                    kept=True,
                ),
                state,
            )
            return False
        try:
            rows = rows_of(obj, state.index, state.line, offset)
        except ValueError as exc:
            return self._problem(f"{self._relative(self.paths[state.index])}:{state.line}", f"not listed: {exc}")
        for row in rows:
            state.kind = state.kind or row_kind(obj)
            self._add(row, state)
        return False

    def sources(self) -> tuple[Source, ...]:
        return tuple(
            Source(
                index=k,
                path=str(p.relative_to(self.root)) if p != self.root else p.name,
                kind=self._files[p].kind or "other",
                games=self._files[p].games,
                rows=self._files[p].rows,
            )
            for k, p in enumerate(self.paths)
            if self._files[p].rows
        )

    def writing(self) -> bool:
        """Whether a games file changed in the last WRITING_SECONDS: a run is still writing under the root."""
        return any(time.time() - f.mtime < WRITING_SECONDS for f in self._files.values())

    def games_file(self, k: int, kind: str) -> Path | None:
        """The games file numbered `k` when it holds games of `kind`."""
        if 0 <= k < len(self.paths) and self._files[self.paths[k]].kind == kind:
            return self.paths[k]
        return None

    def figure(self, k: int) -> Path | None:
        return self._figures[k] if 0 <= k < len(self._figures) else None

    def read_figure(self, path: Path) -> bytes:
        """A figure's bytes, capped; a `FileError` when it has since become a link out of the root."""
        if not self.inside(path):
            raise FileError(f"{self._relative(path)}: a link to a file outside the viewed folder; not read")
        return read_capped(path, MAX_INPUT_BYTES)

    def summary(self) -> IndexSummary:
        """What the index holds now (a scan may be adding rows meanwhile: `reading` says so)."""
        rows = self.rows
        problems = [f"{where}: {why}" for where, why in sorted(self.problems.items())]
        return IndexSummary(
            root=self.root.name,
            version=self.version,
            reading=self.reading,
            games=len(rows),
            chunk=CHUNK,
            sources=self.sources(),
            tables=tuple(t for _, (_, t) in sorted(self._tables.items())),
            figures=tuple(self._relative(p) for p in self._figures),
            agents=tuple(sorted({r.agent for r in rows if r.agent})),
            contracts=tuple(sorted({r.contract for r in rows})),
            wheres=tuple(sorted({r.where for r in rows if r.where}, key=_natural)),
            problems=tuple(problems[:MAX_PROBLEMS]),
            more_problems=max(0, len(problems) - MAX_PROBLEMS),
        )

    def chunk(self, k: int) -> list[dict] | None:
        """Rows k·CHUNK … (k+1)·CHUNK − 1, as the page reads them; None past the end."""
        rows = self.rows
        if k < 0 or (k * CHUNK >= len(rows) and k):
            return None
        return [r.model_dump() for r in rows[k * CHUNK : (k + 1) * CHUNK]]

    def line(self, row: GameRow) -> bytes:
        """The record's line as it is in the file now (a `FileError` when it cannot be read, or has since become a
        link out of the root)."""
        path = self.paths[row.source]
        if not self.inside(path):
            raise FileError(f"{self._relative(path)}: a link to a file outside the viewed folder; not read")
        return record_line(path, row)

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path != self.root else path.name


def record_line(path: Path, row: GameRow) -> bytes:
    """The line of `path` that holds `row`'s record (the whole file for an event log), capped; a `FileError`
    names the file by its name only (a page may be published)."""
    try:
        with open_regular(path, MAX_RECORDS_BYTES) as handle:
            if row.line == 0:
                data = handle.read(MAX_INPUT_BYTES + 1)
            else:
                handle.seek(row.offset)
                data = handle.readline(MAX_INPUT_BYTES + 1)
    except FileError as exc:
        raise FileError(f"{path.name}: {_why(exc, path)}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise FileError(f"{path.name}: more than {MAX_INPUT_BYTES // 2**20} MiB; not read")
    return data


def _complete_lines(handle, path: Path) -> list[bytes]:
    """The lines from where `handle` is, each capped; a `.jsonl` file's last line only once complete (a run may
    still be writing it)."""
    lines = []
    while line := handle.readline(MAX_INPUT_BYTES + 1):
        if len(line) > MAX_INPUT_BYTES:
            raise FileError(f"{path.name}: a line of more than {MAX_INPUT_BYTES // 2**20} MiB; not read")
        if path.suffix == ".jsonl" and not line.endswith(b"\n"):
            break
        lines.append(line)
    return lines


def _why(exc: FileError, path: Path) -> str:
    """A reader's message without the path it starts with (the list names the file relative to the root)."""
    return str(exc).removeprefix(f"{path}: ").removeprefix(f"{path.name}: ")


def log_outcome(raw: bytes, game: str, name: str) -> dict:
    """The outcome fields of an event log's row, from its header's contract and its events ({} when the header
    names no contract that can be read)."""
    from contractlang.interpreter import Rules
    from contractlang.interpreter.trace import TraceError, header_contract, read_events, read_header, replay
    from contractlang.vocab import RULE_SETS

    try:
        header = read_header(raw, name)
        if header is None:
            return {}
        checked, _ = header_contract(header, name)
        rules = Rules.named(header.rules) if game_type(game).takes("rules") and header.rules in RULE_SETS else None
        events = read_events(raw, name, game)
        monitor, _ = replay(checked.ir, events, name, rules, header.floors or DEFAULT_FLOORS)
    except TraceError:
        return {}
    if isinstance(monitor, CTBenchMonitor):  # its verdict is who forfeited, not a week's breach
        forfeited = list(monitor.forfeited)
        return {
            "outcome": "forfeit" if forfeited else "no forfeit",
            "first_breach": forfeited[0] if forfeited else None,
        }
    verdict = monitor.verdict()
    return {
        "outcome": "breach" if verdict.first_breach else "no breach",
        "first_breach": verdict.first_breach,
        "breach_week": verdict.week,
    }


def _natural(text: str) -> tuple:
    kind, _, number = text.partition(" ")
    return (kind, int(number)) if number.isdigit() else (kind, 0)


PLAYED_KEYS = {"game", "setup", "agents", "outcome"}  # a `games.game.PlayRecord`: any registered game's record


def _played_row(obj: dict, id: str, base: dict) -> GameRow:
    """A `PlayRecord` line: the first role's agent against the second's, each role's outcome."""
    roles = list(obj["agents"])
    other = roles[1] if len(roles) > 1 else None
    return GameRow(
        id=id,
        game=str(obj["game"]),
        **base,
        contract=str(obj["game"]),
        where="",
        role=roles[0],
        agent=str(obj["agents"][roles[0]]),
        counterparty=str(obj["agents"].get(other, "")),
        seed=obj.get("seed"),
        outcome="finished",
        utility=obj["outcome"].get(roles[0]),
        other_utility=obj["outcome"].get(other),
        kept=bool(obj.get("events")),
    )


def _match(job) -> bool:
    """Whether a store's job is a tournament's game: it names both seats' agents, not one role's."""
    return isinstance(job, dict) and "customer" in job and "supplier" in job and "role" not in job


def row_kind(obj: dict) -> str:
    if PLAYED_KEYS <= obj.keys():
        return str(obj["game"])
    if "job" in obj and isinstance(obj.get("run"), dict) and "performances" in obj["run"]:
        return "negotiation"
    if "job" in obj and "run" in obj:
        return "tournament" if _match(obj["job"]) else "performance"
    if "job" in obj and "runs" in obj:
        return "rational"
    if "board_id" in obj:
        return "ctbench-report"
    return "runs"


def unwrapped(obj: dict) -> dict:
    """A store line's record (a line may wrap it beside a checksum, as {"record": …})."""
    inner = obj.get("record")
    return inner if isinstance(inner, dict) and len(obj) <= 3 else obj


def rows_of(obj: dict, source: int, line: int, offset: int) -> list[GameRow]:
    """The game rows one JSON line holds: none when it is not a game record; a ValueError saying why when it is
    one that cannot be listed."""
    obj = unwrapped(obj)
    base = {"source": source, "line": line, "offset": offset}
    if PLAYED_KEYS <= obj.keys():
        return [_played_row(obj, f"g{source}-{line}", base)]
    try:
        if "job" in obj and isinstance(obj.get("run"), dict) and "performances" in obj["run"]:
            return [
                _contractsim_row(
                    run,
                    f"g{source}-{line}-{k}",
                    {**base, "part": k, "variant": obj["job"]["setting"]},
                    "customer",
                    run["customer"],
                    run["supplier"],
                )
                for k, run in enumerate(obj["run"]["performances"])
            ]
        if "job" in obj and "run" in obj and _match(obj["job"]):
            # a tournament's game (games.tournament): both seats are players of the field, so it is listed once per role
            job, run = obj["job"], obj["run"]
            return [
                _contractsim_row(
                    run,
                    f"g{source}-{line}-{role[0]}",
                    base,
                    role,
                    job[role],
                    job["supplier" if role == "customer" else "customer"],
                )
                for role in ("customer", "supplier")
            ]
        if "job" in obj and "run" in obj:
            job, run = obj["job"], obj["run"]
            return [
                _contractsim_row(
                    run,
                    f"g{source}-{line}",
                    {**base, "variant": job.get("setting") or ""},
                    job["role"],
                    job["agent"],
                    job["counterparty"],
                )
            ]
        if "job" in obj and "runs" in obj:
            return [
                _contractsim_row(
                    run,
                    f"g{source}-{line}-{k}-{role[0]}",
                    {**base, "part": k},
                    role,
                    run[role],
                    run["supplier" if role == "customer" else "customer"],
                )
                for k, run in enumerate(obj["runs"])
                for role in ("customer", "supplier")
            ]
        if "board_id" in obj and "red_agent" in obj:
            return [_ctbench_row(obj, f"g{source}-{line}", base)]
        if {"weeks", "customer", "supplier", "env", "customer_first_violation"} <= obj.keys():
            return [_contractsim_row(obj, f"g{source}-{line}", base, "customer", obj["customer"], obj["supplier"])]
    except BadRecord:
        raise
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first["loc"])
        raise BadRecord(f"{field + ': ' if field else ''}{first['msg']}") from None
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        what = (
            f"without {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else "with a field of the wrong type"
        )
        raise BadRecord(f"a game record {what}") from None
    return []


def _contractsim_row(run: dict, id: str, base: dict, role: str, agent: str, counterparty: str) -> GameRow:
    firsts = [
        (w, r)
        for r, w in (
            ("customer", run.get("customer_first_violation")),
            ("supplier", run.get("supplier_first_violation")),
        )
        if w is not None
    ]
    week, first = min(firsts) if firsts else (None, None)
    other = "supplier" if role == "customer" else "customer"
    return GameRow(
        id=id,
        game="contractsim",
        **base,
        contract=str(run["contract"]),
        where=f"env {_integer(run['env'], 'env')}",
        role=role,
        agent=str(agent),
        counterparty=str(counterparty),
        seed=_seed(run),
        outcome="breach" if firsts else "no breach",
        first_breach=first,
        breach_week=week,
        utility=_number(run.get(f"u_{role}"), f"u_{role}"),
        other_utility=_number(run.get(f"u_{other}"), f"u_{other}"),
        kept=bool(run.get("log") or run.get("trajectory")),
    )


class BadRecord(ValueError):
    """A game record the list cannot show, and why."""


def _integer(value, field: str) -> int:
    """`value` when it is an integer (never a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRecord(f"{field}: {_shown(value)} is not an integer")
    return value


def _number(value, field: str) -> float | None:
    """`value` when it is a finite number or None."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise BadRecord(f"{field}: {_shown(value)} is not a finite number")
    return value


def _seed(obj: dict) -> int | None:
    return None if obj.get("seed") is None else _integer(obj["seed"], "seed")


def _shown(value) -> str:
    """A value as JSON writes it, shortened: the reason names what the record holds."""
    return json.dumps(value)[:40]


def _header_row(obj: dict, source: int, name: str) -> GameRow:
    """An event log's row from its header; what the header does not say well is left blank (its page checks it)."""
    from contractlang.interpreter.trace import LogHeader

    row = {
        "id": f"g{source}",
        "game": obj["game"],
        "source": source,
        "line": 0,
        "offset": 0,
        "contract": name,
        "where": "",
        "role": "",
        "agent": "",
        "counterparty": "",
        "outcome": "events only",
        "kept": True,
        "header": True,
    }
    try:
        header = LogHeader.model_validate(obj, strict=True)
    except ValueError:
        return GameRow(**row)
    roles = game_type(header.game).roles
    where = (
        f"env {header.env}" if header.env is not None else f"board {header.board}" if header.board is not None else ""
    )
    return GameRow(
        **{
            **row,
            "contract": header.name,
            "where": where,
            "role": roles[0],
            "seed": header.seed,
            "agent": header.agents.get(roles[0], ""),
            "counterparty": header.agents.get(roles[1], ""),
            "variant": header.mode or "",
        }
    )


def _ctbench_row(obj: dict, id: str, base: dict) -> GameRow:
    scores = obj.get("scores")
    red, blue = (scores["red"], scores["blue"]) if isinstance(scores, dict) else scores
    forfeited = list(obj.get("forfeited") or ())
    terms = obj.get("contract_terms") or {}
    condition = obj.get("condition", "")
    contract = terms.get("name", condition) if condition == "file" else condition
    return GameRow(
        id=id,
        game="ctbench",
        **base,
        contract=str(contract),
        where=f"board {_integer(obj['board_id'], 'board_id')}",
        variant=str(obj.get("mode", "")),
        role="red",
        agent=str(obj["red_agent"]),
        counterparty=str(obj["blue_agent"]),
        seed=_seed(obj),
        outcome="forfeit" if forfeited else obj.get("end_reason", ""),
        first_breach=forfeited[0] if forfeited else None,
        utility=_number(red, "scores.red"),
        other_utility=_number(blue, "scores.blue"),
        kept=bool(obj.get("log")),
    )
