"""Builds the verifier's board description from a CT-Bench board."""

from __future__ import annotations

from games.ctbench.board import BOARD_SIZE, INITIAL_CHIPS, Board, simple_paths
from solver.verify import BoardSpec


def board_spec(board: Board, name: str) -> BoardSpec:
    return BoardSpec(
        name=name,
        colours=tuple(tuple(board.colour((r, c)) for c in range(BOARD_SIZE)) for r in range(BOARD_SIZE)),
        initial={
            p: (INITIAL_CHIPS[p]["red"], INITIAL_CHIPS[p]["blue"], INITIAL_CHIPS[p]["green"]) for p in ("red", "blue")
        },
        paths=simple_paths(),
        best_paths={p: board.best_path(p)[0] for p in ("red", "blue")},
    )
