"""The CT-Bench authors' published game logs (timwyse/cooperative_ai, `public_logs/`), read into typed games.

A game directory holds `metadata.json` (model pair, grid, stratum, condition) and `event_log_<game>.json` (per
turn, per player: positions, chips, the proposal made and its outcome, the move made and how it was paid; turn 0
carries the negotiated contract; `final_state` the scores). Their P0 is our red (14 red chips), P1 our blue.

Contract terms become contractlang source and go through the parser and checker like any other contract:
judge-JSON tile entries become `cover` entries and finishing-point entries `on goal` entries.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from contractlang.files import (
    RECORD_CHECK,
    FileError,
    check_writable,
    parse_json,
    read_capped,
    read_lines_capped,
    write_atomically,
)
from contractlang.interpreter import Rules
from contractlang.interpreter.events import ChipCounts
from contractlang.progress import Advance
from contractlang.vocab import Frozen
from games.ctbench.board import (
    BOARD_SIZE,
    CHIP_VALUE,
    GOAL,
    GOAL_BONUS,
    PLAYERS,
    Player,
    Tile,
    benchmark_boards,
    board_from_rows,
)
from games.ctbench.game import Arrangement, Stats, Trade, total
from games.ctbench.judge import colour_of, read_terms
from games.ctbench.play import GameRecord
from games.ctbench.sweep import GameSpec
from games.runner import read_records

CONDITION_OF_CONTRACT_TYPE = {
    None: "none",
    "strict": "prog_trading",
    "contract_for_finishing": "prog_points",
    "tile_with_judge_implementation": "nl_trading",
}
MOVE_TYPES = ("regular", "pay4partner", "move_under_contract", "no_move")
OUTCOMES = ("accepted", "rejected", "invalid")
_TURN_PREFIX = re.compile(r"^Turn:\s*\d+:\s*")


class ImportProblem(Exception):
    """One game directory that cannot be imported: `source: message`."""

    def __init__(self, source: str, message: str):
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class LoggedPlayerTurn(Frozen):
    """One player's part of one logged turn."""

    player: Player
    start: Tile
    end: Tile
    chips_start: ChipCounts
    chips_end: ChipCounts
    offer: Trade | Arrangement | None = None  # proposer's view: give/i_cover is what the proposer hands over
    outcome: Literal["accepted", "rejected", "invalid"] | None = None
    move: Tile | None = None  # the tile entered; the log names a tile only when the move succeeded
    move_type: str = "no_move"
    covered_by_partner: bool = False  # the partner honoured a Pay-for-Partner coverage for this move
    broke_promise: str | None = None  # the colour of a coverage this player refused, leaving the partner stuck


class LoggedTurn(Frozen):
    number: int
    players: tuple[LoggedPlayerTurn, ...]

    def of(self, player: Player) -> LoggedPlayerTurn | None:
        return next((p for p in self.players if p.player == player), None)


class ImportedGame(Frozen):
    """One published game: what was played and what the authors' engine scored."""

    source: str  # the game directory, relative to the imported root
    run_id: str
    model_pair: str
    red_model: str
    blue_model: str
    grid_id: int
    board_id: int  # position in the paper board set (`ctbench boards --set paper`)
    board_rows: tuple[str, ...]
    board_class: str
    bucket: str
    condition: str
    mode: Literal["pfp", "trade"]
    visible: bool
    contract_formed: bool = False
    contract_source: str | None = None  # the judge's terms as contractlang source (Prog-Trading / Prog-Points)
    contract_terms: dict | None = None  # every entry the judge wrote, as written (the `paper` reading)
    judge_terms: dict | None = None  # the judge's JSON itself, for a reading under other rules ([CT-24a])
    contract_notes: tuple[str, ...] = ()  # judge entries left out of the contract, with the reason
    transcript: str = ""  # NL-Trading: the negotiation the judge reads
    negotiation: tuple[str, ...] = ()  # every condition, from the verbose log when present: "red: …", "blue: …"
    turns: tuple[LoggedTurn, ...] = ()
    complete: bool
    superseded: bool = False  # a later complete run of the same (models, board, condition, mode, visibility)
    total_turns: int | None = None
    final_positions: tuple[Tile, Tile] | None = None
    final_chips: tuple[ChipCounts, ChipCounts] | None = None
    scores: tuple[int, int] | None = None
    promises_kept: tuple[int, int] = (0, 0)  # Pay-for-Partner coverages honoured by red, by blue
    promises_broken: tuple[int, int] = (0, 0)
    contract_moves: tuple[int, int] = (0, 0)  # moves paid through the contract, by mover
    trades_proposed: int = 0
    trades_accepted: int = 0
    arrangements_proposed: int = 0
    arrangements_accepted: int = 0

    def game_key(self) -> tuple:
        return (self.model_pair, self.board_id, self.condition, self.mode, self.visible)

    def record(self, repeat: int = 0) -> GameRecord:
        """The game as our run record, so the metrics and the report read it like one of our sweeps."""
        if not self.complete:
            raise ValueError(f"{self.source}: the log ends before the game did")
        bench = benchmark_boards("paper")[self.board_id]
        finished = tuple(p for p, pos in zip(PLAYERS, self.final_positions) if tuple(pos) == GOAL)
        raw = tuple(
            GOAL_BONUS + CHIP_VALUE * (c.red + c.blue + c.green) if p in finished else 0
            for p, c in zip(PLAYERS, self.final_chips)
        )
        honoured, unfulfilled = sum(self.promises_kept), sum(self.promises_broken)
        traded = sum(
            total(p.offer.give) + total(p.offer.receive)
            for t in self.turns
            for p in t.players
            if isinstance(p.offer, Trade) and p.outcome == "accepted"
        )
        stats = Stats(
            trades=self.trades_accepted,
            chips_traded=traded,
            proposals=self.trades_proposed + self.arrangements_proposed,
            arrangements_proposed=self.arrangements_proposed,
            arrangements_accepted=self.arrangements_accepted,
            honoured=honoured,
            unfulfilled=unfulfilled,
            contract_moves=sum(self.contract_moves),
            moves=sum(1 for t in self.turns for p in t.players if p.move is not None),
        )
        coverage = {
            p: {
                "honoured": self.promises_kept[i],
                "unfulfilled": self.promises_broken[i],
                "contract_paid": self.contract_moves[1 - i],
                "contract_forfeit": 0,
            }
            for i, p in enumerate(PLAYERS)
        }
        return GameRecord(
            board_id=self.board_id,
            board_set="paper",
            rules="authors",
            board_class=self.board_class,
            condition=self.condition,
            mode=self.mode,
            red_agent=self.red_model,
            blue_agent=self.blue_model,
            seed=0,
            repeat=repeat,
            visible=self.visible,
            contract_active=self.contract_formed,
            contract_terms=self.contract_terms,
            transcript=self.transcript,
            coverage=coverage,
            finished=finished,
            forfeited=(),
            raw_scores=raw,
            scores=self.scores,
            baselines=tuple(bench.board.baseline(p) for p in PLAYERS),
            rounds=self.total_turns or 0,
            end_reason="logged",
            stats=stats,
        )


def game_directories(root: Path) -> Iterator[Path]:
    """Every directory under `root` holding a `metadata.json`, in sorted order. An entry that vanishes during the
    walk (a live tree such as /proc) is passed over; a directory that cannot be listed is one line naming it."""

    def refuse(exc: OSError) -> None:
        if not isinstance(exc, FileNotFoundError):
            raise FileError(f"{exc.filename}: cannot read: {exc.strerror or exc}")

    found = (
        Path(d) / "metadata.json"
        for d, subdirs, files in os.walk(root, onerror=refuse)
        if "metadata.json" in files or "metadata.json" in subdirs
    )
    for meta in sorted(found):
        yield meta.parent


def import_game(directory: Path, root: Path) -> ImportedGame:
    """Read one game directory; raises `ImportProblem` naming the file and the field at fault."""
    source = str(directory.relative_to(root)) if directory != root else directory.name
    meta = _json(directory / "metadata.json", source)
    events = sorted(directory.glob("event_log_*.json"))
    if not events:
        raise ImportProblem(source, "no event_log_*.json beside metadata.json (the game has no play record)")
    if len(events) > 1:
        raise ImportProblem(source, f"{len(events)} event logs in one game directory")
    log = _json(events[0], source)
    where = f"{source}/{events[0].name}"
    try:
        game = _read(meta, log, source, directory.name)
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise ImportProblem(where, _reason(exc)) from None
    verbose = sorted(directory.glob("verbose_log_*.json"))
    if verbose:
        where = f"{source}/{verbose[0].name}"
        try:
            game = game.model_copy(update={"negotiation": _negotiation(_json(verbose[0], source))})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ImportProblem(where, _reason(exc)) from None
    return game


def _negotiation(verbose: dict) -> tuple[str, ...]:
    """The contract negotiation as P-Red saw it: its own messages, and P-Blue's as 'Turn: N: …' prompts."""
    first = verbose["game"]["turns"].get("0", {})
    history = first.get("contract_negotiation", {}).get("conversation_history_0", [])
    lines = []
    for message in history:
        content = message["content"]
        if message["role"] == "assistant":
            lines.append(f"red: {content}")
        elif message["role"] == "user" and content.startswith("Turn:"):
            lines.append("blue: " + _TURN_PREFIX.sub("", content))
    return tuple(lines)


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return str(exc)


def _json(path: Path, source: str) -> dict:
    if not path.exists():
        raise ImportProblem(source, f"no {path.name}")
    try:
        data = parse_json(read_capped(path))
    except ValueError as exc:
        raise ImportProblem(f"{source}/{path.name}", f"not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ImportProblem(f"{source}/{path.name}", "not a JSON object")
    return data


def _paper_board_id(grid_id: int, rows: list[str]) -> tuple[int, str]:
    for b in benchmark_boards("paper"):
        if b.source_id == grid_id:
            if tuple(b.board.rows()) != tuple(rows):
                raise ValueError(f"grid {grid_id} differs from the published grid {grid_id}: {rows}")
            return b.id, b.board_class
    board_from_rows(rows)  # a grid that is not a board at all says so first
    raise ValueError(f"grid {grid_id} is not one of the paper's 80 boards")


def _read(meta: dict, log: dict, source: str, run_id: str) -> ImportedGame:
    config = meta["config"]
    contract_type = config.get("contract_type")
    if contract_type not in CONDITION_OF_CONTRACT_TYPE:
        raise ValueError(f"unknown contract_type {contract_type!r}")
    if not isinstance(config["pay4partner"], bool):
        raise ValueError(f"pay4partner is {config['pay4partner']!r}, not true or false")
    rows = ["".join(str(x) for x in row) for row in meta["grid"]]
    board_id, board_class = _paper_board_id(int(meta["grid_id"]), rows)
    models = meta["model_pair"].split("-", 1)
    game = log["game"]
    turns = game["turns"]
    if not isinstance(turns, dict):
        raise ValueError("game.turns is not an object of numbered turns")
    final = game.get("final_state")
    numbers = sorted(turns, key=int)
    if (
        final is None
        and numbers
        and any("position" not in p for k, p in turns[numbers[-1]]["players"].items() if k in ("0", "1"))
    ):
        numbers = numbers[:-1]  # the run stopped inside this turn; it has no end state to read
    logged = tuple(_turn(int(n), turns[n]) for n in numbers)
    fields: dict = {}
    contract = turns.get("0", {}).get("contract") if turns else None
    if contract_type is not None and contract is not None:
        fields.update(_contract(contract, contract_type, source))
    if final is not None:
        players = final["players"]
        metrics = final["metrics"]

        def pair(key: str) -> tuple[int, int]:
            return int(metrics[f"{key}_0"]), int(metrics[f"{key}_1"])

        fields.update(
            total_turns=int(final["total_turns"]),
            final_positions=tuple(_tile(players[i]["position"]) for i in ("0", "1")),
            final_chips=tuple(_chips(players[i]["chips"]) for i in ("0", "1")),
            scores=(int(final["scores"]["Player 0"]), int(final["scores"]["Player 1"])),
            promises_kept=pair("total_p4p_promises_kept"),
            promises_broken=pair("total_p4p_promises_broken"),
            contract_moves=pair("moves_made_under_strict_contract"),
            trades_proposed=int(metrics["total_trades_proposed"]),
            trades_accepted=int(metrics["total_trades_accepted"]),
            arrangements_proposed=int(metrics["total_p4p_arrangements_proposed"]),
            arrangements_accepted=int(metrics["total_p4p_arrangements_accepted"]),
        )
    fog = config.get("fog_of_war", [False, False])
    return ImportedGame(
        source=source,
        run_id=run_id,
        model_pair=meta["model_pair"],
        red_model=models[0],
        blue_model=models[-1],
        grid_id=int(meta["grid_id"]),
        board_id=board_id,
        board_rows=tuple(rows),
        board_class=board_class,
        bucket=str(meta.get("bucket", "")),
        condition=CONDITION_OF_CONTRACT_TYPE[contract_type],
        mode="pfp" if config["pay4partner"] else "trade",
        visible=not any(fog),
        turns=logged,
        complete=final is not None,
        **fields,
    )


def _tile(value) -> Tile:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{value!r} is not a tile [row, col]")
    if not all(0 <= v < BOARD_SIZE for v in value):
        raise ValueError(f"tile {list(value)} is off the {BOARD_SIZE}x{BOARD_SIZE} board")
    return (value[0], value[1])


def _chips(d: dict) -> ChipCounts:
    counts = {"red": 0, "blue": 0, "green": 0}
    for letter, n in d.items():
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"chip count {letter}: {n!r} is not a whole number")
        counts[colour_of(letter)] += n
    return ChipCounts(**counts)


def _bundle(pairs) -> ChipCounts:
    """The log's `[["R", 2], ["B", 1]]` chip lists."""
    counts = {"red": 0, "blue": 0, "green": 0}
    for item in pairs:
        letter, n = item
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"chip count {letter}: {n!r} is not a whole number ≥ 0")
        counts[colour_of(letter)] += n
    return ChipCounts(**counts)


def _turn(number: int, raw: dict) -> LoggedTurn:
    players = []
    for key, entry in sorted(raw["players"].items()):
        if key not in ("0", "1"):
            continue  # the judge's own entry (its format errors)
        move_type = entry.get("move_type", "no_move")
        if move_type not in MOVE_TYPES:
            raise ValueError(f"turn {number}, player {key}: unknown move_type {move_type!r}")
        offer, outcome = None, None
        if "trade" in entry:
            t = entry["trade"]
            offer, outcome = Trade(give=_bundle(t["offer"]), receive=_bundle(t["request"])), t["outcome"]
        elif "arrangement_proposed" in entry:
            a = entry["arrangement_proposed"]
            offer = Arrangement(i_cover=_bundle(a["promised_to_cover"]), you_cover=_bundle(a["requested_coverage"]))
            outcome = a["outcome"]
        if outcome is not None and outcome not in OUTCOMES:
            raise ValueError(f"turn {number}, player {key}: unknown proposal outcome {outcome!r}")
        p4p = entry.get("pay4partner", {})
        broke = p4p.get("promised_color") if "broke_promise_for" in p4p else None
        players.append(
            LoggedPlayerTurn(
                player=PLAYERS[int(key)],
                start=_tile(entry["position"]["start"]),
                end=_tile(entry["position"]["end"]),
                chips_start=_chips(entry["chips"]["start"]),
                chips_end=_chips(entry["chips"]["end"]),
                offer=offer,
                outcome=outcome,
                move=_tile(entry["move_made"]) if entry.get("move_made") is not None else None,
                move_type=move_type,
                covered_by_partner=move_type == "pay4partner",
                broke_promise=colour_of(broke) if broke is not None else None,
            )
        )
    return LoggedTurn(number=number, players=tuple(players))


def _contract(raw: dict, contract_type: str, source: str) -> dict:
    """The negotiated contract: whether it was formed, and its terms as contractlang source."""
    terms = raw.get("judge_contract")
    agreed = raw.get("agreement_status") is True
    accepted = all(raw.get(f"player_{i}_agreed") in (True, "accepted") for i in (0, 1))
    if contract_type == "tile_with_judge_implementation":
        return {
            "contract_formed": agreed and isinstance(terms, str) and bool(terms.strip()),
            "transcript": terms if isinstance(terms, str) else "",
        }
    if not isinstance(terms, dict):
        return {"contract_formed": False}
    condition = CONDITION_OF_CONTRACT_TYPE[contract_type]
    text, ir, notes = read_terms(terms, condition, f"{source}/judge_contract", Rules.named("paper"))
    read = {
        "contract_formed": agreed and accepted,
        "contract_source": text,
        "judge_terms": terms,
        "contract_notes": tuple(notes),
    }
    # an accepted contract whose every entry was unreadable still counts as formed, as in the authors' metric
    return read if ir is None else {**read, "contract_terms": ir.terms_json()}


def mark_superseded(games: list[ImportedGame]) -> list[ImportedGame]:
    """Flag every complete run that a later complete run of the same game replaces (the paper kept the latest)."""
    latest: dict[tuple, str] = {}
    for g in games:
        if g.complete:
            key = g.game_key()
            latest[key] = max(latest.get(key, g.run_id), g.run_id)
    return [g.model_copy(update={"superseded": g.complete and latest[g.game_key()] != g.run_id}) for g in games]


class ImportSummary(Frozen):
    """What `import_logs` wrote: games by state, and the directories it skipped, with why."""

    out: Path
    directories: int
    imported: int
    complete: int
    incomplete: int
    superseded: int
    contracts_formed: int
    problems: tuple[str, ...]


def import_logs(root: Path, out: Path, progress: Advance, skipped: Callable[[ImportProblem], None]) -> ImportSummary:
    """Import every game directory under `root` into the runs file `out` (JSON lines, superseded runs marked);
    a directory that cannot be imported is passed to `skipped` and left out."""
    if not root.is_dir():
        raise FileError(f"{root}: not a directory of game logs")
    dirs = list(game_directories(root))
    if not dirs:
        raise FileError(f"{root}: no game directory (one holding metadata.json) under it")
    check_writable(out)  # before the import's progress, not after it
    games, problems = [], []
    progress("importing", 0, len(dirs))
    for k, d in enumerate(dirs, 1):
        try:
            games.append(import_game(d, root))
        except ImportProblem as exc:
            problems.append(str(exc))
            skipped(exc)
        progress("importing", k, len(dirs))
    games = mark_superseded(games)
    write_atomically(out, "".join(g.model_dump_json() + "\n" for g in games))
    complete = sum(g.complete for g in games)
    return ImportSummary(
        out=out,
        directories=len(dirs),
        imported=len(games),
        complete=complete,
        incomplete=len(games) - complete,
        superseded=sum(g.superseded for g in games),
        contracts_formed=sum(g.contract_formed for g in games),
        problems=tuple(problems),
    )


def _sealed(line: bytes) -> bool:
    try:
        data = parse_json(line)
    except ValueError:
        return False
    return isinstance(data, dict) and RECORD_CHECK in data


def read_runs(path: Path) -> Iterator[tuple[int, ImportedGame | GameRecord]]:
    """The lines of a runs file: imported games (`ctbench import`) or our own game records (`ctbench sweep`'s
    games.jsonl, read as the sweep reads it), with their line numbers. A line that is neither raises
    `ImportProblem` naming the line; a file that cannot be read (a pipe, /dev/zero, a runaway line), or a store
    with a line whose check fails or a game repeated, raises `FileError`."""
    lines = read_lines_capped(path)
    if _sealed(next((line for line in lines if line.strip()), b"")):  # a sweep's store, read as `sweep` reads it
        yield from enumerate(read_records(path, lines, GameRecord, GameSpec.of, "game")[0].values(), start=1)
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = parse_json(line)
        except ValueError:
            raise ImportProblem(f"{path}:{number}", "not a JSON line") from None
        kind = ImportedGame if isinstance(data, dict) and "turns" in data else GameRecord
        try:
            yield number, kind.model_validate(data)
        except ValidationError as exc:
            raise ImportProblem(f"{path}:{number}", f"not an imported game or a game record ({_reason(exc)})") from None
