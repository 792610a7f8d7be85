"""Invariants over random agents, boards, modes and contract conditions (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from games.agents import Seat, make_agent
from games.ctbench.agents import RandomAgent
from games.ctbench.board import benchmark_board
from games.ctbench.game import MAX_ROUNDS, total
from games.ctbench.play import CONDITIONS, play


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 79),
    st.sampled_from(CONDITIONS),
    st.sampled_from(["pfp", "trade"]),
    st.sampled_from(["random", "planner", "exploiter", "conditional"]),
    st.integers(0, 10**6),
)
def test_random_games_keep_the_invariants(board_id, condition, mode, partner, seed):
    record = play(benchmark_board(board_id), condition, mode, "random", partner, seed=seed, keep_log=True)
    assert record.rounds <= MAX_ROUNDS  # the game always terminates
    for raw in record.raw_scores:
        assert raw == 0 or 20 <= raw <= 20 + 5 * 26  # X3: a lone finisher may hold the other's chips
    if len(record.finished) == 2:
        assert sum(record.raw_scores) <= 140
    assert record.stats.chips_spent <= 32
    if record.condition == "prog_points":
        assert sum(record.scores) == sum(record.raw_scores) or record.forfeited  # points are zero-sum (X4)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 79), st.sampled_from(["pfp", "trade"]), st.integers(0, 10**6))
def test_chip_conservation_step_by_step(board_id, mode, seed):
    from games.ctbench.game import CTBenchGame

    rng = np.random.default_rng(seed)
    agents = {"red": RandomAgent(rng), "blue": make_agent("planner", Seat(game="ctbench", role="blue", rng=rng))}
    state = CTBenchGame(board=benchmark_board(board_id).board, mode=mode).new_initial_state()
    while not state.is_terminal():
        before = total(state.red_chips) + total(state.blue_chips) + state.stats.chips_spent
        player = state.current_player()
        state = state.apply_action(agents[player].act(state.observe(player)))
        assert total(state.red_chips) + total(state.blue_chips) + state.stats.chips_spent == before == 32
        for p in ("red", "blue"):
            assert 0 <= state.raw_score(p) <= 20 + 5 * 32
