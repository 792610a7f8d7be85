"""The packages' dependency rules, read from the source: `games` and `solver` build on `contractlang`, never the
reverse, and `solver` never reaches into `games`. Only the face — `contractlang/cli/` and the Python facade
`contractlang/api/` — wires all three together."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

FORBIDDEN = {"contractlang": ("solver", "games"), "solver": ("games",)}
"""Top-level package → the packages its modules may not import."""

FACE = (("contractlang", "cli"), ("contractlang", "api"))
"""The face: the two packages allowed to import everything."""


def imported_modules(path: Path, package: tuple[str, ...]) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) of every import in the file, at any depth (function-local imports included), `names`
    those a `from` import takes from the module; a relative import is resolved against `package`, the file's own."""
    tree = ast.parse(path.read_bytes(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level:
                base = package[: len(package) - node.level + 1]
                found.append((node.lineno, ".".join([*base, *([node.module] if node.module else [])]), names))
            else:
                found.append((node.lineno, node.module, names))
    return found


def violations(root: Path) -> list[str]:
    """`file:line: A imports B` for every import under `root` that breaks a rule of FORBIDDEN."""
    found = []
    for top, banned in FORBIDDEN.items():
        for path in sorted((root / top).rglob("*.py")):
            parts = path.relative_to(root).parts
            if any(parts[: len(face)] == face for face in FACE):
                continue
            for line, module, _ in imported_modules(path, parts[:-1]):
                if module.split(".")[0] in banned:
                    found.append(f"{path.relative_to(root)}:{line}: {top} imports {module}")
    return found


PACKAGES = ("contractlang", "games", "solver")


def modules(root: Path) -> dict[str, Path]:
    """Every module of the three packages by its dotted name (a package by its `__init__.py`)."""
    found = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module → the modules of the three packages it imports, function-local imports included. An import
    reaches the module it names (`from P import M` the submodule M when there is one, else P); the packages
    above it, whose `__init__` runs first, are not counted, so a package may re-export its own modules."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        package = tuple(name.split(".")) if path.name == "__init__.py" else tuple(name.split(".")[:-1])
        graph[name] = set()
        for _, module, names in imported_modules(path, package):
            for target in [f"{module}.{n}" if f"{module}.{n}" in known else module for n in names] or [module]:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(root: Path) -> list[list[str]]:
    """The import circles among the modules under `root`: each set of modules that reach one another through
    imports (a strongly connected component of more than one module, Tarjan's algorithm), sorted."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return sorted(found)


def test_the_packages_keep_their_layers():
    assert all((ROOT.joinpath(*face) / "__init__.py").exists() for face in FACE)
    assert violations(ROOT) == []


def test_the_face_is_the_cli_and_the_python_facade_and_nothing_else():
    """`contractlang/__init__.py` reaches the facade only lazily (a module `__getattr__`), so importing the language
    alone never imports a game or a solver."""
    assert FACE == (("contractlang", "cli"), ("contractlang", "api"))
    import subprocess
    import sys

    probe = "import contractlang, sys; print(any(m.split('.')[0] in ('games', 'solver') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True).stdout == "False\n"


def test_the_checker_reports_a_planted_violation(tmp_path):
    files = {
        "contractlang/__init__.py": "",
        "contractlang/ok.py": "import json\nfrom contractlang import vocab\n",
        "contractlang/bad.py": "def late():\n    from games.ctbench import board\n    return board\n",
        "contractlang/cli/__init__.py": "import games\nimport solver.dp\n",
        "contractlang/api/__init__.py": "from games import agents\n",
        "contractlang/apis.py": "import games\n",
        "contractlang/interpreter/deep.py": "from . import rounds\nfrom ..vocab import Frozen\nimport solver\n",
        "solver/__init__.py": "",
        "solver/dp.py": "import contractlang.vocab\nif True:\n    import games.runner as runner\n",
        "games/__init__.py": "import solver\nimport contractlang\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert violations(tmp_path) == [
        "contractlang/apis.py:1: contractlang imports games",
        "contractlang/bad.py:2: contractlang imports games.ctbench",
        "contractlang/interpreter/deep.py:3: contractlang imports solver",
        "solver/dp.py:3: solver imports games.runner",
    ]


def test_no_module_reaches_itself_through_imports():
    """Library code imports the language from its modules, never the package root (which loads the facade,
    which loads the games): no circle among the modules, function-local imports counted."""
    assert circles(ROOT) == []


def test_the_circle_finder_reports_planted_circles(tmp_path):
    files = {
        "contractlang/__init__.py": "from contractlang.checker import check\ndef __getattr__(n):\n    import contractlang.api\n",
        "contractlang/checker.py": "from contractlang import ast\n",
        "contractlang/ast.py": "",
        "contractlang/api/__init__.py": "from games import play\n",
        "contractlang/llm/__init__.py": "from contractlang.llm.client import Client\n",
        "contractlang/llm/client.py": "from contractlang.llm.errors import Failed\nfrom . import errors\n",
        "contractlang/llm/errors.py": "",
        "games/__init__.py": "",
        "games/play.py": "def late():\n    from contractlang import check\n",
        "games/agents.py": "from games import external\n",
        "games/external.py": "from .agents import AgentError\n",
        "solver/__init__.py": "import contractlang.checker\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert circles(tmp_path) == [
        ["contractlang", "contractlang.api", "games.play"],
        ["games.agents", "games.external"],
    ]
    (tmp_path / "games/play.py").write_text("def late():\n    from contractlang.checker import check\n")
    (tmp_path / "games/external.py").write_text("from games.errors import AgentError\n")
    assert circles(tmp_path) == []


def engine_imports(root: Path) -> list[str]:
    """`file:line: module` for every import of `games` or `solver` in `contractlang/cli/`: the
    commands parse their options, call one facade verb and print."""
    found = []
    for path in sorted((root / "contractlang" / "cli").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for line, module, _ in imported_modules(path, path.relative_to(root).parts[:-1]):
            if module.split(".")[0] in ("games", "solver"):
                found.append(f"{name}:{line}: {module}")
    return found


def test_the_cli_reaches_games_and_solvers_only_through_the_facade(tmp_path):
    assert engine_imports(ROOT) == []
    (tmp_path / "contractlang" / "cli").mkdir(parents=True)
    (tmp_path / "contractlang" / "cli" / "solve.py").write_text("def solve():\n    from solver.dp import TableCache\n")
    (tmp_path / "contractlang" / "cli" / "play.py").write_text("import games\n")
    assert engine_imports(tmp_path) == ["contractlang/cli/play.py:1: games", "contractlang/cli/solve.py:2: solver.dp"]


MAX_MODULE_LINES = 1000
"""A module past this many lines is doing more than one job: split it by job, as the llm and runner packages are."""


def long_modules(root: Path) -> list[str]:
    """`file: N lines` for every module of the three packages longer than MAX_MODULE_LINES."""
    found = []
    for package in ("contractlang", "games", "solver"):
        for path in sorted((root / package).rglob("*.py")):
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > MAX_MODULE_LINES:
                found.append(f"{path.relative_to(root).as_posix()}: {count} lines")
    return found


def test_no_module_has_more_than_a_thousand_lines(tmp_path):
    assert long_modules(ROOT) == []
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_modules(tmp_path) == [f"games/big.py: {MAX_MODULE_LINES + 1} lines"]
