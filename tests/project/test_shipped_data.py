"""The data the package ships is reached through the package (`cl.data`), wherever it is installed: the user
documentation never sends a reader to a path in the source tree for it."""

from __future__ import annotations

import re
from pathlib import Path

import contractlang as cl
import games
from tests.helpers import ROOT


def test_the_shipped_synthetic_set_is_reached_through_the_api():
    shipped = cl.data.synthetic_set()
    assert shipped.is_relative_to(Path(games.__file__).parent)  # inside the installed package, not the checkout
    manifest = (shipped / "manifest.json").read_text()
    assert '"contracts"' in manifest and len(list((shipped / "contracts").iterdir())) == 180


def test_user_pages_name_no_source_path_to_shipped_data():
    pages = sorted([*(ROOT / "docs" / "tutorials").glob("*.md"), *(ROOT / "docs" / "how-to").glob("*.md")])
    found = [
        f"{page.relative_to(ROOT)}:{number}"
        for page in pages
        for number, line in enumerate(page.read_text().splitlines(), start=1)
        if re.search(r"games/\w+/data\b", line)
    ]
    assert pages and found == []
