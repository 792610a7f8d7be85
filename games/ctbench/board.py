"""CT-Bench boards: enumeration, simple paths, best paths, classification, benchmark set (CT-Bench paper, Sec. 2, App. D)."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import ConfigDict, Field

from contractlang.errors import UnknownName
from contractlang.vocab import BOARD_SETS, BOARD_SIZE, BoardSet, Frozen

Tile = tuple[int, int]
Colour = Literal["red", "blue", "green"]
Player = Literal["red", "blue"]
BoardClass = Literal["independent", "mutually_dependent", "asymmetric", "unused"]

START: Tile = (0, 0)
GOAL: Tile = (BOARD_SIZE - 1, BOARD_SIZE - 1)
PLAYERS: tuple[Player, Player] = ("red", "blue")
COLOUR_ORDER: tuple[Colour, Colour, Colour] = ("red", "blue", "green")
INITIAL_CHIPS = {"red": {"red": 14, "blue": 0, "green": 2}, "blue": {"red": 0, "blue": 14, "green": 2}}
GOAL_BONUS = 20
CHIP_VALUE = 5
SHORTEST_PATH = 2 * (BOARD_SIZE - 1)
MAX_JOINT_REWARD = 2 * (GOAL_BONUS + CHIP_VALUE * (16 - SHORTEST_PATH))  # R_max = 140 (CT-Bench paper, Sec. 2.3)
BENCHMARK_SEED = 20260101
BENCHMARK_FILE = Path(__file__).resolve().parent / "data" / "benchmark_boards.json"
PAPER_FILE = Path(__file__).resolve().parent / "data" / "paper_boards.json"
INNER_TILES: tuple[Tile, ...] = tuple(
    (r, c) for r in range(BOARD_SIZE) for c in range(BOARD_SIZE) if (r, c) not in (START, GOAL)
)


def neighbours(tile: Tile) -> list[Tile]:
    """4-neighbourhood, no wrap ([CT-02])."""
    r, c = tile
    out = [(r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)]
    return [(a, b) for a, b in out if 0 <= a < BOARD_SIZE and 0 <= b < BOARD_SIZE]


@cache
def simple_paths(source: Tile = START, target: Tile = GOAL) -> tuple[tuple[Tile, ...], ...]:
    """Every simple path source → target, each listed from source to target inclusive."""
    found: list[tuple[Tile, ...]] = []
    stack: list[tuple[Tile, tuple[Tile, ...]]] = [(source, (source,))]
    while stack:
        tile, path = stack.pop()
        if tile == target:
            found.append(path)
            continue
        for nxt in neighbours(tile):
            if nxt not in path:
                stack.append((nxt, path + (nxt,)))
    return tuple(sorted(found))


@cache
def _path_incidence(source: Tile) -> tuple[np.ndarray, np.ndarray]:
    """Entered-tile incidence (paths × 16) and path lengths, for paths from `source` in lexicographic order."""
    paths = simple_paths(source, GOAL)
    incidence = np.zeros((len(paths), BOARD_SIZE * BOARD_SIZE), dtype=np.int64)
    for i, path in enumerate(paths):
        for r, c in path[1:]:
            incidence[i, r * BOARD_SIZE + c] += 1
    lengths = np.array([len(p) - 1 for p in paths], dtype=np.int64)
    incidence.setflags(write=False)
    lengths.setflags(write=False)
    return incidence, lengths


class Board(Frozen):
    """One 4×4 board: which inner tiles are red (the rest blue); corners are green."""

    key: int
    red_tiles: tuple[Tile, ...]

    def colour(self, tile: Tile) -> Colour:
        if tile in (START, GOAL):
            return "green"
        return "red" if tile in self.red_tiles else "blue"

    def rows(self) -> list[str]:
        return ["".join(self.colour((r, c))[0].upper() for c in range(BOARD_SIZE)) for r in range(BOARD_SIZE)]

    def path_needs(self, path: tuple[Tile, ...]) -> dict[Colour, int]:
        """Chips needed to walk `path`: one per entered tile (the first tile is where one stands)."""
        need = {c: 0 for c in COLOUR_ORDER}
        for tile in path[1:]:
            need[self.colour(tile)] += 1
        return need

    def shortfall(self, path: tuple[Tile, ...], chips: dict[str, int]) -> int:
        """Σ_colour max(0, needed − held) ([CT-29])."""
        need = self.path_needs(path)
        return sum(max(0, need[c] - chips.get(c, 0)) for c in COLOUR_ORDER)

    def colour_matrix(self) -> np.ndarray:
        """One-hot tile colours, (16 × 3) in COLOUR_ORDER."""
        m = np.zeros((BOARD_SIZE * BOARD_SIZE, 3), dtype=np.int64)
        for r in range(BOARD_SIZE):
            for c in range(BOARD_SIZE):
                m[r * BOARD_SIZE + c, COLOUR_ORDER.index(self.colour((r, c)))] = 1
        return m

    def best_path(
        self, player: Player, chips: dict[str, int] | None = None, source: Tile = START
    ) -> tuple[tuple[Tile, ...], int]:
        """Minimum shortfall, then shortest, then lexicographically smallest ([CT-30])."""
        chips = chips if chips is not None else INITIAL_CHIPS[player]
        incidence, lengths = _path_incidence(source)
        needs = incidence @ self.colour_matrix()
        held = np.array([chips.get(c, 0) for c in COLOUR_ORDER], dtype=np.int64)
        shortfall = np.maximum(needs - held, 0).sum(axis=1)
        # paths are stored in lexicographic order, so the stable lexsort's last key is the path itself
        best = int(np.lexsort((lengths, shortfall))[0])
        return simple_paths(source, GOAL)[best], int(shortfall[best])

    @property
    def classification(self) -> BoardClass:
        red = self.best_path("red")[1]
        blue = self.best_path("blue")[1]
        if red == 0 and blue == 0:
            return "independent"
        if red == 2 and blue == 2:
            return "mutually_dependent"
        if red == 0 and blue >= 1:
            return "asymmetric"
        return "unused"

    def baseline(self, player: Player) -> int:
        """b_i = 20 + 5(16 − 6) if the player can finish from its own chips, else 0 ([CT-33])."""
        return GOAL_BONUS + CHIP_VALUE * (16 - SHORTEST_PATH) if self.best_path(player)[1] == 0 else 0

    def bottleneck(self) -> Player | None:
        """The player whose colour covers both goal-adjacent tiles, if they share a colour (CT-Bench paper, App. D)."""
        a, b = self.colour((GOAL[0], GOAL[1] - 1)), self.colour((GOAL[0] - 1, GOAL[1]))
        return a if a == b and a in PLAYERS else None


def all_boards() -> list[Board]:
    """All C(14,7) = 3,432 boards, keyed by the lexicographic rank of their red-tile set."""
    return [Board(key=k, red_tiles=tuple(reds)) for k, reds in enumerate(combinations(INNER_TILES, 7))]


def board_by_key(key: int) -> Board:
    reds = next(r for k, r in enumerate(combinations(INNER_TILES, 7)) if k == key)
    return Board(key=key, red_tiles=tuple(reds))


@lru_cache(maxsize=1)
def _key_of_reds() -> dict[tuple[Tile, ...], int]:
    return {reds: k for k, reds in enumerate(combinations(INNER_TILES, 7))}


def board_from_rows(rows: list[str]) -> Board:
    """A board from its rows of G/R/B letters (green corners, seven red and seven blue inner tiles)."""
    letters = [row.strip().upper() for row in rows]
    if len(letters) != BOARD_SIZE or any(len(row) != BOARD_SIZE or set(row) - set("GRB") for row in letters):
        raise ValueError(f"a board is {BOARD_SIZE} rows of {BOARD_SIZE} letters G, R or B, not {rows!r}")
    if letters[START[0]][START[1]] != "G" or letters[GOAL[0]][GOAL[1]] != "G":
        raise ValueError(f"the start and goal corners are green (G): {rows!r}")
    reds = tuple((r, c) for r in range(BOARD_SIZE) for c in range(BOARD_SIZE) if letters[r][c] == "R")
    if reds not in _key_of_reds():
        raise ValueError(f"a board has 7 red and 7 blue inner tiles; {rows!r} has {len(reds)} red")
    return Board(key=_key_of_reds()[reds], red_tiles=reds)


class BenchmarkBoard(Frozen):
    id: int
    board: Board
    board_class: BoardClass
    board_set: BoardSet = "ours"
    source_id: int | None = None  # the paper set: the authors' grid id
    source_bucket: str | None = None  # the paper set: the authors' stratum for the grid

    @property
    def ref(self) -> str:
        """How to name the board anywhere a board is asked for: its ID, set-qualified outside our set."""
        return str(self.id) if self.board_set == "ours" else f"{self.board_set}:{self.id}"


def sample_benchmark(rng: np.random.Generator) -> list[BenchmarkBoard]:
    """20 Independent, 20 Mutually Dependent, 40 Asymmetric boards, IDs 0–19 / 20–39 / 40–79 ([CT-31])."""
    by_class: dict[str, list[Board]] = {"independent": [], "mutually_dependent": [], "asymmetric": []}
    for board in all_boards():
        cls = board.classification
        if cls in by_class:
            by_class[cls].append(board)
    chosen: list[BenchmarkBoard] = []
    for cls, count in (("independent", 20), ("mutually_dependent", 20), ("asymmetric", 40)):
        picks = rng.choice(len(by_class[cls]), size=count, replace=False)
        for i in sorted(int(p) for p in picks):
            chosen.append(BenchmarkBoard(id=len(chosen), board=by_class[cls][i], board_class=cls))
    return chosen


@lru_cache(maxsize=2)
def benchmark_boards(board_set: BoardSet = "ours") -> tuple[BenchmarkBoard, ...]:
    """An 80-board set with IDs 0–79 (0–19 Independent, 20–39 Mutually Dependent, 40–79 Asymmetric).

    "ours" is our seeded sample (regenerate with `sample_benchmark(np.random.default_rng(BENCHMARK_SEED))`);
    "paper" is the CT-Bench authors' published set, in their order, classified by our rules."""
    if board_set == "paper":
        data = json.loads(PAPER_FILE.read_text())
        boards = [(b["paper_id"], b["sub_stratum"], board_from_rows(b["rows"])) for b in data["boards"]]
        return tuple(
            BenchmarkBoard(
                id=i,
                board=board,
                board_class=board.classification,
                board_set="paper",
                source_id=source_id,
                source_bucket=bucket,
            )
            for i, (source_id, bucket, board) in enumerate(boards)
        )
    data = json.loads(BENCHMARK_FILE.read_text())
    return tuple(
        BenchmarkBoard(
            id=b["id"],
            board=Board(key=b["key"], red_tiles=tuple(tuple(t) for t in b["red_tiles"])),
            board_class=b["class"],
        )
        for b in data["boards"]
    )


class BoardRow(Frozen):
    """One board of a benchmark set as `ctbench boards` lists it: both players' best paths, shortfalls and
    baselines ([CT-30], [CT-33])."""

    model_config = ConfigDict(populate_by_name=True)

    id: int
    paper_id: int | None
    paper_bucket: str | None
    key: int
    board_class: str = Field(alias="class")
    rows: tuple[str, ...]
    shortfall: tuple[int, int]
    best_paths: dict[str, tuple[Tile, ...]]
    baselines: tuple[int, int]
    bottleneck: str | None

    @classmethod
    def of(cls, b: BenchmarkBoard) -> BoardRow:
        paths = {p: b.board.best_path(p) for p in PLAYERS}
        return cls(
            id=b.id,
            paper_id=b.source_id,
            paper_bucket=b.source_bucket,
            key=b.board.key,
            board_class=b.board_class,
            rows=tuple(b.board.rows()),
            shortfall=(paths["red"][1], paths["blue"][1]),
            best_paths={p: paths[p][0] for p in paths},
            baselines=(b.board.baseline("red"), b.board.baseline("blue")),
            bottleneck=b.board.bottleneck(),
        )


class BoardSetSummary(Frozen):
    """The class counts over every board, and the rows of one 80-board set."""

    classes: dict[str, int]
    benchmark: tuple[BoardRow, ...]


def board_set_summary(board_set: BoardSet) -> BoardSetSummary:
    counts: dict[str, int] = {}
    for board in all_boards():
        counts[board.classification] = counts.get(board.classification, 0) + 1
    return BoardSetSummary(classes=counts, benchmark=tuple(BoardRow.of(b) for b in benchmark_boards(board_set)))


def benchmark_board(board_id: int, board_set: BoardSet = "ours") -> BenchmarkBoard:
    boards = benchmark_boards(board_set)
    if not 0 <= board_id < len(boards):
        raise UnknownName(f"board {board_id} is not in the {board_set} benchmark set (IDs 0..{len(boards) - 1})")
    return boards[board_id]


def board_ref(text: str, **named: BoardSet | None) -> BenchmarkBoard:
    """The board `text` names, `ID` or `SET:ID` (`paper:17`); `named` are the other places that may name its set
    (`--set`, a contract's `game ctbench.SET` header), by description. Every set named must be the same; none
    named means ours."""
    prefix, sep, number = str(text).strip().rpartition(":")
    if sep and prefix not in BOARD_SETS:
        raise UnknownName(f"unknown board set {prefix!r} in {text!r}; use {' or '.join(BOARD_SETS)}")
    if not number.isdigit():
        raise UnknownName(f"{text!r} is not a board ID (ID or SET:ID, e.g. 17 or paper:17)")
    for where, value in named.items():  # `--set bogus` played on our boards, as if no set had been named
        if value is not None and value not in BOARD_SETS:
            raise UnknownName(f"unknown board set {value!r} ({where}); choose from {', '.join(BOARD_SETS)}")
    sets = {**({f"the board {text!r}": prefix} if sep else {}), **{k: v for k, v in named.items() if v}}
    if len(set(sets.values())) > 1:
        raise UnknownName(
            "the board set is named twice, differently: " + ", ".join(f"{where} names {s}" for where, s in sets.items())
        )
    return benchmark_board(int(number), next(iter(sets.values()), "ours"))


def write_benchmark_file(path: Path = BENCHMARK_FILE) -> None:
    boards = sample_benchmark(np.random.default_rng(BENCHMARK_SEED))
    rows = [
        json.dumps(
            {
                "id": b.id,
                "key": b.board.key,
                "class": b.board_class,
                "rows": b.board.rows(),
                "red_tiles": [list(t) for t in b.board.red_tiles],
            }
        )
        for b in boards
    ]
    head = json.dumps(
        {"seed": BENCHMARK_SEED, "layout": "IDs 0-19 independent, 20-39 mutually_dependent, 40-79 asymmetric"}
    )[:-1]
    path.write_text(head + ', "boards": [\n' + ",\n".join(rows) + "\n]}\n")
