"""The CT-Bench authors' published logs: import, replay through our engine, and the paper's tables.

The fixture `tests/data/ctbench_logs/` is 15 real games from timwyse/cooperative_ai `public_logs/reduced_config_runs`
(metadata and event logs only): every condition × mode, a game cut short by the provider, a game superseded by
a later run, two games whose judge contract names chip colours other than the tiles', one whose giver forfeits
under our rules, and one whose judge keys a tile as '(r, c)'.
"""

import json
import shutil
import subprocess

import pytest

from contractlang.interpreter import Rules
from games.ctbench.published import ImportedGame, game_directories, import_game
from games.ctbench.replay import replay
from tests.cli.test_figures import _pixels
from tests.helpers import ROOT, assert_each_fails_in_one_line, compare_golden, run_cli

LOGS = ROOT / "tests" / "data" / "ctbench_logs"
GOLDEN = ROOT / "tests" / "golden"


def imported(tmp_path, source=LOGS) -> tuple[subprocess.CompletedProcess, list[ImportedGame]]:
    out = tmp_path / "runs.jsonl"
    proc = run_cli("ctbench", "import", str(source), "--out", str(out), "--json")
    games = [ImportedGame.model_validate_json(line) for line in out.read_text().splitlines()] if out.exists() else []
    return proc, games


def raw(game: ImportedGame) -> tuple[dict, dict]:
    directory = LOGS / game.source
    return (
        json.loads((directory / "metadata.json").read_text()),
        json.loads(next(directory.glob("event_log_*.json")).read_text()),
    )


def test_import_reads_every_fixture_game_as_logged(tmp_path):
    proc, games = imported(tmp_path)
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0 and summary["problems"] == []
    assert (summary["imported"], summary["complete"], summary["incomplete"], summary["superseded"]) == (15, 14, 1, 1)
    conditions = {(g.condition, g.mode) for g in games}
    assert len(conditions) == 8
    for g in games:
        meta, log = raw(g)
        assert g.grid_id == meta["grid_id"] and list(g.board_rows) == ["".join(r) for r in meta["grid"]]
        final = log["game"].get("final_state")
        assert g.complete == (final is not None)
        if final is None:
            continue
        assert g.scores == (final["scores"]["Player 0"], final["scores"]["Player 1"])
        assert [list(p) for p in g.final_positions] == [final["players"][i]["position"] for i in ("0", "1")]
        assert len(g.turns) == len(log["game"]["turns"])
        # per turn: the logged move and both players' starting chips, read independently from the raw file
        for t in g.turns:
            for i, p in enumerate(("red", "blue")):
                entry = log["game"]["turns"][str(t.number)]["players"][str(i)]
                assert list(t.of(p).start) == entry["position"]["start"]
                assert t.of(p).chips_start.red == entry["chips"]["start"]["R"]
                assert (list(t.of(p).move) if t.of(p).move else None) == entry.get("move_made")


def test_import_converts_judge_contracts_to_checked_contractlang(tmp_path):
    from contractlang import check_source

    _, games = imported(tmp_path)
    for g in games:
        if g.condition == "prog_points" and g.contract_source:
            _, log = raw(g)
            terms = log["game"]["turns"]["0"]["contract"]["judge_contract"]
            for i, player in enumerate(("red", "blue")):
                amount = int(terms[f"player_{i}_reaches_goal"]["amount"])
                assert f"{player}: {player} transfers {amount} points to" in g.contract_source
        if g.contract_source:
            assert check_source(g.contract_source).ok
    keyed = [g for g in games if any("exactly" in n for n in g.contract_notes)]
    assert len(keyed) == 1
    _, log = raw(keyed[0])
    spaced = [k for k in log["game"]["turns"]["0"]["contract"]["judge_contract"] if ", " in k]
    assert spaced and all(f"({k[1]},{k[4]}):" in keyed[0].contract_source for k in spaced)
    nl = [g for g in games if g.condition == "nl_trading" and g.contract_formed]
    assert nl and all("agree" in g.transcript.lower() for g in nl)


def test_replay_verdicts_golden(tmp_path):
    out = tmp_path / "runs.jsonl"
    assert run_cli("ctbench", "import", str(LOGS), "--out", str(out)).returncode == 0
    proc = run_cli("ctbench", "replay", str(out), "--rules", "paper")
    assert proc.returncode == 0, proc.stderr
    compare_golden(GOLDEN / "ctbench-replay.txt", proc.stdout)
    data = json.loads(run_cli("ctbench", "replay", str(out), "--rules", "paper", "--json").stdout)
    assert (data["replayed"], data["agree"], data["skipped_incomplete"]) == (14, 10, 1)
    assert data["by_rule"] == {"contract forfeit": 3, "contract colour": 2, "contract key": 1}
    assert data["first_by_rule"] == {"contract colour": 3, "contract forfeit": 1}


def test_replay_contract_colour_is_the_first_turn_with_an_off_colour_entry():
    """Hand-checked on the raw log: at the first disagreeing turn a contract entry names a chip whose colour
    differs from the tile entered, and our Monitor transferred that colour while the authors' engine did not."""
    games = [import_game(d, LOGS) for d in game_directories(LOGS)]
    for g in games:
        if not g.complete:
            continue
        v = replay(g, Rules.named("paper"))
        if v.first is None or v.first.rule != "contract colour":
            continue
        from games.ctbench.board import benchmark_boards

        board = benchmark_boards("paper")[g.board_id].board
        turn = g.turns[v.first.turn]
        moved = [p for p in turn.players if p.move is not None]
        entries = {tuple(c["tile"]): c for c in g.contract_terms["coverage"]}
        assert any(p.move in entries and entries[p.move]["color"] not in (None, board.colour(p.move)) for p in moved)


def test_replay_notices_a_tampered_score(tmp_path):
    copy = tmp_path / "logs"
    agreeing = next(
        g
        for g in (import_game(d, LOGS) for d in game_directories(LOGS))
        if g.complete and g.condition == "none" and replay(g).agrees
    )
    shutil.copytree(LOGS / agreeing.source, copy / "game")
    event = next((copy / "game").glob("event_log_*.json"))
    data = json.loads(event.read_text())
    data["game"]["final_state"]["scores"]["Player 0"] += 5
    event.write_text(json.dumps(data))
    v = replay(import_game(copy / "game", copy))
    assert not v.agrees and v.final_positions_agree and v.final_chips_agree and not v.final_scores_agree
    assert v.first.rule == "other" and "logged [" in v.first.detail


@pytest.mark.e2e
def test_report_on_imported_logs_golden(tmp_path):
    out = tmp_path / "runs.jsonl"
    run_cli("ctbench", "import", str(LOGS), "--out", str(out))
    proc = run_cli("ctbench", "report", str(out), "--paper", "--png", str(tmp_path / "plots"))
    assert proc.returncode == 0, proc.stderr
    compare_golden(GOLDEN / "ctbench-report.txt", proc.stdout.replace(str(tmp_path), "TMP"))
    # issue #30 item 17: cells without games are marked, and the legend is a row under the panels
    assert "UserWarning" not in proc.stderr  # the layout fits: nothing drawn outside its panel
    png = tmp_path / "plots" / "figure-4-pfp.png"
    assert _pixels(png, "grey", slice(0, 1)) > 100  # the crosses of cells without games
    legend = slice(0.97, 1)  # every condition's colour is in the bottom band, none of the bars are
    assert all(_pixels(png, f"C{k}", legend) > 20 for k in range(4))
    assert _pixels(png, "C0", slice(0, 0.97)) > 1000
    data = json.loads(run_cli("ctbench", "report", str(out), "--json").stdout)
    # 14 complete games, one superseded by the later run of the same game
    assert data["games"] == 13 and data["skipped"] == 2
    every = json.loads(run_cli("ctbench", "report", str(out), "--json", "--all-runs").stdout)
    assert every["games"] == 14


def test_report_reads_our_own_sweep_records(tmp_path):
    sweep = run_cli(
        "ctbench",
        "sweep",
        "--boards",
        "24,45",
        "--conditions",
        "none,prog_points",
        "--modes",
        "pfp",
        "--out",
        str(tmp_path / "s"),
        "--workers",
        "1",
        "--json",
    )
    assert sweep.returncode == 0, sweep.stderr
    data = json.loads(run_cli("ctbench", "report", str(tmp_path / "s" / "games.jsonl"), "--json").stdout)
    assert data["games"] == 4 and [t["number"] for t in data["tables"]] == [1, 2]
    assert data["table_11"][0]["pairing"] == "planner (Red) × planner (Blue)"
    assert data["formation"]["formation"][0]["condition"] == "prog_points"


def test_import_goes_on_past_broken_games(tmp_path):
    root = tmp_path / "logs"
    dirs = list(game_directories(LOGS))[:3]
    for k, d in enumerate(dirs):
        shutil.copytree(d, root / f"g{k}")
    next((root / "g0").glob("event_log_*.json")).write_text("{not json")
    event = next((root / "g1").glob("event_log_*.json"))
    data = json.loads(event.read_text())
    data["game"]["turns"]["0"]["players"]["0"]["move_type"] = "teleport"
    event.write_text(json.dumps(data))
    proc, games = imported(tmp_path, root)
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0 and summary["imported"] == 1 and len(games) == 1
    assert len(summary["problems"]) == 2
    assert "g0/event_log_" in summary["problems"][0] and "not readable JSON" in summary["problems"][0]
    assert "unknown move_type 'teleport'" in summary["problems"][1]
    text = run_cli("ctbench", "import", str(root), "--out", str(tmp_path / "t.jsonl"))
    assert text.stderr.count("skipped ") == 2 and "Traceback" not in text.stderr


def test_hostile_inputs_give_one_line(tmp_path):
    bad_runs = tmp_path / "bad.jsonl"
    bad_runs.write_text('{"turns": []}\n')
    cases = [
        (("ctbench", "import", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")), "not a directory"),
        (("ctbench", "import", str(tmp_path), "--out", str(tmp_path / "o")), "no game directory"),
        (("ctbench", "replay", str(tmp_path / "missing.jsonl")), "cannot read"),
        (("ctbench", "replay", str(bad_runs)), f"{bad_runs}:1: not an imported game"),
        (("ctbench", "report", str(tmp_path)), "is a directory"),
    ]
    assert_each_fails_in_one_line(run_cli, cases)
    # an output that cannot be written is refused before the import's progress line, not after the import
    unwritable = run_cli("ctbench", "import", str(LOGS), "--out", str(tmp_path / "no-such-dir" / "runs.jsonl"))
    assert unwritable.returncode == 1 and unwritable.stderr.startswith("error: cannot write")
    assert unwritable.stderr.count("\n") == 1 and "importing" not in unwritable.stderr + unwritable.stdout


def test_negotiation_is_read_from_the_verbose_log_when_present():
    """One real game with its verbose log: the transcript alternates, P-Red first, and holds each player's own
    messages exactly as that player's history records them."""
    root = ROOT / "tests" / "data" / "ctbench_verbose"
    directory = root / "strict-grid-0"
    game = import_game(directory, root)
    verbose = json.loads(next(directory.glob("verbose_log_*.json")).read_text())
    talk = verbose["game"]["turns"]["0"]["contract_negotiation"]
    red_own = [m["content"] for m in talk["conversation_history_0"] if m["role"] == "assistant"]
    blue_own = [m["content"] for m in talk["conversation_history_1"] if m["role"] == "assistant"]
    assert [line.split(": ", 1)[0] for line in game.negotiation] == ["red", "blue"] * 3 + ["red"]
    assert [line[5:] for line in game.negotiation if line.startswith("red: ")] == red_own
    assert ["blue: " + line.split(": ", 2)[2] for line in blue_own] == [
        line for line in game.negotiation if line.startswith("blue: ")
    ]
    assert game.negotiation[-1] == "red: agree" and not game.contract_formed


def test_report_puts_the_papers_six_models_beside_any_agents_rows(tmp_path):
    """`--paper` on our own agent's games (a planner, none of the paper's models): the paper's six models and its
    mean row are printed under ours, marked (paper), and each of our rows says where its 95% interval and a
    published one are disjoint."""
    sweep = run_cli(
        "ctbench",
        "sweep",
        "--boards",
        "24,45",
        "--conditions",
        "none",
        "--modes",
        "pfp",
        "--out",
        str(tmp_path / "s"),
        "--workers",
        "1",
        "--json",
    )
    assert sweep.returncode == 0, sweep.stderr
    text = run_cli("ctbench", "report", str(tmp_path / "s" / "games.jsonl"), "--paper").stdout
    table1 = text.split("Table 1:")[1].split("\n\n")[0]
    for model in ("GPT-4.1", "Haiku-4.5", "LLaMA Maverick", "LLaMA Scout", "Qwen-3-235B", "Qwen-3-30B", "Mean"):
        assert f"\n{model} (paper)  " in table1
    assert "0.72 ± 0.02" in table1 and "  400\n" in table1  # GPT-4.1's first cell, over its 400 games
    assert "planner differs from the paper's rows (95% intervals disjoint) in " in table1
