"""Every fenced code block of the documentation's tutorials and how-to guides is run or checked, as the
README's are (`tests/doc_blocks.py` states how a block is treated)."""

from __future__ import annotations

import pytest

from tests.doc_blocks import ROOT, Block, blocks, check_block_usage, kind, kind_or_error, run_block, workdir

PAGES = sorted([*(ROOT / "docs" / "tutorials").glob("*.md"), *(ROOT / "docs" / "how-to").glob("*.md")])
BLOCKS = {page: blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()) for page in PAGES}
EVERY = [b for page_blocks in BLOCKS.values() for b in page_blocks]
RUN = [(page, b) for page, page_blocks in BLOCKS.items() for b in page_blocks
       if kind_or_error(b) in ("commands", "contract", "python", "output")]


def test_the_pages_are_found():
    names = {p.relative_to(ROOT / "docs").as_posix() for p in PAGES}
    assert {"tutorials/first-contract.md", "how-to/external-agent.md"} <= names


def test_every_block_has_a_kind():
    problems = [k for k in map(kind_or_error, EVERY) if k.startswith("error:")]
    assert not problems, "\n".join(problems)


def test_commands_and_options_of_help_only_blocks_exist():
    problems = [p for b in EVERY if kind_or_error(b) in ("help-only", "synopsis") for p in check_block_usage(b)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("page", "block"), RUN, ids=[f"{b.source}:{b.line}-{kind(b)}" for _, b in RUN])
def test_block(page, block: Block, tmp_path, monkeypatch):
    run_block(block, BLOCKS[page], workdir(tmp_path), monkeypatch)
