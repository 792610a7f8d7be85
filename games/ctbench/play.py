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
from games.ctbench.board import PLAYERS, BenchmarkBoard, BoardSet
from games.ctbench.engine import Condition, CTBenchGame, Mode, Stats
from games.external import checked_action, closing_agents

CONDITIONS: tuple[Condition, ...] = ("none", "prog_trading", "prog_points", "nl_trading")


class GameRecord(Frozen):
    """Everything the metrics need from one game; the full log rides along for replay."""

    board_id: int
    board_set: BoardSet = "ours"  # which 80-board set board_id indexes: ours or the authors' ("paper")
    board_class: str
    condition: str
    mode: str
    red_agent: str
    blue_agent: str
    seed: int
    repeat: int = 0
    visible: bool = True
    contract_active: bool
    contract_terms: dict | None = None  # the programmable contract's terms (Prog-Trading / Prog-Points)
    transcript: str = ""  # the NL-Trading agreement the judge reads
    coverage: dict[str, dict[str, int]] = {}  # per paying player: partner coverage honoured / unfulfilled,
    # contract entries paid and contract entries forfeited
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
              contract: CTBenchIR | None = None, visible: bool = True, keep_log: bool = False,
              repeat: int = 0) -> GameRecord:
    """Run one game; `contract` (from a .contract file) overrides the scripted negotiation. Repeat r > 0 of
    a seed draws its agents' randomness from the stream (seed, r)."""
    rng = np.random.default_rng(seed if repeat == 0 else [seed, repeat])
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
    with closing_agents(agents.values()):
        while not state.is_terminal():
            player = state.current_player()
            state = state.apply_action(checked_action(agents[player], state, player))
    coverage = {p: {"honoured": 0, "unfulfilled": 0, "contract_paid": 0, "contract_forfeit": 0} for p in PLAYERS}
    for entry in state.log:
        if entry["type"] in ("coverage_honoured", "coverage_unfulfilled"):
            coverage[entry["payer"]][entry["type"].removeprefix("coverage_")] += 1
        elif entry["type"] == "contract_transfer":
            coverage[entry["giver"]]["contract_paid"] += 1
        elif entry["type"] == "forfeit":
            coverage[entry["player"]]["contract_forfeit"] += 1
    return GameRecord(
        board_id=bench.id, board_class=bench.board_class, condition=condition, mode=mode, red_agent=red,
        blue_agent=blue, seed=seed, repeat=repeat, visible=visible, contract_active=active,
        contract_terms=contract.terms_json() if contract is not None else None, transcript=transcript,
        coverage=coverage, finished=state.finished, forfeited=state.forfeited,
        raw_scores=tuple(state.raw_score(p) for p in PLAYERS), scores=tuple(state.final_score(p) for p in PLAYERS),
        baselines=tuple(board.baseline(p) for p in PLAYERS), rounds=state.round, end_reason=state.end_reason,
        stats=state.stats, log=state.log if keep_log else (),
    )
