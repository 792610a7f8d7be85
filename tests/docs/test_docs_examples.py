"""Every fenced code block of the documentation's tutorials and how-to guides is run or checked, as the
README's are (`tests/docs/doc_blocks.py` states how a block is treated)."""

from __future__ import annotations

import pytest

from tests.docs.doc_blocks import ROOT, Block, blocks, check_block_usage, kind, kind_or_error, run_block, workdir

OWN_TEST = {"tutorials/your-agent.md"}  # runs its blocks in order in one folder: tests/docs/test_docs_agent_tutorial.py
PAGES = sorted(
    p
    for p in [*(ROOT / "docs" / "tutorials").glob("*.md"), *(ROOT / "docs" / "how-to").glob("*.md")]
    if p.relative_to(ROOT / "docs").as_posix() not in OWN_TEST
)
BLOCKS = {page: blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()) for page in PAGES}
EVERY = [b for page_blocks in BLOCKS.values() for b in page_blocks]
RUN = [
    (page, b)
    for page, page_blocks in BLOCKS.items()
    for b in page_blocks
    if kind_or_error(b) in ("commands", "contract", "python", "output")
]


def test_the_pages_are_found():
    names = {p.relative_to(ROOT / "docs").as_posix() for p in PAGES}
    assert {"tutorials/first-contract.md", "how-to/external-agent.md"} <= names


def test_every_block_has_a_kind():
    problems = [k for k in map(kind_or_error, EVERY) if k.startswith("error:")]
    assert not problems, "\n".join(problems)


def test_commands_and_options_of_help_only_blocks_exist():
    problems = [p for b in EVERY if kind_or_error(b) in ("help-only", "synopsis") for p in check_block_usage(b)]
    assert not problems, "\n".join(problems)


@pytest.mark.e2e
@pytest.mark.parametrize(("page", "block"), RUN, ids=[f"{b.source}:{b.line}-{kind(b)}" for _, b in RUN])
def test_block(page, block: Block, tmp_path, monkeypatch):
    run_block(block, BLOCKS[page], workdir(tmp_path), monkeypatch)


def _hook(name: str):
    """A module of `docs/hooks/` (the site's generators), loaded as the site build loads it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_diagnostic_code_has_an_example_unless_it_needs_a_board_or_an_environment():
    """The diagnostics page lists the codes found in the checker's source with their `tests/invalid/` example;
    only E611 (a chip colour against a board) and E703 (an `assert` decided by `check`) are reported beyond
    `check_source`, so they have none."""
    hook = _hook("diagnostics")
    codes = hook.codes_in_source()
    assert {"E001", "E102", "E611", "E703"} <= set(codes)
    assert set(codes) - set(hook.examples()) == {"E611", "E703"}
    page = hook.diagnostic_codes()
    assert all(f"### {code}" in page for code in codes)


def test_the_cli_reference_names_every_command():
    page = _hook("cli_reference").cli_reference()
    for command in ("check", "verify", "solve", "run", "experiment rational", "ctbench sweep", "lsp"):
        assert f"## `contractlang {command}`" in page
    assert "`--out`" in page
