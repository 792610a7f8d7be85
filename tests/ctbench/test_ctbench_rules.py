"""CT-Bench rule sets ([CT-24a]): the authors' engine and the paper's text as one Monitor with a parameter.

Each of the three differences is a hand-built game in the authors' log format, written here turn by turn (who
moved where and who paid), imported and replayed through the CLI under both rule sets: `authors` passes through
every logged state, `paper` parts from the log exactly by the rule the game was built for.
"""

import json

from contractlang.interpreter import ContractBlocked, Forfeit, Rules, compile
from contractlang.interpreter.events import ChipCounts, Holdings, MoveAttempt
from contractlang.ir import CoverageTerm, CTBenchIR
from games.ctbench.board import benchmark_boards
from games.ctbench.log import LOG_EVENT
from games.ctbench.play import GameRecord
from games.ctbench.sweep import GameSpec
from games.runner import stored_records
from tests.helpers import ROOT, run_cli

BOARD = benchmark_boards("paper")[0]  # grid 0: GRBR / BRRR / BBBR / RBBG
LETTER = {"red": "R", "blue": "B", "green": "G"}
START_CHIPS = {"red": {"red": 14, "blue": 0, "green": 2}, "blue": {"red": 0, "blue": 14, "green": 2}}
INDEX = {"red": "0", "blue": "1"}


def write_game(directory, contract: dict, turns: list[dict], pfp: bool = True) -> None:
    """A game directory as the authors' logger writes one. `turns[k]` maps a player to what it did in turn k:
    `trade` (offer, request, accepted), `move` (tile, paid by "self" or "contract"). Chips follow from that:
    a trade swaps, a move costs its payer one chip of the tile's colour."""
    chips = {p: dict(c) for p, c in START_CHIPS.items()}
    position = {"red": [0, 0], "blue": [0, 0]}
    logged = {}
    for k, turn in enumerate(turns):
        entry = {
            p: {"position": {"start": list(position[p])}, "chips": {"start": _letters(chips[p])}}
            for p in ("red", "blue")
        }
        for p in ("red", "blue"):
            if "trade" in turn.get(p, {}):
                give, take, accepted = turn[p]["trade"]
                entry[p]["trade"] = {
                    "offer": [[LETTER[c], n] for c, n in give.items()],
                    "request": [[LETTER[c], n] for c, n in take.items()],
                    "outcome": "accepted" if accepted else "rejected",
                }
                if accepted:
                    partner = "blue" if p == "red" else "red"
                    for c, n in give.items():
                        chips[p][c] -= n
                        chips[partner][c] += n
                    for c, n in take.items():
                        chips[p][c] += n
                        chips[partner][c] -= n
        for p in ("red", "blue"):
            move = turn.get(p, {}).get("move")
            if move is None:
                entry[p]["move_type"] = "no_move"
                continue
            tile, paid_by = move
            payer = p if paid_by == "self" else ("blue" if p == "red" else "red")
            chips[payer][BOARD.board.colour(tile)] -= 1
            position[p] = list(tile)
            entry[p].update(move_made=list(tile), move_type="regular" if paid_by == "self" else "move_under_contract")
        for p in ("red", "blue"):
            entry[p]["position"]["end"] = list(position[p])
            entry[p]["chips"]["end"] = _letters(chips[p])
        logged[str(k)] = {"players": {INDEX[p]: entry[p] for p in ("red", "blue")}}
    logged["0"]["contract"] = {
        "judge_contract": contract,
        "agreement_status": True,
        "player_0_agreed": "accepted",
        "player_1_agreed": "accepted",
    }
    scores = [20 + 5 * sum(chips[p].values()) if position[p] == [3, 3] else 0 for p in ("red", "blue")]
    counters = ("total_p4p_promises_kept", "total_p4p_promises_broken", "moves_made_under_strict_contract")
    metrics = {f"{name}_{i}": 0 for name in counters for i in (0, 1)}
    metrics.update(
        total_trades_proposed=0,
        total_trades_accepted=0,
        total_p4p_arrangements_proposed=0,
        total_p4p_arrangements_accepted=0,
    )
    final = {
        "players": {INDEX[p]: {"position": position[p], "chips": _letters(chips[p])} for p in ("red", "blue")},
        "total_turns": str(len(turns)),
        "scores": {"Player 0": scores[0], "Player 1": scores[1]},
        "metrics": metrics,
    }
    directory.mkdir(parents=True)
    grid = [list(row) for row in BOARD.board.rows()]
    (directory / "metadata.json").write_text(
        json.dumps(
            {
                "model_pair": "HAND-HAND",
                "grid_id": BOARD.source_id,
                "grid": grid,
                "bucket": BOARD.source_bucket,
                "config": {"pay4partner": pfp, "contract_type": "strict", "fog_of_war": [False, False]},
            }
        )
    )
    (directory / f"event_log_{directory.name}.json").write_text(
        json.dumps({"game": {"turns": logged, "final_state": final}})
    )


def _letters(chips: dict) -> dict:
    return {LETTER[c]: n for c, n in chips.items()}


def entry(giver: str, receiver: str, colour: str) -> dict:
    return {"giver": giver, "receiver": receiver, "color": colour}


def hand_built_games(root):
    """The three [CT-24a] differences on paper board 0, each as the authors' engine played it."""
    # (1) the entry names a green chip for the red tile (0,1): the authors' engine moves a red chip, spent on it
    write_game(
        root / "colour", {"(0,1)": entry("Player 0", "Player 1", "G")}, [{"blue": {"move": ((0, 1), "contract")}}]
    )
    # (2) red holds no blue chip when blue enters the blue tile (1,0): the payment is blocked, blue pays itself,
    # nobody forfeits; once a trade has given red a blue chip, the same entry pays blue's second entry
    write_game(
        root / "blocked",
        {"(1,0)": entry("Player 0", "Player 1", "B")},
        [
            {"blue": {"move": ((1, 0), "self")}},
            {"blue": {"trade": ({"blue": 1}, {"red": 1}, True), "move": ((0, 0), "self")}},
            {"blue": {"move": ((1, 0), "contract")}},
        ],
        pfp=False,
    )
    # (3) the goal entry is keyed "(3, 3)": the authors' engine never matches it, so red pays its own green chip
    path = BOARD.board.best_path("red")[0][1:]
    write_game(
        root / "key",
        {"(3, 3)": entry("Player 1", "Player 0", "G")},
        [{"red": {"move": (tile, "self")}} for tile in path],
    )


def replayed(tmp_path, rules: str) -> dict:
    runs = tmp_path / "runs.jsonl"
    if not runs.exists():
        hand_built_games(tmp_path / "logs")
        assert run_cli("ctbench", "import", str(tmp_path / "logs"), "--out", str(runs)).returncode == 0
    proc = run_cli("ctbench", "replay", str(runs), "--rules", rules, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_hand_built_games_agree_under_the_authors_rules(tmp_path):
    data = replayed(tmp_path, "authors")
    assert (data["replayed"], data["agree"], data["rules"]) == (3, 3, "authors")
    assert all(g["final_scores_agree"] and g["needs"] == [] for g in data["games"])


def test_each_difference_is_named_under_the_paper_rules(tmp_path):
    data = replayed(tmp_path, "paper")
    assert (data["replayed"], data["agree"]) == (3, 0)
    verdicts = {g["source"]: g for g in data["games"]}
    assert verdicts["colour"]["needs"] == ["contract colour"] and verdicts["colour"]["first"]["turn"] == 0
    # the paper's giver forfeits at the first entry; the entry is then spent, so blue pays its second entry itself
    assert verdicts["blocked"]["needs"] == ["contract forfeit"] and verdicts["blocked"]["first"]["turn"] == 0
    assert "red forfeited its score" in verdicts["blocked"]["first"]["detail"]
    key = verdicts["key"]
    assert key["needs"] == ["contract key"] and key["first"]["turn"] == 5
    assert (key["logged_scores"], key["our_scores"]) == ([70, 0], [75, 0])  # red kept its second green chip
    assert data["by_rule"] == {"contract colour": 1, "contract forfeit": 1, "contract key": 1}
    assert data["scores_differ"] == 1


def test_published_fixture_logs_agree_under_the_authors_rules(tmp_path):
    runs = tmp_path / "runs.jsonl"
    assert run_cli("ctbench", "import", str(ROOT / "tests/data/ctbench_logs"), "--out", str(runs)).returncode == 0
    data = json.loads(run_cli("ctbench", "replay", str(runs), "--json").stdout)
    assert (data["rules"], data["replayed"], data["agree"]) == ("authors", 14, 14)
    paper = json.loads(run_cli("ctbench", "replay", str(runs), "--rules", "paper", "--json").stdout)
    assert paper["agree"] == 10 and set(paper["by_rule"]) <= {"contract colour", "contract forfeit", "contract key"}


def test_one_monitor_both_rule_sets():
    """The same entry and move: the paper's rules move the named chip or forfeit; the authors' move the tile's."""
    ir = CTBenchIR(
        name="t",
        parties=("P-Red", "P-Blue"),
        coverage=(CoverageTerm(tile=(1, 0), giver="red", receiver="blue", colour="green"),),
    )
    rich = Holdings(red=ChipCounts(red=14, blue=1, green=2), blue=ChipCounts(blue=14, green=2))
    poor = Holdings(red=ChipCounts(red=14, green=2), blue=ChipCounts(blue=14, green=2))
    move = MoveAttempt(player="blue", tile=(1, 0), tile_colour="blue", holdings=rich)
    paper, authors = compile(ir, Rules.named("paper")), compile(ir, Rules.named("authors"))
    assert [(a.colour, a.pays_move) for a in paper.apply(move).last_actions] == [("green", False)]
    assert [(a.colour, a.pays_move) for a in authors.apply(move).last_actions] == [("blue", True)]
    blocked = authors.apply(move.model_copy(update={"holdings": poor}))
    assert isinstance(blocked.last_actions[0], ContractBlocked) and blocked.forfeited == ()
    assert blocked.open_entries("blue") == [0]  # still usable
    assert blocked.apply(move).last_actions[0].pays_move
    forfeit = compile(
        ir.model_copy(update={"coverage": (ir.coverage[0].model_copy(update={"colour": None}),)}), Rules.named("paper")
    ).apply(move.model_copy(update={"holdings": poor}))
    assert isinstance(forfeit.last_actions[0], Forfeit) and forfeit.open_entries("blue") == []


def test_logs_written_before_typed_events_read_back_byte_for_byte():
    lines = (ROOT / "tests/data/ctbench_log_before_types.jsonl").read_text().splitlines()
    assert len({json.loads(line)["type"] for line in lines}) == 12
    for line in lines:
        assert json.dumps(LOG_EVENT.validate_json(line).model_dump(mode="json")) == line
    text = (ROOT / "tests/data/ctbench_record_before_rules.json").read_text()
    record = GameRecord.model_validate_json(text)
    assert record.rules == "paper" and record.board_set == "ours"  # what every older record was played by
    old_log = json.loads(text)["log"]
    assert json.loads(record.model_dump_json())["log"] == old_log
    assert [type(e).__name__ for e in record.log][2:5] == ["RoundMoveAttempt", "ChipTransfer", "Moved"]


SHORT_GIVER = 'contract "c" {\n  game ctbench.paper\n  cover {\n    (1,0): red pays for blue\n  }\n}\n'


def test_run_blocks_the_payment_or_forfeits_by_rule_set(tmp_path):
    """Red holds no blue chip when blue enters the blue tile (1,0) of paper board 0 (the header names the set)."""
    contract = tmp_path / "c.contract"
    contract.write_text(SHORT_GIVER)
    played = {}
    for rules in ("authors", "paper"):
        log = tmp_path / f"{rules}.jsonl"
        proc = run_cli("run", str(contract), "--board", "0", "--rules", rules, "--log", str(log), "--json")
        assert proc.returncode == 0, proc.stderr
        traced = run_cli("trace", str(contract), str(log), "--rules", rules, "--json")  # the log replays alike
        assert traced.returncode == 0, traced.stderr
        played[rules] = (json.loads(proc.stdout), [e["kind"] for e in json.loads(traced.stdout)["enforcement"]])
    (authors, authors_log), (paper, paper_log) = played["authors"], played["paper"]
    assert (authors_log, paper_log) == (["contract_blocked"], ["forfeit"])
    assert (authors["rules"], authors["board_set"], authors["forfeited"]) == ("authors", "paper", [])
    assert authors["scores"] == {"red": 70, "blue": 70}  # blue paid the tile itself and both walked home
    assert (paper["rules"], paper["forfeited"], paper["scores"]["red"]) == ("paper", ["red"], 0)
    story = run_cli("run", str(contract), "--board", "paper:0")
    assert "authors rules" in story.stdout and "the contract does not pay this move" in story.stdout


def test_sweep_runs_the_paper_boards_under_either_rule_set(tmp_path):
    out = tmp_path / "s"
    args = (
        "ctbench",
        "sweep",
        "--set",
        "paper",
        "--boards",
        "0,20",
        "--conditions",
        "prog_trading",
        "--modes",
        "pfp",
        "--out",
        str(out),
        "--workers",
        "1",
        "--json",
    )
    first = json.loads(run_cli(*args).stdout)
    assert (first["games"], first["played"]) == (2, 2) and {r["rules"] for r in first["rows"]} == {"authors"}
    again = json.loads(run_cli(*args, "--rules", "paper").stdout)
    assert again["played"] == 2  # the same games under other rules are other games
    records = list(stored_records(out / "games.jsonl", GameRecord, GameSpec.of, "game").values())
    assert sorted((r.board_set, r.board_id, r.rules) for r in records) == [
        ("paper", 0, "authors"),
        ("paper", 0, "paper"),
        ("paper", 20, "authors"),
        ("paper", 20, "paper"),
    ]
    assert {r.board_class for r in records} == {"independent", "mutually_dependent"}


def test_verify_follows_the_rule_set(tmp_path):
    contract = tmp_path / "c.contract"
    contract.write_text(SHORT_GIVER)
    checks = {}
    for rules in ("authors", "paper"):
        proc = run_cli("verify", str(contract), "--board", "0", "--rules", rules, "--json")
        assert proc.returncode == 0, proc.stderr
        checks[rules] = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["paper"]["coverage.giver_chips"]["status"] == "refuted"
    assert "forfeit" in checks["paper"]["coverage.giver_chips"]["message"]
    assert "blocked" in checks["authors"]["coverage.giver_chips"]["message"]


def test_board_sets_and_rule_sets_in_bad_options_give_one_line(tmp_path):
    from tests.helpers import assert_each_fails_in_one_line

    contract = tmp_path / "c.contract"
    contract.write_text(SHORT_GIVER)
    runs = tmp_path / "runs.jsonl"
    run_cli("ctbench", "import", str(ROOT / "tests/data/ctbench_logs"), "--out", str(runs))
    cases = [
        (("ctbench", "replay", str(runs), "--rules", "house"), "unknown rule set 'house'"),
        (("ctbench", "show", "paper:3", "--set", "ours"), "the board set is named twice, differently"),
        (("run", str(contract), "--board", "ours:0"), "the contract's game header names paper"),
        (("ctbench", "show", "mine:3"), "unknown board set 'mine'"),
        (("ctbench", "sweep", "--set", "theirs", "--out", str(tmp_path / "s")), "unknown board set 'theirs'"),
        (("verify", str(contract), "--board", "paper:80"), "board 80 is not in the paper benchmark set"),
    ]
    assert_each_fails_in_one_line(run_cli, cases)
