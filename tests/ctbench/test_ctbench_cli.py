"""CT-Bench commands: boards, show, run, sweep (Ray is tested through `synth --ray local`: one runner serves both)."""

import json
import os

import pytest

from tests.helpers import run_cli


def test_boards_json():
    out = json.loads(run_cli("ctbench", "boards", "--json").stdout)
    assert out["classes"] == {"unused": 2736, "asymmetric": 396, "mutually_dependent": 204, "independent": 96}
    assert len(out["benchmark"]) == 80


def test_show_png(tmp_path):
    proc = run_cli("ctbench", "show", "24", "--png", str(tmp_path / "b.png"))
    assert proc.returncode == 0 and "shortfall 2" in proc.stdout
    assert (tmp_path / "b.png").read_bytes()[:4] == b"\x89PNG"
    assert run_cli("ctbench", "show", "80").returncode == 1


def test_run_contract_story_and_log(tmp_path):
    proc = run_cli(
        "run", "examples/ctbench-board-24-swap.contract", "--board", "24", "--log", str(tmp_path / "g.jsonl")
    )
    assert proc.returncode == 0, proc.stderr
    assert "scores: P-Red 70, P-Blue 70" in proc.stdout
    traced = json.loads(
        run_cli("trace", "examples/ctbench-board-24-swap.contract", str(tmp_path / "g.jsonl"), "--json").stdout
    )  # the log holds the monitor's events; trace re-derives the transfers
    assert [e["kind"] for e in traced["enforcement"]] == ["chip_transfer"] * 4


def test_run_rejects_malformed_contracts_before_play(tmp_path):
    wrong = tmp_path / "wrong.contract"
    wrong.write_text('contract "w" {\n  game ctbench\n  cover {\n    (0,3): red pays for blue with red chip\n  }\n}\n')
    proc = run_cli("run", str(wrong), "--board", "24")
    assert proc.returncode == 1 and "error[E611]" in proc.stderr and f"{wrong}:4:5" in proc.stderr
    proc = run_cli("run", "tests/invalid/tile-off-board.contract", "--board", "24")
    assert proc.returncode == 1 and "error[E601]" in proc.stderr
    assert run_cli("run", "examples/ctbench-points.contract", "--board", "3", "--mode", "chess").returncode == 1
    assert "needs --env" in run_cli("run", "examples/worked-example-1.contract").stderr
    assert "needs --board" in run_cli("run", "examples/ctbench-points.contract").stderr


@pytest.mark.slow
def test_sweep(tmp_path):
    """CI sweeps 6 boards; CONTRACTLANG_SLOW_SCALE=full sweeps all 80 (640 games, ~25 s on 2 cores)."""
    full = os.environ.get("CONTRACTLANG_SLOW_SCALE") == "full"
    boards = "all" if full else "0,1,20,21,40,41"
    proc = run_cli("ctbench", "sweep", "--boards", boards, "--out", str(tmp_path), "--json", "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    n_games = (80 if full else 6) * 4 * 2
    assert out["games"] == n_games
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(games) == n_games
    independent = [g for g in games if g["board_class"] == "independent"]
    assert all(len(g["finished"]) == 2 for g in independent)
    assert json.loads((tmp_path / "summary.json").read_text())
