"""Every block of docs/tutorials/your-agent.md and docs/reference/python-api.md runs (issue #43), in a scratch
folder holding the examples: a block marked `<!-- test: file NAME -->` is written to NAME, a ```bash block's
commands run (`contractlang …` in a real process), a ```python block is
executed, and a block marked `<!-- test: illustration -->` is only shown."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_process

pytestmark = pytest.mark.e2e  # the tutorial's commands in real processes

PAGES = ("docs/tutorials/your-agent.md", "docs/reference/python-api.md")
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->$")


def blocks(text: str) -> list[tuple[int, str, str, str]]:
    """(line, info, directive, body) of every fenced block."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        above = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        d = DIRECTIVE.match(above)
        out.append((i + 1, m.group(1), d.group(1) if d else "", "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return out


def run_block(page: str, line: int, info: str, directive: str, body: str, work: Path) -> str:
    where = f"{page}:{line}"
    if directive == "illustration":
        return ""
    if directive.startswith("file "):
        (work / directive.split()[1]).write_text(body)
        return ""
    if info == "bash":
        out = []
        for command in filter(None, (ln.strip() for ln in body.splitlines())):
            words = shlex.split(command)
            assert words[0] == "contractlang", f"{where}: cannot run {command!r}"
            done = run_process(*words[1:], cwd=work, env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert done.returncode == 0, f"{where}: {command}\n{done.stderr}"
            out.append(done.stdout)
        return "".join(out)
    assert info == "python", f"{where}: a ```{info} block needs a test directive"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(body, where, "exec"), {"__name__": "__tutorial__"})
    return printed.getvalue()


@pytest.mark.parametrize("page", PAGES)
def test_every_block_of_the_page_runs(page, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    outputs = [run_block(page, *block, tmp_path) for block in blocks((ROOT / page).read_text())]
    if page.endswith("your-agent.md"):
        assert len(outputs) >= 8
        tables = (tmp_path / "my-run" / "performance" / "tables.md").read_text()
        assert "| RCC | stingy |" in tables and "2 of the set's 180 contracts" in tables
        assert '"title": "contractsim customer observation"' in "".join(outputs)
    else:
        assert outputs[-1].splitlines() == [
            "True",
            "1.0",
            "['proved']",
            "215 11",
        ]  # worked example 1 (docs/rules/checks.md): U_Cust 215
