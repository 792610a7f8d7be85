"""docs/rules/ has one entry for every rule id the tree cites, and every place an entry names exists."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from tests.helpers import ROOT

RULE_FILES = {"CS": "contractsim.md", "CT": "ctbench.md"}
CITED_SUFFIXES = {".py", ".md", ".contract", ".txt"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist", "venv"}  # and hidden ones (.git, caches)
RULE_ID = re.compile(r"\b(C[ST]-\d{2}[a-z]?)\b")
HEADING = re.compile(r"^### \[(C[ST]-\d{2}[a-z]?)\] \S", re.M)
ENTRY_START = re.compile(r"^#{2,3} ", re.M)
CODE_REF = re.compile(r"`([\w./-]+\.(?:py|md|contract|lark|json|txt))(?:::([\w.]+))?`")


def cited_ids(root: Path) -> dict[str, list[str]]:
    """Every rule id in the tree's source, tests, README and docs → the files citing it."""
    found: dict[str, list[str]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".") and not d.endswith(".egg-info")
        )
        for name in sorted(files):
            path = Path(folder) / name
            rel = path.relative_to(root)
            prose_elsewhere = path.suffix == ".md" and rel.parts[0] not in ("docs", "README.md")
            if path.suffix not in CITED_SUFFIXES or prose_elsewhere:
                continue
            for rule in sorted(set(RULE_ID.findall(path.read_text(encoding="utf-8", errors="replace")))):
                found.setdefault(rule, []).append(rel.as_posix())
    return found


def entries(root: Path) -> dict[str, list[str]]:
    """Rule id → the text of each entry headed `### [id] …` in docs/rules (more than one is a duplicate)."""
    out: dict[str, list[str]] = {}
    for prefix, name in RULE_FILES.items():
        text = (root / "docs" / "rules" / name).read_text(encoding="utf-8")
        starts = [m.start() for m in ENTRY_START.finditer(text)] + [len(text)]
        for begin, end in zip(starts, starts[1:]):
            block = text[begin:end]
            m = HEADING.match(block)
            if m is None:
                continue
            rule = m.group(1)
            out.setdefault(rule if rule.startswith(prefix) else f"{rule} (in {name})", []).append(block)
    return out


def _defines(source: str, name: str) -> bool:
    definition = rf"^\s*(?:(?:async\s+)?def|class)\s+{name}\b|^\s*{name}\s*(?::[^=\n]*)?="
    return re.search(definition, source, re.M) is not None


def entry_problems(root: Path) -> list[str]:
    """Each problem with the entries themselves: duplicates, wrong file, no Code line, names that do not exist."""
    problems = []
    for rule, blocks in entries(root).items():
        if " (in " in rule:
            problems.append(f"{rule}: entry in the other game's file")
        if len(blocks) > 1:
            problems.append(f"{rule}: {len(blocks)} entries")
        for block in blocks:
            code = block.split("**Code.**", 1)[1] if "**Code.**" in block else ""
            refs = CODE_REF.findall(code)
            if not refs:
                problems.append(f"{rule}: no **Code.** line naming a file")
            for rel, dotted in refs:
                path = root / rel
                if not path.is_file():
                    problems.append(f"{rule}: {rel} does not exist")
                    continue
                source = path.read_text(encoding="utf-8")
                missing = [part for part in dotted.split(".") if part and not _defines(source, part)]
                if missing:
                    problems.append(f"{rule}: {rel} defines no {'.'.join(missing)}")
    return problems


def missing_entries(root: Path) -> dict[str, list[str]]:
    have = entries(root)
    return {rule: files for rule, files in cited_ids(root).items() if rule not in have}


def test_every_cited_rule_id_has_an_entry():
    assert missing_entries(ROOT) == {}


def test_entries_are_unique_and_name_places_that_exist():
    assert entry_problems(ROOT) == []


def test_both_games_have_entries():
    found = entries(ROOT)
    assert sum(r.startswith("CS-") for r in found) >= 37 and sum(r.startswith("CT-") for r in found) >= 40


def _planted_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "docs", root / "docs")
    for rel in ("games/ctbench/board.py", "games/ctbench/game.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    return root


def _rule(game: str, number: int) -> str:
    """A planted id, assembled so that this file does not itself cite it."""
    return f"{game}-{number}"


def test_checker_finds_a_citation_without_entry(tmp_path):
    root = _planted_tree(tmp_path)
    planted = root / "games" / "ctbench" / "planted.py"
    planted.write_text(f'"""A rule nobody wrote down ([{_rule("CT", 98)}])."""\n')
    (root / "README.md").write_text(f"The sweep follows {_rule('CS', 99)} and [{_rule('CT', 2)}].\n")
    assert missing_entries(root) == {_rule("CT", 98): ["games/ctbench/planted.py"], _rule("CS", 99): ["README.md"]}


def test_checker_finds_duplicates_dangling_names_and_misfiled_entries(tmp_path):
    root = _planted_tree(tmp_path)
    rules = root / "docs" / "rules" / "ctbench.md"
    planted = [
        (_rule("CT", "02"), "`games/ctbench/board.py::neighbours`"),
        (_rule("CT", 97), "`games/ctbench/nowhere.py`"),
        (_rule("CT", 96), "`games/ctbench/board.py::no_such`"),
        (_rule("CT", 95), None),
        (_rule("CS", 94), "`games/ctbench/board.py`"),
    ]
    rules.write_text(
        rules.read_text(encoding="utf-8")
        + "".join(
            f"\n### [{rule}] Planted\n\n**Decided.** x. **Why.** y.\n" + (f"**Code.** {code}.\n" if code else "")
            for rule, code in planted
        )
    )
    problems = entry_problems(root)
    assert f"{_rule('CT', '02')}: 2 entries" in problems
    assert f"{_rule('CT', 97)}: games/ctbench/nowhere.py does not exist" in problems
    assert f"{_rule('CT', 96)}: games/ctbench/board.py defines no no_such" in problems
    assert f"{_rule('CT', 95)}: no **Code.** line naming a file" in problems
    assert f"{_rule('CS', 94)} (in ctbench.md): entry in the other game's file" in problems
    # the real entries also name contractlang/ modules, which the planted tree lacks
    assert any("contractlang/interpreter/ctbench.py does not exist" in p for p in problems)
