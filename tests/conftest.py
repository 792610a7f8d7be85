import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import EXAMPLES

# CI explores the same examples on every run, so a red build is reproducible; elsewhere they are fresh each run
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # each of the two test workers has a core; compiled kernels with a thread per core would oversubscribe it
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def tables(tmp_path_factory):
    """One DP table cache for the whole test run, on disk, so each (contract, env) is solved once: the test
    workers share it (the base temp directory's parent is common to them), and the cache writes atomically."""
    from solver.dp import TableCache

    root = tmp_path_factory.getbasetemp()
    return TableCache((root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "dp-tables")


@pytest.fixture(scope="session", autouse=True)
def _commands_share_the_tables(tables):
    """The commands the tests start read and write the same cache as the tests themselves, never the one in
    the checkout (a fresh clone would solve the examples' tables once per command otherwise)."""
    os.environ["CONTRACTLANG_DP_CACHE"] = str(tables.directory)
    os.environ["CONTRACTLANG_DP_CACHE_KEY"] = str(tables.directory.parent / "dp-cache.key")  # not the user's
