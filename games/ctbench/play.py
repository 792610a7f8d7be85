"""Play one CT-Bench game with agents: negotiation (scripted) → play → a typed game record."""

from __future__ import annotations

import numpy as np

from contractlang.ir import CTBenchIR
from contractlang.vocab import Frozen
from games.ctbench.agents import (
    make_agent,
    negotiate_nl_trading,
    negotiate_prog_points,
    negotiate_prog_trading,
    offline_judge,
)
from games.ctbench.board import PLAYERS, BenchmarkBoard
from games.ctbench.engine import Condition, CTBenchGame, Mode, Stats

CONDITIONS: tuple[Condition, ...] = ("none", "prog_trading", "prog_points", "nl_trading")


class GameRecord(Frozen):
    """Everything the metrics need from one game; the full log rides along for replay."""

    board_id: int
    board_class: str
    condition: str
    mode: str
    red_agent: str
    blue_agent: str
    seed: int
    contract_active: bool
    finished: tuple[str, ...]
    forfeited: tuple[str, ...]
    raw_scores: tuple[int, int]
    scores: tuple[int, int]
    baselines: tuple[int, int]
    rounds: int
    end_reason: str
    stats: Stats
    log: tuple[dict, ...] = ()


def play_game(bench: BenchmarkBoard, condition: Condition, mode: Mode, red: str, blue: str, seed: int = 0,
              contract: CTBenchIR | None = None, visible: bool = True, keep_log: bool = False) -> GameRecord:
    """Run one game; `contract` (from a .contract file) overrides the scripted negotiation."""
    rng = np.random.default_rng(seed)
    board = bench.board
    transcript = ""
    if contract is not None:
        condition = "file"
    elif condition == "prog_trading":
        contract = negotiate_prog_trading(board)
    elif condition == "prog_points":
        contract = negotiate_prog_points(board)
    elif condition == "nl_trading":
        transcript = negotiate_nl_trading(board) or ""
    active = contract is not None or bool(transcript)
    game = CTBenchGame(board=board, mode=mode, condition=condition if active else "none", contract=contract,
                       transcript=transcript, visible=visible)
    agents = {"red": make_agent(red, rng), "blue": make_agent(blue, rng)}
    state = game.new_initial_state(judge=offline_judge if game.condition == "nl_trading" else None)
    while not state.is_terminal():
        player = state.current_player()
        state = state.apply_action(agents[player].act(state, player))
    return GameRecord(
        board_id=bench.id, board_class=bench.board_class, condition=condition, mode=mode, red_agent=red,
        blue_agent=blue, seed=seed, contract_active=active, finished=state.finished, forfeited=state.forfeited,
        raw_scores=tuple(state.raw_score(p) for p in PLAYERS), scores=tuple(state.final_score(p) for p in PLAYERS),
        baselines=tuple(board.baseline(p) for p in PLAYERS), rounds=state.round, end_reason=state.end_reason,
        stats=state.stats, log=state.log if keep_log else (),
    )
