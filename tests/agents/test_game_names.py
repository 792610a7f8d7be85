"""The modules that ask the game registry (`games.game`) instead of testing a game's name: none compares a value
against a game's name, so a third game needs no edit in them."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import ROOT

NAMES = {"contractsim", "ctbench", "contractsim-negotiation"}
ASKING = [
    "games/agents.py",
    "games/game.py",
    "games/external.py",
    "games/errors.py",
    "games/log.py",
    "contractlang/interpreter/__init__.py",
    "contractlang/interpreter/trace.py",
    "contractlang/interpreter/events.py",
    "contractlang/testing.py",
    "contractlang/api/play.py",
    "contractlang/api/schema.py",
    "contractlang/api/view/games.py",
    "contractlang/cli/play.py",
]


def _names_in(node: ast.AST) -> set[str]:
    """The game names a comparison's operand spells: a string, or the strings of a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def branches_on_a_game_name(source: str) -> list[int]:
    """The lines of `source` that compare against a game's name (`==`, `!=`, `in`, `match` cases)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(_names_in(n) for n in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and _names_in(node.value):
            lines.append(node.lineno)
    return lines


def test_the_check_finds_each_form_of_branch():
    source = 'if kind == "ctbench": pass\nif g in ("contractsim", "x"): pass\nmatch g:\n    case "ctbench": pass\n'
    assert branches_on_a_game_name(source) == [1, 2, 4]
    assert branches_on_a_game_name('name = "ctbench"\nif kind == other: pass\n') == []


@pytest.mark.parametrize("path", ASKING)
def test_the_module_asks_the_registry(path):
    assert branches_on_a_game_name((ROOT / path).read_text()) == []
