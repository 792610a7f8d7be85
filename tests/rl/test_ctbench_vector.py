"""The vectorised CT-Bench environment plays the monitor's game: game by game, on seeded contracts, boards, modes,
rule sets and opponents, the same observations, masks and rewards at every step as `ctbench_gym` (the game's
`State` and the interpreter's CTBenchMonitor), and the same scores, goal arrivals, forfeits, contract transfers,
blocked payments, points and end reasons ([CT-13]-[CT-27]); and, clause by clause, the monitor's enforcement of
cover entries."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

from contractlang.api.rl import CTBENCH_ACTIONS, ActionError, EnvInputError, ctbench_gym, ctbench_vector_env
from contractlang.api.rl.ctbench_vector import offer_counts
from contractlang.interpreter import ChipTransfer, ContractBlocked, Rules, compile
from contractlang.interpreter.events import ChipCounts, Holdings, MoveAttempt
from contractlang.ir import CheckedContract, CoverageTerm, CTBenchIR, PointsTerm
from games.ctbench.board import COLOUR_ORDER as COLOURS
from games.ctbench.board import INNER_TILES, PLAYERS, benchmark_board
from games.ctbench.log import CoverageHonoured
from games.ctbench.vector import (
    CHIPS,
    COVER_BLOCKED,
    COVER_FORFEIT,
    COVER_NONE,
    COVER_OFF_COLOUR,
    COVER_PAID,
    END_REASONS,
    FORFEITED,
    USED,
    VectorGames,
    _cover,
)

SWAP = "examples/ctbench-board-24-swap.contract"
POINTS = "examples/ctbench-points.contract"
FULL = os.environ.get("CONTRACTLANG_SLOW_SCALE") == "full"


def drawn_contract(rng: np.random.Generator) -> CheckedContract:
    """A contract of up to six cover entries (a chip colour named or the tile's) and up to two points terms."""
    entries = []
    for _ in range(int(rng.integers(0, 7))):
        receiver = PLAYERS[int(rng.integers(2))]
        giver = PLAYERS[1 - PLAYERS.index(receiver)]
        colour = (None, "red", "blue", "green")[int(rng.integers(4))]
        tile = INNER_TILES[int(rng.integers(len(INNER_TILES)))]
        entries.append(CoverageTerm(tile=tile, giver=giver, receiver=receiver, colour=colour))
    points = []
    for _ in range(int(rng.integers(0, 3))):
        giver = PLAYERS[int(rng.integers(2))]
        points.append(PointsTerm(giver=giver, receiver=PLAYERS[1 - PLAYERS.index(giver)], amount=int(rng.integers(21))))
    ir = CTBenchIR(name="drawn", parties=("P-Red", "P-Blue"), coverage=tuple(entries), points=tuple(points))
    return CheckedContract(ir=ir, file="<drawn>", spans={})


def settings(count: int, seed: int) -> list[dict]:
    """`count` seeded settings: the two shipped contracts on board 24 and drawn contracts on drawn boards, every
    mode, rule set, seat, visibility and compiled opponent."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        contract, board = ((SWAP, 24), (POINTS, 24))[k] if k < 2 else (drawn_contract(rng), int(rng.integers(80)))
        out.append(
            {
                "contract": contract,
                "board": board,
                "mode": ("pfp", "trade")[k % 2],
                "rules": ("authors", "paper")[(k // 2) % 2],
                "role": PLAYERS[(k // 4) % 2],
                "opponent": ("planner", "conditional", "exploiter")[k % 3],
                "visible": k % 5 != 4,
            }
        )
    return out


def learner(rng: np.random.Generator, observation: np.ndarray, mask: np.ndarray) -> int:
    """A seeded learner: now and then an index the mask refuses (the fallback), often no proposal, otherwise a
    legal action drawn uniformly (offers included)."""
    if rng.random() < 0.04:
        return int(rng.integers(len(CTBENCH_ACTIONS)))
    if observation[1] and rng.random() < 0.5:  # phase=propose
        return 0
    return int(rng.choice(np.flatnonzero(mask)))


def monitor_game(setting: dict, seed: int) -> dict:
    """One game through `ctbench_gym` (the monitor's game), the learner drawn from `seed`: each step's observation,
    mask, action, reward and fallback, then the outcomes as the vector reports them."""
    env = ctbench_gym(**setting)
    o, _ = env.reset(seed=seed)
    rng, rows, done = np.random.default_rng(seed), [], False
    while not done:
        action = learner(rng, o["observation"], o["action_mask"])
        before = o
        o, reward, done, _, info = env.step(action)
        rows.append((before["observation"], before["action_mask"], action, reward, "fallback" in info))
    s = env.state_
    return {
        "rows": rows,
        "final": o["observation"],
        "utilities": [s.final_score(p) for p in PLAYERS],
        "finished": [p in s.finished for p in PLAYERS],
        "forfeited": [p in s.forfeited for p in PLAYERS],
        "transfers": sum(isinstance(e, ChipTransfer) for e in s.log),
        "blocked": sum(isinstance(e, ContractBlocked) for e in s.log),
        "honoured": sum(isinstance(e, CoverageHonoured) for e in s.log),
        "points": sum(t.amount for t in s.points),
        "end": END_REASONS.index(s.end_reason),
    }


def assert_same_games(setting: dict, seeds: list[int]) -> Counter:
    """Plays `seeds` on the monitor's game and in one vector (a row per seed, each row's learner drawn from its
    seed, up to the row's first end), compares them step by step, and counts the enforcements that arose."""
    expected = [monitor_game(setting, s) for s in seeds]
    env = ctbench_vector_env(num_envs=len(seeds), **setting)
    observations, _ = env.reset(seed=seeds)
    rngs = [np.random.default_rng(s) for s in seeds]
    step, running, seen = [0] * len(seeds), set(range(len(seeds))), Counter()
    while running:
        actions = np.zeros(len(seeds), np.int64)
        for g in running:
            o, m, action, _, _ = expected[g]["rows"][step[g]]
            where = f"game {g} ({seeds[g]}) step {step[g]}"
            np.testing.assert_array_equal(observations["observation"][g], o, err_msg=where)
            np.testing.assert_array_equal(observations["action_mask"][g], m, err_msg=where)
            actions[g] = learner(rngs[g], observations["observation"][g], observations["action_mask"][g])
        observations, rewards, terminated, truncated, infos = env.step(actions)
        assert not truncated.any()
        for g in sorted(running):
            game = expected[g]
            where = f"game {g} ({seeds[g]}) step {step[g]}"
            assert (rewards[g], bool(infos["fallback"][g])) == game["rows"][step[g]][3:], where
            step[g] += 1
            assert terminated[g] == (step[g] == len(game["rows"])), where
            if terminated[g]:
                np.testing.assert_array_equal(infos["final_obs"]["observation"][g], game["final"], err_msg=where)
                got = {k: infos[k][g].tolist() for k in OUTCOMES}
                assert got == {k: game[k] for k in OUTCOMES}, where
                seen.update(
                    transfer=game["transfers"] > 0,
                    blocked=game["blocked"] > 0,
                    honoured=game["honoured"] > 0,
                    forfeit=any(game["forfeited"]),
                    points=game["points"] > 0,
                    goal=any(game["finished"]),
                    fallback=any(row[4] for row in game["rows"]),
                    **{END_REASONS[game["end"]]: 1},
                )
                running.discard(g)
    return seen


OUTCOMES = ("utilities", "finished", "forfeited", "transfers", "blocked", "honoured", "points", "end")
ENFORCEMENTS = ("transfer", "blocked", "honoured", "forfeit", "points", "goal", "fallback", *END_REASONS[1:4])


def play(settings_count: int, games: int, seed: int) -> Counter:
    seen = Counter()
    for k, setting in enumerate(settings(settings_count, seed)):
        seen += assert_same_games(setting, [seed * 1000 + k * games + i for i in range(games)])
    return seen


def test_the_vectorised_games_are_the_monitors_game_by_game():
    """48 games over 24 settings (the fast tier); every enforcement the monitor knows arises among them."""
    seen = play(24, 2, seed=1)
    assert all(seen[k] for k in ENFORCEMENTS), seen


@pytest.mark.slow
def test_many_seeded_games_agree():
    """2,000 games over 100 settings with CONTRACTLANG_SLOW_SCALE=full, 80 over 10 otherwise."""
    settings_count, games = (100, 20) if FULL else (10, 8)
    seen = play(settings_count, games, seed=2)
    assert sum(seen[k] for k in END_REASONS[1:]) == settings_count * games


def test_an_opponent_the_engine_cannot_compile_plays_game_by_game():
    """The seeded random player is played in Python behind the same arrays: each row the game `ctbench_gym` plays
    for the row's seed."""
    setting = {**settings(1, 3)[0], "opponent": "random"}
    env = ctbench_vector_env(num_envs=1, **setting)
    assert not env.compiled
    env.close()
    seen = assert_same_games(setting, [5, 6, 7])
    assert sum(seen[k] for k in END_REASONS[1:]) == 3


def test_ended_games_restart_in_the_same_step_and_masked_actions_fall_back():
    vector = ctbench_vector_env(SWAP, board=24, num_envs=3)
    assert vector.compiled and vector.feature_names == ctbench_gym(SWAP, board=24).feature_names
    observation, _ = vector.reset(seed=0)
    refused = np.full(3, CTBENCH_ACTIONS.index("honour"))  # nobody is asked to honour in the proposal phase
    steps, terminated = 0, np.zeros(3, bool)
    while not terminated.any() and steps < 1000:
        observation, rewards, terminated, _, infos = vector.step(refused)
        assert infos["fallback"].all()
        steps += 1
    assert terminated.all() and steps > 1  # doing nothing, the three games end alike ([CT-13])
    assert END_REASONS[infos["end"][0]] == "the same state began 3 rounds"
    assert (infos["final_obs"]["observation"][:, 0] > 1).all() and (observation["observation"][:, 0] == 1).all()
    assert not infos["final_obs"]["action_mask"].any() and observation["action_mask"].any(axis=1).all()
    assert rewards.tolist() == infos["utilities"][:, 0].tolist() == [0, 0, 0]  # nobody reached the goal


def test_wrong_actions_seeds_and_sizes_are_named():
    vector = ctbench_vector_env(SWAP, board=24, num_envs=3)
    with pytest.raises(Exception, match=r"call reset\(\) before step\(\)"):
        vector.step(np.zeros(3, dtype=np.int64))
    vector.reset(seed=0)
    with pytest.raises(ActionError, match=r"one integer index per game, shape \(3,\)"):
        vector.step(np.zeros(3))
    with pytest.raises(ActionError, match=rf"outside Discrete\({len(CTBENCH_ACTIONS)}\)"):
        vector.step(np.array([0, 0, len(CTBENCH_ACTIONS)]))
    with pytest.raises(EnvInputError, match=r"seed: 2 seeds for 3 games"):
        vector.reset(seed=[1, 2])
    with pytest.raises(EnvInputError, match=r"num_envs: 0"):
        ctbench_vector_env(SWAP, board=24, num_envs=0)
    with pytest.raises(EnvInputError, match=r"role: 'green'"):
        ctbench_vector_env(SWAP, board=24, num_envs=1, role="green")


def test_the_engine_enforces_cover_entries_as_the_monitor_does():
    """Seeded clause cases under both rule sets, as the monitor's own tests pose them: a drawn contract and a run
    of move attempts, each with the chips held at that moment; the engine's `_cover` answers each attempt as
    CTBenchMonitor does (paid, off-colour transfer, blocked, forfeit or nothing), uses the same entries, and
    leaves the chips as the game's `_contract_payment` does ([CT-08], [CT-22]-[CT-24a])."""
    board = benchmark_board(24).board
    seen = Counter()
    rng = np.random.default_rng(4)
    for case in range(300):
        rules = Rules.named(("authors", "paper")[case % 2])
        ir = drawn_contract(rng).ir
        games = VectorGames(ir, board, "pfp", rules, True, 1, "red", "planner", offer_counts(), np.ones(264), 38)
        games.st[0, CHIPS : CHIPS + 6] = rng.integers(0, 3, size=6)
        monitor = compile(ir, rules)
        tiles = [e.tile for e in ir.coverage] or [INNER_TILES[0]]
        for _ in range(4):
            player = PLAYERS[int(rng.integers(2))]
            tile = tiles[int(rng.integers(len(tiles)))]
            colour = board.colour(tile)
            chips = games.st[0, CHIPS : CHIPS + 6].tolist()
            holdings = Holdings(
                red=ChipCounts(**dict(zip(COLOURS, chips[:3]))), blue=ChipCounts(**dict(zip(COLOURS, chips[3:])))
            )
            monitor = monitor.apply(MoveAttempt(player=player, tile=tile, tile_colour=colour, holdings=holdings))
            code = _cover(
                games.st,
                0,
                PLAYERS.index(player),
                tile[0] * 4 + tile[1],
                COLOURS.index(colour),
                games.rules,
                games.cover,
            )
            expected = COVER_NONE
            for action in monitor.last_actions:
                if isinstance(action, ChipTransfer):
                    chips[3 * PLAYERS.index(action.giver) + COLOURS.index(action.colour)] -= 1
                    if not action.pays_move:
                        chips[3 * PLAYERS.index(action.receiver) + COLOURS.index(action.colour)] += 1
                    expected = COVER_PAID if action.pays_move else COVER_OFF_COLOUR
                else:
                    expected = COVER_BLOCKED if isinstance(action, ContractBlocked) else COVER_FORFEIT
            assert code == expected, (case, monitor.last_actions)
            assert games.st[0, CHIPS : CHIPS + 6].tolist() == chips, case
            assert [bool(games.st[0, USED] >> k & 1) for k in range(len(ir.coverage))] == list(monitor.used), case
            assert [p for p in PLAYERS if games.st[0, FORFEITED] >> PLAYERS.index(p) & 1] == sorted(
                monitor.forfeited, key=PLAYERS.index
            ), case
            seen[code] += 1
    assert all(seen[c] for c in (COVER_NONE, COVER_PAID, COVER_OFF_COLOUR, COVER_BLOCKED, COVER_FORFEIT)), seen
