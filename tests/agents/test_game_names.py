"""Outside the two games' own folders nothing compares a value against a game's name: the language asks its IR,
the facade and the CLI ask the game registry (`games.game`), so a third game needs no edit in them."""

from __future__ import annotations

import ast

from tests.helpers import ROOT

NAMES = {"contractsim", "ctbench", "contractsim-negotiation"}
PACKAGES = ("contractlang", "games", "solver")
GAME_FOLDERS = ("games/contractsim", "games/ctbench")


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


def branches_in(root) -> dict[str, list[int]]:
    """Each module under `root`'s language, games (but the two games' folders) and solver that branches on a
    game's name, with the lines that do."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if not name.startswith(GAME_FOLDERS) and (lines := branches_on_a_game_name(path.read_text())):
                found[name] = lines
    return found


def test_the_check_finds_each_form_of_branch():
    source = 'if kind == "ctbench": pass\nif g in ("contractsim", "x"): pass\nmatch g:\n    case "ctbench": pass\n'
    assert branches_on_a_game_name(source) == [1, 2, 4]
    assert branches_on_a_game_name('name = "ctbench"\nif kind == other: pass\n') == []


def test_the_walk_finds_a_planted_branch(tmp_path):
    (tmp_path / "solver" / "deep").mkdir(parents=True)
    (tmp_path / "solver" / "deep" / "planted.py").write_text('def f(ir):\n    return ir.kind != "contractsim"\n')
    (tmp_path / "games" / "ctbench").mkdir(parents=True)
    (tmp_path / "games" / "ctbench" / "own.py").write_text('def f(g):\n    return g == "ctbench"\n')
    (tmp_path / "contractlang").mkdir()
    assert branches_in(tmp_path) == {"solver/deep/planted.py": [2]}


def test_no_module_outside_the_games_branches_on_a_game_name():
    assert branches_in(ROOT) == {}
