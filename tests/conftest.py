import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    # each of the two test workers has a core; compiled kernels with a thread per core would oversubscribe it.
    # Set before anything imports numba: it reads this once at import, and a pool launched at the machine's
    # width then fails the next compile, which rereads the variable
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from pathlib import Path

import pytest
from hypothesis import settings

from games.experiments.synth import BaseChoice, SolveJob, SynthPlan, Terms, run_solve, write_outputs
from tests.helpers import EXAMPLES, VARIANTS

# CI explores the same examples on every run, so a red build is reproducible; elsewhere they are fresh each run
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory, tables) -> Path:
    """The smallest synthetic set `synth` writes: one base contract in Env 1 (Example 1's terms) with two of its
    variants, solved directly instead of searched (a search takes minutes)."""
    out = tmp_path_factory.mktemp("synthetic") / "set"
    terms = Terms(quantities=(1, 1, 1), prices=(10, 5, 3), payments=(18, 18, 18, 18, 18, 0))
    base = BaseChoice(env=1, rho=1.0, terms_env=1, start=0, terms=terms, feasible_starts=1)
    jobs = [SolveJob(env=1, rho=1.0, variant=v, terms=terms) for v in VARIANTS]
    write_outputs(
        out, [base], {j: run_solve(j, tables) for j in jobs}, SynthPlan(starts=1, search_envs=(1,), rhos=(1.0,))
    )
    return out
