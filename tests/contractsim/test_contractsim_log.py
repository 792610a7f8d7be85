"""The ContractSim game log is typed (issue #29, item 7): entries are pydantic models discriminated by `type`,
their JSON is what `run --json` and `--log` always wrote (golden), records written as dicts load, and an entry of
an unknown type is refused by name."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from contractlang.interpreter.events import Delivery, Payment, WeekEnd, monitor_events
from contractlang.interpreter.trace import LogHeader
from games.contractsim.environments import environment
from games.contractsim.log import LOG_ADAPTER, OrderPlaced, PaymentWeekEnd, ProductionWeekEnd, WeekShocks
from games.contractsim.play import RunRecord, play
from tests.helpers import ROOT, compare_golden, contract, run_cli

GOLDEN = ROOT / "tests" / "golden"
# policies that solve no DP table, so every entry kind (breaches, shocks, orders, carried deficits) comes cheap
CASES = {
    "contractsim-run-hotel": ("examples/hotel-cleaning.contract", "3", "random", "random", "5"),
    "contractsim-run-rollover": ("examples/catering-rollover.contract", "1", "random", "re", "7"),
}


@pytest.mark.parametrize("name", CASES)
def test_run_json_log_file_and_story_are_unchanged(name, tmp_path):
    """`run --json` (its trajectory included), the `--log` file and the story text, byte for byte."""
    path, env, customer, supplier, seed = CASES[name]
    args = ("run", path, "--env", env, "--customer", customer, "--supplier", supplier, "--seed", seed)
    played = run_cli(*args, "--json", "--log", str(tmp_path / "events.jsonl"), cwd=ROOT)
    told = run_cli(*args, cwd=ROOT)
    assert played.returncode == told.returncode == 0, played.stderr + told.stderr
    header, events = (tmp_path / "events.jsonl").read_text().split("\n", 1)
    # the header names this machine's path and this version: checked apart, the events byte for byte
    header = LogHeader.model_validate_json(header)
    assert (header.contract, header.env, header.seed, header.agents) == (
        str(ROOT / path),
        int(env),
        int(seed),
        {"customer": customer, "supplier": supplier},
    )
    compare_golden(
        GOLDEN / f"{name}.txt",
        "--- run --json ---\n" + played.stdout + "--- --log ---\n" + events + "--- story ---\n" + told.stdout,
    )


def test_every_entry_kind_round_trips_through_json():
    record = play(contract(ro=2, grim=False), environment(1), "random", "random", seed=3)
    kinds = {type(e) for e in record.log}
    assert kinds == {Payment, PaymentWeekEnd, WeekShocks, OrderPlaced, Delivery, ProductionWeekEnd}
    back = RunRecord.model_validate_json(record.model_dump_json())
    assert back == record and back.log == record.log
    assert LOG_ADAPTER.validate_json(LOG_ADAPTER.dump_json(record.log)) == record.log


def test_a_record_written_with_dict_entries_loads_into_typed_entries():
    """Records from before the log was typed hold the same objects; they load, and dump back to them."""
    record = play(contract(), environment(2), "random", "re", seed=11)
    as_written = json.loads(record.model_dump_json())
    assert all(isinstance(e, dict) and "type" in e for e in as_written["log"])
    loaded = RunRecord.model_validate(as_written)
    assert loaded.log == record.log
    assert json.loads(loaded.model_dump_json()) == as_written


def test_the_two_week_ends_are_told_apart_by_what_they_carry():
    log = LOG_ADAPTER.validate_python(
        [
            {"type": "week_end", "week": 1, "due": 18, "compliant": True},
            {"type": "week_end", "week": 2, "required": [1, 1, 1], "compliant": False},
        ]
    )
    assert [type(e) for e in log] == [PaymentWeekEnd, ProductionWeekEnd]
    assert log[1].required == (1, 1, 1) and log[1].compliant is False


@pytest.mark.parametrize(
    "entry, named",
    [
        ({"type": "bonus", "week": 1, "amount": 5}, "'bonus'"),
        ({"type": "move_attempt", "player": "red"}, "'move_attempt'"),  # a CT-Bench event is not a ContractSim entry
        ({"week": 1, "amount": 5}, "Unable to extract tag"),
    ],
)
def test_an_unknown_entry_type_is_a_validation_error_naming_it(entry, named):
    with pytest.raises(ValidationError) as err:
        LOG_ADAPTER.validate_python([entry])
    message = str(err.value)
    assert named in message
    if "type" in entry:
        assert (
            "does not match any of the expected tags: 'payment', 'delivery', 'week_end', 'shocks', 'order'" in message
        )


def test_a_week_end_with_neither_due_nor_required_is_refused():
    with pytest.raises(ValidationError, match="due|required"):
        LOG_ADAPTER.validate_python([{"type": "week_end", "week": 3, "compliant": True}])


def test_an_old_record_with_a_bad_entry_names_it():
    record = json.loads(play(contract(), environment(1), "re", "re", seed=1).model_dump_json())
    record["log"][4] = {"type": "refund", "week": 3, "amount": 1}
    with pytest.raises(ValidationError, match="'refund'"):
        RunRecord.model_validate(record)


def test_the_monitor_events_are_the_log_without_annotations():
    record = play(contract(), environment(1), "random", "random", seed=5)
    events = monitor_events(record.log)
    assert all(type(e) in (Payment, Delivery, WeekEnd) for e in events)
    assert [e.week for e in events if isinstance(e, WeekEnd)] == list(range(1, 12))
    assert record.monitor_events() == [e.model_dump() for e in events]
