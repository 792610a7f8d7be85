"""The viewer's list and page builders on records changed at random (hypothesis): a field removed, or replaced by
any JSON value — NaN, Infinity, huge integers, strings, lists, objects. The list either shows the record or says
why not; the page either shows the game or says why not, in JSON a browser reads; nothing raises."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import from_json

from contractlang.api.view.index import BadRecord, rows_of
from contractlang.api.view.options import ViewOptions
from contractlang.api.view.site import page_of, site_json
from tests.helpers import EXAMPLES, run_cli

pytestmark = pytest.mark.e2e  # whole games are played again and set beside the DP baseline

# changing the contract or the environment would solve other DP tables per example: kept, the rest is fair game
KEPT = {"contract_ir", "env", "contract"}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=4,
)


@st.composite
def changed(draw, record: dict) -> dict:
    """`record` with one to three fields (at any depth outside KEPT) removed or replaced."""
    obj = copy.deepcopy(record)
    for _ in range(draw(st.integers(1, 3))):
        target = obj
        for _ in range(draw(st.integers(0, 3))):
            keys = [k for k, v in _items(target) if k not in KEPT and isinstance(v, dict | list) and v]
            if not keys:
                break
            target = target[draw(st.sampled_from(keys))]
        keys = [k for k, _ in _items(target) if k not in KEPT]
        if not keys:
            continue
        key = draw(st.sampled_from(keys))
        if isinstance(target, dict) and draw(st.booleans()):
            del target[key]
        else:
            target[key] = draw(JSON)
    return obj


def _items(container) -> list:
    return list(container.items()) if isinstance(container, dict) else list(enumerate(container))


def _record(*args) -> dict:
    done = run_cli("run", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


RECORDS = {
    "contractsim": (str(EXAMPLES / "worked-example-1.contract"), "--env", "5", "--customer", "random"),
    "ctbench": (str(EXAMPLES / "ctbench-board-24-swap.contract"), "--board", "24"),
}


@pytest.fixture(scope="module")
def baselines(tables):
    from contractlang.api.view.games import Baselines

    return Baselines(tables)


@pytest.mark.parametrize("game", sorted(RECORDS))
def test_no_record_breaks_the_list_or_the_page(game, baselines):
    record = _record(*RECORDS[game])
    options = ViewOptions()
    shown = {"pages": 0, "errors": 0, "bad": 0}

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(changed(record))
    def check(obj: dict) -> None:
        raw = json.dumps(obj).encode() + b"\n"  # Python writes NaN and Infinity; a store may hold them
        try:
            rows = rows_of(from_json(raw), 0, 1, 0)
        except BadRecord as exc:
            assert str(exc) and "\n" not in str(exc)
            shown["bad"] += 1
            return
        for row in rows:
            page = page_of(raw, row, options, baselines)
            json.loads(site_json(page), parse_constant=lambda c: pytest.fail(f"{c} in a page"))
            assert page["id"] == row.id and ("error" in page) != ("kind" in page)
            shown["errors" if "error" in page else "pages"] += 1

    check()
    assert shown["errors"] and shown["pages"], shown  # pages both shown and refused: the changes reached them
