"""Rules are cited from the repository only: a `docs/rules/` id or a section of one of the two papers."""

import re
import subprocess
from pathlib import Path

from tests.helpers import ROOT

FORBIDDEN = re.compile("spec" + "/|\u00a7")  # spelt so that this file does not match itself


def tracked_text_files() -> list[Path]:
    """Every tracked file that decodes as UTF-8 text (figures and other binaries are skipped)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in names.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def test_no_citation_outside_the_repository():
    offending = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in tracked_text_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert not offending, "cite a docs/rules/ id or a paper section instead:\n" + "\n".join(offending)


def test_the_scan_sees_the_code():
    files = {path.relative_to(ROOT).as_posix() for path in tracked_text_files()}
    assert {
        "contractlang/ir.py",
        "README.md",
        "docs/rules/contractsim.md",
        "tests/conformance/contractsim.json",
    } <= files
