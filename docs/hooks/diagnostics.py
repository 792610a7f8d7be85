"""MkDocs hook: every diagnostic code the checker can report, found in the source, each with the example
the tests check (`tests/invalid/`), so the list cannot drift from the code."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PLACEHOLDER = "<!-- diagnostic-codes -->"
CODE = re.compile(r'"(E\d{3})"')
REPORTED = re.compile(r'error\(\s*"(E\d{3})",\s*(?:[^,()]|\([^()]*\))*,\s*f?"([^"]*)"', re.S)


def codes_in_source() -> dict[str, str]:
    """Each code the checker reports, with the message its first report in the source prints (a template)."""
    found: dict[str, str] = {}
    language = ROOT / "contractlang"
    for path in sorted([*language.glob("*.py"), *(language / "checker").glob("*.py")]):
        text = path.read_text(encoding="utf-8")
        for code, message in REPORTED.findall(text):
            found.setdefault(code, message)
        for code in CODE.findall(text):
            found.setdefault(code, "")
    return dict(sorted(found.items()))


def examples() -> dict[str, list[Path]]:
    """The files of `tests/invalid/` by the code their first comment line names."""
    by_code: dict[str, list[Path]] = {}
    for path in sorted((ROOT / "tests" / "invalid").glob("*.contract")):
        head = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
        for code in re.findall(r"E\d{3}", head):
            by_code.setdefault(code, []).append(path)
    return by_code


def diagnostic_codes() -> str:
    out = []
    files = examples()
    for code, message in codes_in_source().items():
        out += [f"### {code}", ""]
        chosen = files.get(code, [])
        if not chosen:
            out += [
                f"Message: `{message}`" if message else "",
                "",
                "Reported only with a board or an environment at hand (`run --board`, `check` deciding an "
                "`assert`), so it has no example in `tests/invalid/`.",
                "",
            ]
            continue
        path = chosen[0]
        source = path.read_bytes().decode("utf-8", "replace")
        what = source.split("\n", 1)[0].removeprefix("//").strip().removeprefix(f"{code}:").strip()
        expected = path.with_suffix(".expected").read_text(encoding="utf-8", errors="replace")
        out += [
            what[0].upper() + what[1:] + ("" if what.endswith(".") else ".") if what else "",
            "",
            f"`tests/invalid/{path.name}`:",
            "",
            "```text",
            source.rstrip("\n"),
            "```",
            "",
            "`contractlang check` prints:",
            "",
            "```text",
            expected.rstrip("\n"),
            "```",
            "",
        ]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, diagnostic_codes())
    return markdown
