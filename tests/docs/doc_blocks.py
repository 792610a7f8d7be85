"""Running the fenced code blocks of Markdown pages (the README and the documentation's tutorials and how-to
guides), so a sample that stops working fails the build.

A block's treatment comes from the `<!-- doc-test: … -->` comment (`readme-test:` is the same) on the line
before its opening fence, else from its info string and content; the documentation's contributing page
states the convention.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import re
import shlex
import shutil
import textwrap
import tomllib
from functools import cache
from pathlib import Path
from typing import NamedTuple

from tests.helpers import ROOT, run_cli

DIRECTIVES = ("illustration", "help-only", "synopsis", "verify", "output")
PROGRAMS = ("contractlang", "python3", "python", "pip", "bash")
ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=.*")
DIRECTIVE = re.compile(r"^<!--\s*(?:doc|readme)-test:\s*(.*?)\s*-->$")
FENCE = re.compile(r"^\s*```\s*([\w+-]*)\s*$")  # also indented, inside a list item
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
WIDE = {**os.environ, "COLUMNS": "250"}  # help text laid out wide, so no option name is wrapped


class Block(NamedTuple):
    line: int  # of the opening fence, 1-based
    info: str
    directive: str
    text: str
    source: str = "README.md"  # the page, relative to the repository

    @property
    def name(self) -> str:
        return f"{self.source}:{self.line}"


def blocks(text: str, source: str = "README.md") -> list[Block]:
    """The fenced blocks of a Markdown text, each with the `doc-test` directive just above it (if any)."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{source}:{i + 1}: a code block is never closed")
        above = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        d = DIRECTIVE.match(above)
        found.append(
            Block(i + 1, m.group(1), d.group(1) if d else "", textwrap.dedent("\n".join(lines[i + 1 : end])), source)
        )
        i = end + 1
    return found


def _meaningful(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("//", "#"))]


def _program(words: list[str]) -> str:
    return next((w for w in words if not ASSIGNMENT.fullmatch(w)), "")


def split_assignments(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """`VAR=value … program args`: the environment assignments in front, then the command."""
    n = next((i for i, w in enumerate(words) if not ASSIGNMENT.fullmatch(w)), len(words))
    return dict(w.split("=", 1) for w in words[:n]), words[n:]


def kind(block: Block) -> str:
    """What the test does with a block; raises for a block it cannot classify, saying how to mark it."""
    if block.directive:
        word = block.directive.split()[0].rstrip(";")
        if word not in DIRECTIVES:
            raise ValueError(f"{block.name}: unknown readme-test directive {word!r} (known: {', '.join(DIRECTIVES)})")
        return "contract" if word == "verify" else word
    lines = _meaningful(block.text)
    if block.info == "contract" or (block.info == "" and lines and lines[0].startswith('contract "')):
        return "contract"
    if block.info in ("bash", "sh", "shell") or (
        block.info == "" and lines and all(_program(ln.split()) in PROGRAMS for ln in lines)
    ):
        return "commands"
    if block.info == "python":
        return "python"
    raise ValueError(
        f"{block.name}: a ```{block.info} block the test cannot run; put `<!-- readme-test: "
        "illustration -->` (a format or sketch) or `<!-- readme-test: output -->` (the output of the "
        "commands above) on the line before it"
    )


# --- commands -------------------------------------------------------------------------------------------


def commands(text: str) -> list[list[str]]:
    """The commands of a block: one per line (a trailing `\\` continues it) or `&&` link, comments dropped,
    quotes honoured."""
    out = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;<>")
        lexer.whitespace_split, lexer.commenters = True, "#"
        words = list(lexer)
        current: list[str] = []
        for w in words + ["&&"]:
            if w == "&&":
                if current:
                    out.append(current)
                current = []
            elif set(w) <= set("&|;<>"):
                raise ValueError(
                    f"shell syntax {w!r} in {line!r}: only `&&` is supported; write one command per "
                    "line, or mark the block illustration"
                )
            else:
                current.append(w)
    return out


@cache
def help_text(path: tuple[str, ...]) -> str:
    proc = run_cli(*path, "--help", env=WIDE)
    assert proc.returncode == 0, f"`contractlang {' '.join(path)} --help` exits {proc.returncode}: {proc.stderr}"
    return proc.stdout


def subcommands(text: str) -> set[str]:
    """Command names listed in a help text's Commands section (rich panel or plain click layout); a name sits
    at the start of its row, a wrapped description line is indented further."""
    names, inside = set(), False
    for line in text.splitlines():
        row = line.rstrip()
        if row.lstrip().startswith("│"):
            row = row.lstrip()[1:].removesuffix("│").rstrip()
        if re.match(r"^(╭─\s*)?Commands\b", line.strip()):
            inside = True
        elif inside and (not row.strip() or line.strip().startswith("╰")):
            inside = False
        elif inside and (m := re.match(r"^ {0,2}([a-z][a-z0-9_-]*)(\s|$)", row)):
            names.add(m.group(1))
    return names


def check_usage(args: list[str]) -> None:
    """`contractlang ARGS` names a command, and every option in ARGS appears in that command's --help."""
    path, rest = [], list(args)
    while rest and rest[0] in subcommands(help_text(tuple(path))):
        path.append(rest.pop(0))
    shown = " ".join(["contractlang", *path])
    below = subcommands(help_text(tuple(path)))
    assert not below, f"`{shown}` needs one of its commands ({', '.join(sorted(below))}), not {rest[:1]}"
    offered = set(OPTION.findall(help_text(tuple(path))))
    used = [w.split("=")[0] for w in rest if OPTION.fullmatch(w.split("=")[0])]
    missing = [o for o in used if o not in offered]
    assert not missing, f"`{shown}` has no option {', '.join(missing)} (see `{shown} --help`)"


def check_program(words: list[str]) -> None:
    """A command that is not `contractlang`: checked, not run."""
    program, args = words[0], words[1:]
    if program == "pip":
        assert args[:2] == ["install", "-e"] and len(args) == 3, f"only `pip install -e SPEC` is known: {words}"
        spec = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", args[2])
        assert spec is not None, f"`pip install -e {args[2]}` does not install this repository"
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
        unknown = [e for e in (spec.group(1) or "").split(",") if e and e not in extras]
        assert not unknown, f"pyproject.toml has no extra {', '.join(unknown)}"
    elif program in ("python3", "python", "bash"):
        if args[:1] == ["-m"] and program != "bash":
            assert importlib.util.find_spec(args[1]) is not None, f"no module {args[1]} for `{' '.join(words)}`"
        else:
            assert args and (ROOT / args[0]).is_file(), f"`{' '.join(words)}`: {args[:1]} is not in the repository"
    else:
        raise AssertionError(f"unknown program {program!r}; the pages' commands use {', '.join(PROGRAMS)}")


def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def _expanded(word: str, cwd: Path) -> list[str]:
    """A `*` pattern becomes the files it matches in `cwd`, as the shell would expand it."""
    matches = sorted(p.relative_to(cwd).as_posix() for p in cwd.glob(word)) if "*" in word else []
    return matches or [word]


def run_commands(block: Block, cwd: Path) -> str:
    """Run or check every command of a commands block; the stdout of the last `contractlang` command."""
    stdout = ""
    for line in commands(block.text):
        assigned, words = split_assignments(line)
        if words[0] != "contractlang":
            check_program(words)
            continue
        proc = run_cli(
            *(a for w in words[1:] for a in _expanded(w, cwd)),
            cwd=cwd,
            env={**os.environ, **assigned} if assigned else None,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (
            f"{block.name}: `{shlex.join(words)}` exits {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
        stdout = proc.stdout
    return stdout


def synopsis_commands(text: str) -> list[list[str]]:
    """Each `contractlang …` line of the Commands block with its continuation lines, descriptions cut off."""
    found: list[list[str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith("contractlang "):
            found.append([])
        elif not found or not stripped.startswith(("[", "--")):
            continue  # a description line
        usage = re.split(r"\s{2,}(?=[^\s\[|-])", stripped)[0]
        found[-1] += re.sub(r"[\[\]|]", " ", usage).split()
    return [words[1:] if words[:1] == ["contractlang"] else words for words in found]


# --- contracts --------------------------------------------------------------------------------------------


def check_contract(block: Block, cwd: Path) -> None:
    path = cwd / "block.contract"
    path.write_text(block.text + "\n", encoding="utf-8")
    proc = run_cli("check", str(path))
    assert proc.returncode == 0, f"{block.name}: `check` fails:\n{proc.stderr}"
    ctbench = re.search(r"^\s*game\s+ctbench\b", block.text, re.M) is not None
    if not block.directive:
        assert not ctbench, (
            f"{block.name}: a CT-Bench contract is verified on its board; put "
            "`<!-- readme-test: verify --board N -->` on the line before it"
        )
        return
    spec, _, tail = block.directive.removeprefix("verify").partition(";")
    refutes = set()
    if tail.strip():
        word, _, names = tail.strip().partition(" ")
        assert word == "refutes", f"{block.name}: after `;` the directive takes `refutes NAME,…`, not {word!r}"
        refutes = {n.strip() for n in names.split(",") if n.strip()}
    proc = run_cli("verify", str(path), *shlex.split(spec), "--json")
    assert proc.returncode == 0, f"{block.name}: `verify{spec}` exits {proc.returncode}:\n{proc.stderr}"
    statuses = {c["name"]: (c["status"], c["message"]) for c in json.loads(proc.stdout)["checks"]}
    wrong = {name: s for name, s in statuses.items() if s[0] != ("refuted" if name in refutes else "proved")}
    assert not wrong and refutes <= set(statuses), f"{block.name}: `verify{spec}` gives {wrong or statuses}"


# --- python and output ------------------------------------------------------------------------------------


def run_python(block: Block, cwd: Path, monkeypatch) -> None:
    monkeypatch.chdir(cwd)
    if ">>>" not in block.text:
        exec(compile(block.text, block.name, "exec"), {"__name__": "doc_block"})
        return
    test = doctest.DocTestParser().get_doctest(block.text, {}, block.name, str(ROOT / block.source), block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def same_output(shown: str, actual: str) -> bool:
    """The page's text is the output, up to trailing spaces and trailing blank lines."""

    def lines(text: str) -> list[str]:
        return [ln.rstrip() for ln in text.rstrip().splitlines()]

    return lines(shown) == lines(actual)


def kind_or_error(block: Block) -> str:
    try:
        return kind(block)
    except ValueError as exc:
        return f"error: {exc}"


def usages(block: Block) -> list[list[str]]:
    """The commands a help-only or synopsis block names, `contractlang` first."""
    if kind(block) == "synopsis":
        return [["contractlang", *args] for args in synopsis_commands(block.text)]
    return commands(block.text)


def check_block_usage(block: Block) -> list[str]:
    """Every problem with the commands of a help-only or synopsis block, each naming the block."""
    problems = []
    for line in usages(block):
        words = split_assignments(line)[1]
        try:
            if words[0] == "contractlang":
                check_usage(words[1:])
            else:
                check_program(words)
        except AssertionError as exc:
            problems.append(f"{block.name}: {exc}")
    return problems


def run_block(block: Block, context: list[Block], cwd: Path, monkeypatch) -> None:
    """Run a commands, contract, python or output block of `context` (its page's blocks) in `cwd`."""
    k = kind(block)
    if k == "commands":
        run_commands(block, cwd)
    elif k == "contract":
        check_contract(block, cwd)
    elif k == "python":
        run_python(block, cwd, monkeypatch)
    else:
        source = next((b for b in reversed(context[: context.index(block)]) if kind(b) == "commands"), None)
        assert source is not None, f"{block.name}: an output block needs a commands block above it"
        actual = run_commands(source, cwd)
        assert same_output(block.text, actual), f"{block.name} is not what {source.name} prints:\n{actual}"
