"""Completion: the keywords the LALR parser accepts at the cursor, and the game's names and weeks there."""

from __future__ import annotations

import re
from typing import Literal

from contractlang.ast import WORLD_ACTIONS
from contractlang.lsp.analysis import MAX_LIVE_CHARS
from contractlang.lsp.text import Lines, Position
from contractlang.parser import keyword_of, parse_prefix
from contractlang.vocab import (
    COLOURS,
    CONTRACTSIM_ROLES,
    CTBENCH_GAME_ID,
    CTBENCH_PARTIES,
    GAME_IDS,
    PAYMENT_WEEKS,
    PRODUCTION_WEEKS,
    SETTING_BY_GAME_ID,
    Frozen,
)

Kind = Literal["keyword", "product", "input", "party", "game", "colour", "week"]

_PARTIAL_WORD = re.compile(r"[A-Za-z0-9_.-]*\Z")
# Longer than any keyword, game ID or name of a vocabulary: the word being typed is looked for only this far
# back, so a run of thousands of word characters costs no more than a short one (the search is quadratic in it).
MAX_WORD_CHARS = 64
# Completion reads from the last contract's start: `start: (contract | test_suite)*` makes that a valid place to begin, so a
# long file costs no more than its last contract.
_CONTRACT_START = re.compile(r"^[ \t]*contract\b", re.MULTILINE)
_PRODUCT_BLOCKS = ("prices", "deliver", "substitution", "payment_deduction", "price")


class Completion(Frozen):
    label: str
    kind: Kind
    detail: str = ""


def complete(source: str, pos: Position) -> tuple[Completion, ...]:
    """Everything that may be typed at `pos`; nothing when the text before it already has a syntax error or the
    document is too large to check live."""
    if len(source) > MAX_LIVE_CHARS:
        return ()
    before = source[: Lines(source).offset(pos)]
    word = _PARTIAL_WORD.search(before[-MAX_WORD_CHARS - 1 :]).group()
    if len(word) > MAX_WORD_CHARS:
        return ()  # no keyword or name is that long
    starts = [m.start() for m in _CONTRACT_START.finditer(before, 0, len(before) - len(word))]
    prefix = parse_prefix(before[starts[-1] if starts else 0 : len(before) - len(word)])
    if prefix is None:
        return ()
    values = [str(t) for t in prefix.tokens]
    out = [
        Completion(label=kw, kind="keyword")
        for kw in sorted(filter(None, map(keyword_of, prefix.accepts)))
        if kw[0].isalpha()
    ]
    if "NAME" in prefix.accepts:
        out += _names(values)
    if "INT" in prefix.accepts and values and values[-1] in ("week", "weeks", "..", ","):
        out += _weeks(values)
    return tuple(out)


def _game(values: list[str]) -> str | None:
    """The game the contract being written declares (`game contractsim.catering` → its ID)."""
    if "game" not in values:
        return None
    at = len(values) - 1 - values[::-1].index("game")
    parts = values[at + 1 : at + 4]
    return "".join(parts) if len(parts) == 3 and parts[1] == "." else (parts[0] if parts else None)


def _block(values: list[str]) -> str | None:
    """The innermost open block (`prices`, `deliver`, `cover`, …) or clause being written at the cursor."""
    depth = 0
    for k in range(len(values) - 1, -1, -1):
        v = values[k]
        if v in ("}", ")"):
            depth += 1
        elif v in ("{", "("):
            if depth == 0:
                return values[k - 1] if k else None
            depth -= 1
    return None


def _names(values: list[str]) -> list[Completion]:
    last = values[-1] if values else ""
    if last == "game":
        return [Completion(label=g, kind="game") for g in GAME_IDS]
    if last == "with":
        return [Completion(label=c, kind="colour", detail="chip colour") for c in COLOURS]
    block, game = _block(values), _game(values)
    if block == "parties" and last != ":":
        roles = CTBENCH_PARTIES if game == CTBENCH_GAME_ID else CONTRACTSIM_ROLES
        return [Completion(label=r, kind="party", detail="party role") for r in roles]
    if block in ("cover", "goal"):
        return [Completion(label=p, kind="party", detail="player") for p in CTBENCH_PARTIES]
    setting = SETTING_BY_GAME_ID.get(game or "")
    action = _week_action(values) if block == "given" else None
    if setting is not None and action in WORLD_ACTIONS:
        return [
            Completion(label=x, kind="input", detail=f"{t} ({setting.title})")
            for x, t in zip(setting.inputs, setting.input_titles)
        ]
    if setting is not None and (block in _PRODUCT_BLOCKS or action == "deliver" or values[-2:] == ["total", "deliver"]):
        return [
            Completion(label=p, kind="product", detail=f"{t} ({setting.title})")
            for p, t in zip(setting.products, setting.product_titles)
        ]
    return []


def _week_action(values: list[str]) -> str | None:
    """What the `given` week line being written says happens (`order` in `week 2: order mozzarella 2, `)."""
    if ":" not in values:
        return None
    at = len(values) - 1 - values[::-1].index(":")
    return values[at + 1] if at + 1 < len(values) else None


def _weeks(values: list[str]) -> list[Completion]:
    block = _block(values)
    if block == "deliver":
        return [Completion(label=str(w), kind="week", detail="production week") for w in PRODUCTION_WEEKS]
    if block == "pay":
        return [Completion(label=str(w), kind="week", detail="payment week") for w in PAYMENT_WEEKS]
    return []
