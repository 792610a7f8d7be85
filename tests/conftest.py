import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"


def compare_golden(path: Path, actual: str) -> None:
    """Compare with a golden file; `UPDATE_GOLDEN=1 pytest` rewrites it instead."""
    if UPDATE_GOLDEN or not path.exists():
        if not UPDATE_GOLDEN:
            pytest.fail(f"missing golden file {path}; run UPDATE_GOLDEN=1 pytest to create it")
        path.write_text(actual, encoding="utf-8")
        return
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def tables(tmp_path_factory):
    """One DP table cache for the whole test session, on disk, so each (contract, env) is solved once."""
    from solver.dp import TableCache

    return TableCache(tmp_path_factory.mktemp("dp-tables"))
