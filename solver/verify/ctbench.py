"""CT-Bench checks against one board: coverage colours, giver chip sufficiency, points bounds, and
whether each player's coverage plus its own chips opens a path home (CT-Bench paper, Sec. 2.4), under the
paper's rules or the authors' engine's ([CT-24a]: tile-colour chips from the partner, blocked payments)."""

from __future__ import annotations

from contractlang.interpreter import Rules
from contractlang.ir import CheckedContract, CoverageTerm
from contractlang.vocab import COLOURS, POINTS_RANGE, Frozen
from solver.verify.report import CheckOutcome

Tile = tuple[int, int]


class BoardSpec(Frozen):
    """What the verifier needs of a board; `games` builds it (solver never imports games)."""

    name: str
    colours: tuple[tuple[str, ...], ...]  # colours[row][col]
    initial: dict[str, tuple[int, int, int]]  # player -> (red, blue, green)
    paths: tuple[tuple[Tile, ...], ...]  # every simple start→goal path
    best_paths: dict[str, tuple[Tile, ...]]

    def colour(self, tile: Tile) -> str:
        return self.colours[tile[0]][tile[1]]


def _holdings(red: dict[str, int], blue: dict[str, int]) -> dict:
    return {"red": dict(red), "blue": dict(blue)}


def check_colours(checked: CheckedContract, board: BoardSpec, rules: Rules) -> CheckOutcome:
    wrong = [
        (k, e) for k, e in enumerate(checked.ir.coverage) if _entry_colour(e, board, rules) != board.colour(e.tile)
    ]
    if not wrong:
        how = " (the authors' rules pay every entry with its tile's colour)" if rules.tile_colour else ""
        return CheckOutcome(
            name="coverage.colours",
            status="proved",
            span=checked.span("contract"),
            message=f"every coverage entry pays with its tile's colour on {board.name}{how}",
        )
    k, e = wrong[0]
    return CheckOutcome(
        name="coverage.colours",
        status="refuted",
        span=checked.span(f"cover.{k}"),
        message=f"tile {e.tile} is {board.colour(e.tile)} on {board.name}, but the entry pays with "
        f"a {e.colour} chip ({len(wrong)} such entr{'y' if len(wrong) == 1 else 'ies'})",
        counterexample={"tiles": [list(e.tile) for _, e in wrong]},
    )


def _entry_colour(e: CoverageTerm, board: BoardSpec, rules: Rules) -> str:
    return rules.payment(e, board.colour(e.tile))[1]


def check_giver_chips(checked: CheckedContract, board: BoardSpec, rules: Rules) -> CheckOutcome:
    """Worst case: the giver walks its own best path first, then is asked to honour every entry."""
    entries = checked.ir.coverage
    for giver in ("red", "blue"):
        path = board.best_paths[giver]
        left = dict(zip(COLOURS, board.initial[giver]))
        for tile in path[1:]:
            left[board.colour(tile)] -= 1
        spare = {c: max(0, n) for c, n in left.items()}
        mine = [(k, e) for k, e in enumerate(entries) if rules.payment(e, board.colour(e.tile))[0] == giver]
        short = []
        budget = dict(spare)
        for k, e in mine:
            c = _entry_colour(e, board, rules)
            if budget[c] >= 1:
                budget[c] -= 1
            else:
                short.append((k, e))
        if short:
            receiver = "blue" if giver == "red" else "red"
            events, have = [], dict(spare)
            for _, e in mine:
                c = _entry_colour(e, board, rules)
                giver_chips = dict(have)
                other = dict(zip(COLOURS, board.initial[receiver]))
                events.append(
                    {
                        "type": "move_attempt",
                        "player": receiver,
                        "tile": list(e.tile),
                        "tile_colour": board.colour(e.tile),
                        "holdings": _holdings(
                            giver_chips if giver == "red" else other, other if giver == "red" else giver_chips
                        ),
                    }
                )
                have[c] = max(0, have[c] - 1)
            k, e = short[0]
            return CheckOutcome(
                name="coverage.giver_chips",
                status="refuted",
                span=checked.span(f"cover.{k}"),
                message=f"after walking its own best path {giver} has {spare[_entry_colour(e, board, rules)]} spare "
                f"{_entry_colour(e, board, rules)} chip(s): honouring "
                + ", ".join(str(x.tile) for _, x in short)
                + (
                    " would find it without the chip: the payment is blocked and the receiver pays itself"
                    if rules.block_not_forfeit
                    else " would leave it at score 0 (forfeit)"
                ),
                counterexample={"giver": giver, "tiles": [list(x.tile) for _, x in short], "events": events},
            )
    return CheckOutcome(
        name="coverage.giver_chips",
        status="proved",
        span=checked.span("contract"),
        message="each giver can honour every entry with chips its own best path does not need",
    )


def check_points(checked: CheckedContract) -> CheckOutcome:
    lo, hi = POINTS_RANGE
    bad = [p for p in checked.ir.points if not lo <= p.amount <= hi]
    if bad:
        return CheckOutcome(
            name="points.bounds",
            status="refuted",
            span=checked.span("contract"),
            message=f"{len(bad)} promise(s) outside {lo}..{hi}",
        )
    return CheckOutcome(
        name="points.bounds",
        status="proved",
        span=checked.span("contract"),
        message=f"every points promise is within {lo}..{hi}, so a finished giver keeps a score ≥ 0",
    )


def check_paths(checked: CheckedContract, board: BoardSpec, rules: Rules) -> CheckOutcome:
    """Each player's own chips plus the coverage it receives pay for some simple path home."""
    for player in ("red", "blue"):
        covered = {
            e.tile
            for e in checked.ir.coverage
            if e.receiver == player and _entry_colour(e, board, rules) == board.colour(e.tile)
        }
        extra = {c: 0 for c in COLOURS}
        for e in checked.ir.coverage:
            if e.receiver == player and _entry_colour(e, board, rules) != board.colour(e.tile):
                extra[_entry_colour(e, board, rules)] += 1
        own = dict(zip(COLOURS, board.initial[player]))
        best = None
        for path in board.paths:
            need = {c: 0 for c in COLOURS}
            for tile in path[1:]:
                if tile not in covered:
                    need[board.colour(tile)] += 1
            gap = sum(max(0, need[c] - own[c] - extra[c]) for c in COLOURS)
            key = (gap, len(path), path)
            if best is None or key < best[0]:
                best = (key, need)
        (gap, _, path), need = best
        if gap:
            lacking = {c for c in COLOURS if need[c] > own[c] + extra[c]}
            missing = [t for t in path[1:] if t not in covered and board.colour(t) in lacking]
            return CheckOutcome(
                name="coverage.path",
                status="refuted",
                span=checked.span("contract"),
                message=f"{player} cannot get home on {board.name}: its best route {path[0]}→{path[-1]} still "
                f"lacks {gap} chip(s); uncovered tiles " + ", ".join(map(str, missing)),
                counterexample={
                    "player": player,
                    "path": [list(t) for t in path],
                    "missing": [list(t) for t in missing],
                },
            )
    return CheckOutcome(
        name="coverage.path",
        status="proved",
        span=checked.span("contract"),
        message=f"both players can reach the goal on {board.name} with their own chips and coverage",
    )


def verify_ctbench(checked: CheckedContract, board: BoardSpec | None, rules: Rules) -> list[CheckOutcome]:
    checks = [check_points(checked)]
    if board is not None:
        checks = [
            check_colours(checked, board, rules),
            check_giver_chips(checked, board, rules),
            *checks,
            check_paths(checked, board, rules),
        ]
    return checks
