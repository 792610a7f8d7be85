"""What `contractlang view` shows under a path: its games (one row each, read incrementally, so a sweep still
running is seen as it grows), its tables and its figures. A game's page is built only when it is opened."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic_core import from_json

from contractlang.interpreter.events import CONTRACTSIM_TYPES, CTBENCH_TYPES
from contractlang.vocab import Frozen

MAX_FILES = 2_000  # files looked at under a directory; a viewer over a home directory stops here
MAX_DEPTH = 4
SKIPPED_DIRS = {"contracts", "node_modules", "__pycache__"}
GAME_FILES = (".jsonl", ".json")
TABLE_FILES = (".md",)
FIGURE_FILES = (".png",)
MAX_TABLE_CHARS = 2_000_000


class GameRow(Frozen):
    """One game as the game list shows it; `role` is the side `agent` plays (a rational store's game is listed
    once per role, so either side can be compared)."""

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
    seed: int | None = None
    outcome: str  # "breach" | "no breach" | "forfeit" | "finished" ...
    first_breach: str | None = None  # customer | supplier | red | blue
    breach_week: int | None = None
    utility: float | None = None  # the role's utility (ContractSim, base units) or score (CT-Bench)
    other_utility: float | None = None
    kept: bool  # the record holds the game's events; else its page rebuilds the game
    header: bool = False  # an event log that starts with a header naming its contract and game


class Source(Frozen):
    path: str  # relative to the viewed root ("" when the root is the file)
    kind: str  # performance | rational | runs | ctbench | contractsim-events | ctbench-events
    games: int


class Table(Frozen):
    """A table file: Markdown (`tables.md`) as text, or a sweep's `summary.json` as its rows."""

    path: str
    text: str = ""
    rows: tuple[dict, ...] = ()


class IndexSummary(Frozen):
    """`data/index.json`: what the page loads first; the game rows come in chunks of CHUNK."""

    root: str
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
        self.version = 0  # grows when rows already listed change (a file read again) or a table or figure does
        self.reading = True  # until the first scan is done
        self._scan = threading.Lock()
        if scan:
            self.refresh()

    def candidates(self) -> list[Path]:
        """The files a scan reads: game records, tables and figures."""
        return [p for p in self._walk() if p.suffix.lower() in GAME_FILES + TABLE_FILES + FIGURE_FILES]

    def _walk(self) -> list[Path]:
        if self.root.is_file():
            return [self.root]
        found: list[Path] = []
        for top, dirs, files in os.walk(self.root):
            depth = len(Path(top).relative_to(self.root).parts)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS and depth < MAX_DEPTH)
            found += [Path(top) / f for f in sorted(files) if not f.startswith(".")]
            if len(found) >= MAX_FILES:
                break
        return found[:MAX_FILES]

    def refresh(self, wait: bool = True) -> None:
        """Read what changed since the last scan: new lines of the game files, changed tables, new figures. One
        scan at a time; without `wait`, a scan under way is left to finish."""
        if not self._scan.acquire(blocking=wait):
            return
        try:
            changed = False
            figures = []
            for path in self._walk():
                suffix = path.suffix.lower()
                if path.name == "summary.json" or suffix in TABLE_FILES:
                    changed |= self._read_table(path)
                elif suffix in GAME_FILES:
                    changed |= self._read_games(path)
                elif suffix in FIGURE_FILES:
                    figures.append(path)
            if figures != self._figures:
                self._figures, changed = figures, True
            if changed:
                self.version += 1
        finally:
            self.reading = False
            self._scan.release()

    def _read_table(self, path: Path) -> bool:
        mtime = path.stat().st_mtime
        if path in self._tables and self._tables[path][0] == mtime:
            return False
        text = path.read_text("utf-8", "replace")[:MAX_TABLE_CHARS]
        if path.suffix == ".json":
            try:
                rows = from_json(text)
            except ValueError:  # still being written
                return False
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
        stat = path.stat()
        if state is not None and (stat.st_size, stat.st_mtime) == (state.offset, state.mtime):
            return False
        if state is None:
            state = self._files[path] = _FileState(len(self.paths))
            self.paths.append(path)
        # a whole-file record, or a file rewritten — shorter (a store dropped a cut line), or a new file renamed
        # over it (a finished run's store rewritten in job order: the same size, other records at the offsets
        # read): read it again
        if path.suffix == ".json" or stat.st_size < state.offset or (state.inode and stat.st_ino != state.inode):
            self._forget(state)
        state.inode = stat.st_ino
        with path.open("rb") as handle:
            handle.seek(state.offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1 if path.suffix == ".jsonl" else len(data)
        position = state.offset
        for raw in data[:end].splitlines(keepends=True):
            state.line += 1
            if raw.strip():
                self._add_line(state, raw, position)
            position += len(raw)
        state.offset += end
        state.mtime = stat.st_mtime
        return state.kind in ("contractsim-events", "ctbench-events")  # a log that grew: its page changed

    def _forget(self, state: _FileState) -> None:
        if state.games:
            self.rows = [r for r in self.rows if r.source != state.index]
            self.by_id = {r.id: r for r in self.rows}
            self.version += 1
        state.offset, state.line, state.kind, state.games = 0, 0, None, 0

    def _add(self, row: GameRow, state: _FileState) -> None:
        self.rows.append(row)
        self.by_id[row.id] = row
        state.games += 1

    def _add_line(self, state: _FileState, raw: bytes, offset: int) -> None:
        try:
            obj = from_json(raw)  # pydantic's parser: a third faster than the json module on these records
        except ValueError:
            return
        if not isinstance(obj, dict):
            return
        if state.kind in ("contractsim-events", "ctbench-events"):
            return
        if state.line == 1 and obj.get("type") == "header" and obj.get("game") in ("contractsim", "ctbench"):
            state.kind = f"{obj['game']}-events"
            self._add(_header_row(obj, state.index, self.paths[state.index].name), state)
            return
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
            return
        for row in rows_of(obj, state.index, state.line, offset):
            state.kind = state.kind or row_kind(obj)
            self._add(row, state)

    def sources(self) -> tuple[Source, ...]:
        return tuple(
            Source(
                path=str(p.relative_to(self.root)) if p != self.root else p.name,
                kind=self._files[p].kind or "other",
                games=self._files[p].games,
            )
            for p in self.paths
            if self._files[p].games
        )

    def figure(self, k: int) -> Path | None:
        return self._figures[k] if 0 <= k < len(self._figures) else None

    def summary(self) -> IndexSummary:
        """What the index holds now (a scan may be adding rows meanwhile: `reading` says so)."""
        rows = self.rows
        return IndexSummary(
            root=str(self.root),
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
        )

    def chunk(self, k: int) -> list[dict] | None:
        """Rows k·CHUNK … (k+1)·CHUNK − 1, as the page reads them; None past the end."""
        rows = self.rows
        if k < 0 or (k * CHUNK >= len(rows) and k):
            return None
        return [r.model_dump() for r in rows[k * CHUNK : (k + 1) * CHUNK]]

    def line(self, row: GameRow) -> bytes:
        """The record's line as it is in the file now."""
        with self.paths[row.source].open("rb") as handle:
            if row.line == 0:
                return handle.read()
            handle.seek(row.offset)
            return handle.readline()

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path != self.root else path.name


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


def row_kind(obj: dict) -> str:
    if PLAYED_KEYS <= obj.keys():
        return str(obj["game"])
    if "job" in obj and isinstance(obj.get("run"), dict) and "performances" in obj["run"]:
        return "negotiation"
    if "job" in obj and "run" in obj:
        return "performance"
    if "job" in obj and "runs" in obj:
        return "rational"
    if "board_id" in obj:
        return "ctbench"
    return "runs"


def unwrapped(obj: dict) -> dict:
    """A store line's record (a line may wrap it beside a checksum, as {"record": …})."""
    inner = obj.get("record")
    return inner if isinstance(inner, dict) and len(obj) <= 3 else obj


def rows_of(obj: dict, source: int, line: int, offset: int) -> list[GameRow]:
    """The game rows one JSON line holds: none when it is not a game record."""
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
    except (KeyError, TypeError, IndexError, AttributeError):
        return []
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
        where=f"env {run['env']}",
        role=role,
        agent=str(agent),
        counterparty=str(counterparty),
        seed=run.get("seed"),
        outcome="breach" if firsts else "no breach",
        first_breach=first,
        breach_week=week,
        utility=run.get(f"u_{role}"),
        other_utility=run.get(f"u_{other}"),
        kept=bool(run.get("log") or run.get("trajectory")),
    )


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
    roles = ("customer", "supplier") if header.game == "contractsim" else ("red", "blue")
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
        where=f"board {obj['board_id']}",
        variant=str(obj.get("mode", "")),
        role="red",
        agent=str(obj["red_agent"]),
        counterparty=str(obj["blue_agent"]),
        seed=obj.get("seed"),
        outcome="forfeit" if forfeited else obj.get("end_reason", ""),
        first_breach=forfeited[0] if forfeited else None,
        utility=red,
        other_utility=blue,
        kept=bool(obj.get("log")),
    )
