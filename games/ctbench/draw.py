"""Board pictures: coloured text for the terminal and a PNG (matplotlib) with both best paths."""

from __future__ import annotations

import io
from pathlib import Path

from contractlang.files import write_atomically
from games.ctbench.board import BOARD_SIZE, COLOUR_ORDER, GOAL, INITIAL_CHIPS, START, Board

_FILL = {"red": "#d64545", "blue": "#3b6fd6", "green": "#3fa34d"}


def board_text(board: Board, rich_markup: bool = True) -> str:
    """Rows of tiles, with the best paths marked: r = P-Red's path, b = P-Blue's, * = both."""
    red_path = set(board.best_path("red")[0])
    blue_path = set(board.best_path("blue")[0])
    lines = ["     " + "  ".join(f"c{c}" for c in range(BOARD_SIZE))]
    for r in range(BOARD_SIZE):
        cells = []
        for c in range(BOARD_SIZE):
            tile = (r, c)
            colour = board.colour(tile)
            mark = (
                "S"
                if tile == START
                else "G"
                if tile == GOAL
                else (
                    "*"
                    if tile in red_path and tile in blue_path
                    else "r"
                    if tile in red_path
                    else "b"
                    if tile in blue_path
                    else " "
                )
            )
            cell = f"{colour[0].upper()}{mark}"
            cells.append(f"[white on {_FILL[colour]}] {cell}[/]" if rich_markup else f" {cell}")
        lines.append(f"r{r}  " + " ".join(cells))
    lines.append(
        "Legend: first letter the tile's colour ("
        + ", ".join(f"{c[0].upper()} {c}" for c in _FILL)
        + "); then S start, G goal, r on P-Red's best path, b on P-Blue's, * on both."
    )
    return "\n".join(lines)


def path_label(player: str, shortfall: int) -> str:
    """The PNG legend's line for a player: its best path and the chips it starts with."""
    chips = ", ".join(f"{INITIAL_CHIPS[player][c]} {c}" for c in COLOUR_ORDER)
    return f"P-{player.capitalize()}: best path (shortfall {shortfall}); chips {chips}"


def save_png(board: Board, path: Path, title: str = "") -> Path:
    """Draw the board with both best paths and each player's chips to a PNG (written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import patheffects
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(4.2, 4.6))
    for r in range(BOARD_SIZE):
        for c in range(BOARD_SIZE):
            ax.add_patch(
                Rectangle(
                    (c, BOARD_SIZE - 1 - r), 1, 1, facecolor=_FILL[board.colour((r, c))], edgecolor="white", linewidth=2
                )
            )
            label = "start" if (r, c) == START else "goal" if (r, c) == GOAL else f"{r},{c}"
            ax.text(c + 0.5, BOARD_SIZE - 1 - r + 0.82, label, ha="center", va="center", color="white", fontsize=8)
    # neither path is drawn in a tile's colour and each has a contrasting outline, so both show on every tile and in
    # the legend (a white path was invisible in the legend, white on white)
    for player, offset, style, colour, outline in (
        ("red", -0.12, "-", "black", "white"),
        ("blue", 0.12, "--", "#ffd21f", "black"),
    ):
        route, shortfall = board.best_path(player)
        xs = [c + 0.5 + offset for _, c in route]
        ys = [BOARD_SIZE - 1 - r + 0.5 + offset for r, _ in route]
        ax.plot(
            xs,
            ys,
            style,
            color=colour,
            linewidth=2.5,
            path_effects=[patheffects.Stroke(linewidth=4.5, foreground=outline), patheffects.Normal()],
            label=path_label(player, shortfall),
        )
    ax.set_xlim(0, BOARD_SIZE)
    ax.set_ylim(0, BOARD_SIZE)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"board {board.key}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7, frameon=False)
    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    write_atomically(path, buffer.getvalue())
    return path
