"""Issue #49: the DP table cache through `contractlang solve` — an entry that is a link to /dev/zero or a FIFO is a
miss (never a hang or a MemoryError) and is replaced; a table edited in the cache is never believed, whether its
digest is recomputed without the key kept outside the cache or with it (then the table's invariants fail)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from solver.dp.cache import cache_secret, key_file, table_digest
from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.e2e  # the DP cache through `contractlang solve`, on links, FIFOs and forged tables

WORKED = ROOT / "examples" / "worked-example-1.contract"


def solve(cache: Path) -> dict:
    proc = run_cli("solve", WORKED, "--env", "1", "--cache-dir", cache, "--json", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def cache(tmp_path) -> tuple[Path, Path, dict]:
    """A cache holding the worked example's table: (directory, its entry, the result solved)."""
    directory = tmp_path / "dp"
    first = solve(directory)
    [entry] = directory.iterdir()
    return directory, entry, first


@pytest.mark.parametrize(
    "plant", [lambda p: p.symlink_to("/dev/zero"), lambda p: os.mkfifo(p)], ids=["dev-zero", "fifo"]
)
def test_an_entry_that_is_not_a_regular_file_is_a_miss_and_replaced(cache, plant):
    directory, entry, first = cache
    entry.unlink()
    plant(entry)
    again = solve(directory)
    assert again["cached"] is False and again["p_sat"] == first["p_sat"]
    assert entry.is_file() and not entry.is_symlink() and solve(directory)["cached"] is True


def _forge(entry: Path, keyed: bool, edit) -> None:
    """Rewrite the entry with `edit(result_json, policies)` applied and its digest recomputed: under the cache's
    key (someone who has it), or as a plain SHA-256 the way an unkeyed digest would be (someone who has only the
    cache)."""
    with np.load(entry) as data:
        arrays = {name: data[name] for name in data.files}
    policies = [arrays[f"round{t}"].copy() for t in range(5)]
    result = edit(str(arrays["result"]), policies)
    if keyed:
        digest = table_digest(cache_secret(key_file()), entry.stem, result, policies)
    else:
        h = hashlib.sha256(entry.stem.encode())
        h.update(result.encode())
        for policy in policies:
            h.update(repr((policy.dtype.str, policy.shape)).encode())
            h.update(policy.tobytes())
        digest = h.hexdigest()
    arrays.update({f"round{t}": p for t, p in enumerate(policies)}, result=np.array(result), digest=np.array(digest))
    with entry.open("wb") as handle:
        np.savez_compressed(handle, **arrays)


def _order(value, at_cash_zero: bool = False):
    def edit(result: str, policies: list) -> str:
        policy = policies[-1]
        where = tuple(np.argwhere(policy[..., :1, :] >= 0 if at_cash_zero else policy > 0)[0])
        policy[where] = value
        return result

    return edit


def _p_sat(result: str, policies: list) -> str:
    data = json.loads(result)
    data["p_sat"] = 1.5
    return json.dumps(data)


@pytest.mark.parametrize(
    "keyed, edit",
    [
        (False, _order(0)),  # a legal order, and a digest anyone could compute from the cache alone
        (True, _order(13**3)),  # past the order grid
        (True, _order(13**3 - 1, at_cash_zero=True)),  # 12 of each product with no cash to pay for them
        (True, _p_sat),  # a probability above 1
    ],
    ids=["unkeyed", "off-the-grid", "unaffordable", "probability"],
)
def test_a_forged_table_is_solved_afresh_and_replaced(cache, keyed, edit):
    directory, entry, first = cache
    _forge(entry, keyed, edit)
    again = solve(directory)
    assert again["cached"] is False and again["p_sat"] == first["p_sat"]
    assert solve(directory)["cached"] is True
