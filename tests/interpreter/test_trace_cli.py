"""`contractlang trace`: replay reports, and file:line errors for malformed logs."""

import json

import pytest

from tests.hardening.hostile import SWAP, WORKED, cli, one_json_failure
from tests.helpers import GOLDEN, assert_each_fails_in_one_line, compare_golden, run_cli

CONTRACT = "examples/worked-example-1.contract"


def trace(*args):
    return run_cli("trace", *args)


def test_trace_example_log_json():
    proc = trace(CONTRACT, "examples/traces/worked-example-1-late-breach.jsonl", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"]["first_breach"] == "supplier" and report["verdict"]["week"] == 6
    assert [w["compliant"] for w in report["weeks"]] == [True] * 5 + [False, True, False, True, False, True]
    compare_golden(GOLDEN / "trace-late-breach.json", json.dumps(report, indent=2) + "\n")


def test_trace_table_golden():
    proc = trace(CONTRACT, "examples/traces/worked-example-1-late-breach.jsonl")
    assert proc.returncode == 0
    compare_golden(GOLDEN / "trace-late-breach.txt", proc.stdout)


def test_trace_ctbench():
    """Blue lacks the chip for its second entry: the paper's rules forfeit its score, the authors' block the
    payment and keep the entry ([CT-24a]); `trace` takes the rule set as `run` does, authors by default."""
    reports = {}
    for rules in ("paper", "authors", None):
        proc = trace(
            "examples/ctbench-board-24-swap.contract",
            "examples/traces/board-24-swap.jsonl",
            "--json",
            *(("--rules", rules) if rules else ()),
        )
        assert proc.returncode == 0, proc.stderr
        reports[rules] = json.loads(proc.stdout)
    assert [a["kind"] for a in reports["paper"]["enforcement"]] == ["chip_transfer", "forfeit"]
    assert reports["paper"]["forfeited"] == ["blue"]
    assert [a["kind"] for a in reports["authors"]["enforcement"]] == ["chip_transfer", "contract_blocked"]
    assert reports["authors"]["forfeited"] == [] and reports[None] == reports["authors"]
    assert [a["text"] for a in reports["paper"]["enforcement"]][1] == (
        "contract: blue lacks a blue chip for (0, 3): forfeits (score 0)"
    )


@pytest.mark.parametrize("rules", ["paper", "authors"])
def test_trace_tells_each_enforcement_in_its_own_words(rules):
    """The table's enforcement column is each event's own description, a blocked payment ([CT-24a]) included."""
    proc = trace("examples/ctbench-board-24-swap.contract", "examples/traces/board-24-swap.jsonl", "--rules", rules)
    assert proc.returncode == 0, proc.stderr
    told = {"paper": "forfeits (score 0)", "authors": "the contract does not pay this move"}[rules]
    assert "contract: red gives blue a red chip for (0, 1)" in proc.stdout and told in proc.stdout


BAD = {
    "bad-json": ('{"type": "payment", "week": 1, "amount": 18}\n{"type": "payment",', 2, "invalid JSON"),
    "unknown-type": ('{"type": "refund", "week": 1}\n', 1, "unknown event type 'refund'"),
    "ctbench-event": ('{"type": "game_end"}\n', 1, "unknown event type 'game_end' for a contractsim contract"),
    "out-of-order": (
        '{"type": "week_end", "week": 1}\n{"type": "payment", "week": 1, "amount": 5}\n',
        2,
        "arrives after week 2 is open",
    ),
    "wrong-kind": ('{"type": "delivery", "week": 1, "product": "pizza", "qty": 1}\n', 1, "delivery in payment week 1"),
    "missing-field": ('{"type": "payment", "week": 1}\n', 1, "bad payment event: amount: Field required"),
    "negative": ('{"type": "payment", "week": 1, "amount": -3}\n', 1, "greater than or equal to 0"),
    "unknown-product": (
        '{"type": "week_end", "week": 1}\n{"type": "delivery", "week": 2, "product": "sushi", "qty": 1}\n',
        2,
        "unknown product 'sushi'",
    ),
    "not-object": ("[1, 2]\n", 1, "one JSON object"),
}


@pytest.mark.parametrize("name", BAD)
def test_malformed_logs(tmp_path, name):
    text, line, message = BAD[name]
    log = tmp_path / f"{name}.jsonl"
    log.write_text(text)
    proc = trace(CONTRACT, str(log))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"{log}:{line}: " in proc.stderr and message in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"type": "payment", "week": 1, "amount": true}', "amount: Input should be a valid integer"),
        ('{"type": "payment", "week": 1, "amount": "18"}', "amount: Input should be a valid integer"),
        ('{"type": "payment", "week": 1, "amount": 18.0}', "amount: Input should be a valid integer"),
        ('{"type": "payment", "week": 1, "week": 3, "amount": 18}', "the key 'week' appears twice"),
        ('{"type": "payment", "week": 1, "amount": 1' + "0" * 5000 + "}", "invalid event"),
        ('{"type": "payment", "week": 1, "amount": 100000000000000000000}', "less than or equal to"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ],
    ids=["bool", "string", "float", "duplicate-key", "5000-digits", "above-bound", "deep"],
)
def test_trace_refuses_loose_values_with_file_and_line(tmp_path, line, message):
    log = tmp_path / "events.jsonl"
    log.write_text('{"type": "payment", "week": 1, "amount": 18}\n' + line + "\n")
    proc = cli("trace", WORKED, log)
    assert proc.returncode == 1 and f"{log}:2: " in proc.stderr and message in proc.stderr


def test_trace_refuses_an_off_board_tile(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text(
        json.dumps(
            {
                "type": "move_attempt",
                "player": "blue",
                "tile": [9, 1],
                "tile_colour": "red",
                "holdings": {"red": {"red": 1}, "blue": {"blue": 1}},
            }
        )
        + "\n"
    )
    payload = one_json_failure(cli("trace", SWAP, log, "--json"))
    assert payload["error"].startswith(f"{log}:1: bad move_attempt event: tile.0")


def test_trace_replays_a_ctbench_run_log_and_names_a_game_log(tmp_path):
    log = tmp_path / "run.jsonl"
    assert cli("run", SWAP, "--board", "24", "--log", log).returncode == 0
    traced = json.loads(cli("trace", SWAP, log, "--json").stdout)
    assert traced["finished"] == ["red", "blue"] and traced["steps"][-1]["event"] == {"type": "game_end"}
    game_log = tmp_path / "game.jsonl"
    game_log.write_text(
        json.dumps(
            {
                "type": "move_attempt",
                "round": 1,
                "player": "red",
                "tile": [0, 1],
                "tile_colour": "red",
                "holdings": {"red": {"red": 14}, "blue": {"blue": 14}},
            }
        )
        + "\n"
    )
    assert_each_fails_in_one_line(
        cli,
        [
            (
                ("trace", SWAP, game_log),
                f"{game_log}:1: a move_attempt with fields beyond the event's (round): a line of a game's own log",
            )
        ],
    )
