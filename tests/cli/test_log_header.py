"""`run --log` files start with a header naming the game (contract file, SHA-256 and text, environment or board,
seed, agents, rule set, version): `trace LOG` and `view LOG` need nothing else; logs without one still read; a
header that is wrong in any way is a one-line error through the real CLI, never a traceback."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from contractlang.interpreter.trace import LogHeader, contractlang_version
from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.e2e  # runs the CLI in subprocesses

EXAMPLE = ROOT / "examples" / "worked-example-1.contract"
SWAP = ROOT / "examples" / "ctbench-board-24-swap.contract"
OLD_LOG = ROOT / "examples" / "traces" / "worked-example-1-late-breach.jsonl"


def ok(*args) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def one_line_error(*args) -> str:
    done = run_cli(*args)
    assert done.returncode != 0 and "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("logs")
    ok("run", EXAMPLE, "--env", "5", "--customer", "random", "--seed", "7", "--log", out / "g.jsonl")
    ok("run", SWAP, "--board", "24", "--red", "random", "--seed", "3", "--log", out / "ct.jsonl")
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_header_names_the_game_and_trace_needs_nothing_else(logs):
    first, *events = lines(logs / "g.jsonl")
    header = LogHeader.model_validate(first)
    assert (header.game, header.env, header.seed, header.board) == ("contractsim", 5, 7, None)
    assert header.agents == {"customer": "random", "supplier": "rcc"} and header.name == "worked-example-1"
    assert header.source == EXAMPLE.read_text() and header.contract == str(EXAMPLE)
    assert header.sha256 == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert header.contractlang == contractlang_version() != "unknown"
    assert events and all(e["type"] in ("payment", "delivery", "week_end") for e in events)
    bare, given = (
        json.loads(ok("trace", *args, "--json")) for args in ([logs / "g.jsonl"], [EXAMPLE, logs / "g.jsonl"])
    )
    assert bare == given and bare["verdict"]["first_breach"] is not None


def test_a_ctbench_header_names_its_board_rules_and_players(logs):
    header = LogHeader.model_validate(lines(logs / "ct.jsonl")[0])
    assert (header.game, header.board, header.board_set, header.seed) == ("ctbench", 24, "ours", 3)
    assert header.agents == {"red": "random", "blue": "planner"} and (header.mode, header.rules) == ("pfp", "authors")
    assert header.visible is True
    bare, given = (
        json.loads(ok("trace", *args, "--json")) for args in ([logs / "ct.jsonl"], [SWAP, logs / "ct.jsonl"])
    )
    assert bare == given and bare["steps"]


def test_a_log_without_a_header_still_reads_given_its_contract():
    assert json.loads(ok("trace", EXAMPLE, OLD_LOG, "--json"))["verdict"]["first_breach"] == "supplier"
    assert "starts with no header naming its contract: give it" in one_line_error("trace", OLD_LOG)


def _hostile(logs: Path, tmp: Path, change) -> Path:
    header, *rest = (logs / "g.jsonl").read_text().splitlines(keepends=True)
    obj = json.loads(header)
    change(obj)
    path = tmp / "hostile.jsonl"
    path.write_text(json.dumps(obj) + "\n" + "".join(rest))
    return path


def _without_source(path: str):
    def change(obj):
        del obj["source"]
        obj["contract"] = path

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda h: h.update(seed="7"), "bad header: seed: Input should be a valid integer"),
        (lambda h: h.update(env=9), "bad header: env: Input should be less than or equal to 6"),
        (lambda h: h.update(agents=["random", "rcc"]), "bad header: agents: Input should be an object"),
        (lambda h: h.update(sha256="not-a-digest"), "bad header: sha256: String should match pattern"),
        (lambda h: h.update(format=2), "bad header: format: Input should be 1"),
        (lambda h: h.update(extra="x"), "bad header: extra: Extra inputs are not permitted"),
        (
            lambda h: h.update(source=h["source"].replace("$18", "$19")),
            "the contract text in the header does not match the header's SHA-256",
        ),
        (
            _without_source("/nonexistent/contract.contract"),
            "the header's contract /nonexistent/contract.contract cannot "
            "be read (No such file or directory); give the contract file",
        ),
        (
            _without_source(str(ROOT / "examples" / "catering-base.contract")),
            "catering-base.contract does not match the header's SHA-256",
        ),
        (lambda h: h.update(name="another"), "holds no valid contract 'another'"),
        (lambda h: h.update(game="ctbench"), "the header names a ctbench game and 'worked-example-1' is a contractsim"),
    ],
)
def test_a_hostile_header_is_one_line_error_in_trace_and_view(logs, tmp_path, change, message):
    path = _hostile(logs, tmp_path, change)
    assert message in one_line_error("trace", path)
    assert message in one_line_error("view", path, "--bundle", tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_a_header_with_its_source_reads_wherever_the_file_went(logs, tmp_path):
    """The text in the header is the contract: the file at its path may since have moved or changed."""
    path = _hostile(logs, tmp_path, lambda h: h.update(contract="/moved/away.contract"))
    assert json.loads(ok("trace", path, "--json")) == json.loads(ok("trace", logs / "g.jsonl", "--json"))


def test_a_header_whose_path_holds_the_contract_reads_without_its_text(logs, tmp_path):
    path = _hostile(logs, tmp_path, _without_source(str(EXAMPLE)))
    assert json.loads(ok("trace", path, "--json")) == json.loads(ok("trace", logs / "g.jsonl", "--json"))


def test_the_view_of_a_headed_log_plays_the_game_again_and_checks_it_against_the_log(logs, tmp_path):
    """A log whose events are the game's opens whole (prices, cash, RCC beside each decision); one whose events
    were altered is shown as its events only, saying that the game played again differs."""
    from contractlang.api.view.site import Viewer

    page = Viewer(logs / "g.jsonl", live=False).game("g0")
    assert page["shown"] == "rebuilt from the log's header (seed 7); its events are the log's"
    assert (
        page["env"] == 5
        and page["customer"] == "random"
        and all("prices" in w for w in page["weeks"] if w["role"] == "supplier")
    )
    header, *rest = (logs / "g.jsonl").read_text().splitlines(keepends=True)
    first_payment = next(k for k, line in enumerate(rest) if json.loads(line)["type"] == "payment")
    altered = json.loads(rest[first_payment])
    altered["amount"] += 1
    rest[first_payment] = json.dumps(altered) + "\n"
    (tmp_path / "altered.jsonl").write_text(header + "".join(rest))
    page = Viewer(tmp_path / "altered.jsonl", live=False).game("g0")
    assert (
        page["shown"] == "events of the log only (no prices, stock or cash); played again from seed 7, the game "
        "differs from the log"
    )
    assert page["env"] is None and page["weeks"][0]["paid"] == altered["amount"]


def test_a_game_under_another_floor_rule_set_is_traced_and_rebuilt_under_it(tmp_path):
    """The header names a floor rule set other than cs14 ([CS-14a]): `trace` replays under it without being told
    (an RE Supplier's empty weeks are deductions, not floor violations, under no-deduction-floor), `--floors`
    does the same for a log without a header, and `view` plays the game again under it."""
    from contractlang.api.view.site import Viewer

    deduction, variant = ROOT / "examples" / "catering-deduction.contract", "no-deduction-floor"
    log = tmp_path / "g.jsonl"
    ok("run", deduction, "--env", "1", "--supplier", "re", "--floors", variant, "--log", log)
    header, *events = log.read_text().splitlines(keepends=True)
    assert LogHeader.model_validate_json(header).floors == variant
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(events))
    by_header = json.loads(ok("trace", log, "--json"))
    assert by_header == json.loads(ok("trace", deduction, bare, "--floors", variant, "--json"))
    under_cs14 = json.loads(ok("trace", deduction, bare, "--json"))
    violations = [
        sum(not w["compliant"] for w in t["weeks"] if w["role"] == "supplier") for t in (by_header, under_cs14)
    ]
    assert violations == [4, 5] and by_header["weeks"][1]["deduction"] == 23
    page = Viewer(log, live=False).game("g0")
    assert page["shown"] == "rebuilt from the log's header (seed 42); its events are the log's"
    ok("run", SWAP, "--board", "24", "--log", tmp_path / "ct.jsonl")
    error = one_line_error("trace", tmp_path / "ct.jsonl", "--floors", variant)
    assert error == "error: usage: --floors is a rule of ContractSim games; this log is of a CT-Bench game"
