"""Board facts that follow from the rules (CT-Bench paper, App. D; checks X1, X6 of docs/rules/checks.md)."""

from collections import Counter

import numpy as np
import pytest

from games.ctbench.board import (
    BENCHMARK_SEED,
    MAX_JOINT_REWARD,
    all_boards,
    benchmark_boards,
    board_from_rows,
    sample_benchmark,
    simple_paths,
)


@pytest.fixture(scope="module")
def boards():
    return all_boards()


def test_paths():
    paths = simple_paths()
    assert len(paths) == 184
    assert Counter(len(p) - 1 for p in paths) == {6: 20, 8: 36, 10: 48, 12: 48, 14: 32}


def test_board_count_and_max_reward(boards):
    assert len(boards) == 3432
    assert MAX_JOINT_REWARD == 140


def test_shortfall_pairs_and_classes(boards):
    pairs = Counter((b.best_path("red")[1], b.best_path("blue")[1]) for b in boards)
    assert pairs == {
        (0, 0): 96,
        (0, 1): 314,
        (0, 2): 82,
        (1, 0): 314,
        (1, 1): 1396,
        (1, 2): 470,
        (2, 0): 82,
        (2, 1): 470,
        (2, 2): 204,
        (2, 3): 2,
        (3, 2): 2,
    }
    classes = Counter(b.classification for b in boards)
    assert (classes["independent"], classes["mutually_dependent"], classes["asymmetric"]) == (96, 204, 396)


def test_best_path_lengths(boards):
    for b in boards:
        for p in ("red", "blue"):
            path, short = b.best_path(p)
            if short == 0 or b.classification != "unused":
                assert len(path) - 1 == 6


def test_goal_adjacent_colours(boards):
    def kind(b):
        a, c = b.colour((3, 2)), b.colour((2, 3))
        return f"both {a}" if a == c else "mixed"

    by_class = {
        cls: Counter(kind(b) for b in boards if b.classification == cls)
        for cls in ("independent", "mutually_dependent", "asymmetric")
    }
    assert by_class["independent"] == {"mixed": 96}
    assert by_class["mutually_dependent"] == {"both blue": 88, "both red": 88, "mixed": 28}
    assert by_class["asymmetric"] == {"both red": 94, "mixed": 302}


def test_shipped_benchmark_matches_its_seed():
    shipped = benchmark_boards()
    regenerated = sample_benchmark(np.random.default_rng(BENCHMARK_SEED))
    assert [(b.id, b.board.key, b.board_class) for b in shipped] == [
        (b.id, b.board.key, b.board_class) for b in regenerated
    ]
    assert [b.board_class for b in shipped] == ["independent"] * 20 + ["mutually_dependent"] * 20 + ["asymmetric"] * 40
    assert all(b.board.classification == b.board_class for b in shipped)
    for b in shipped:
        expected = (70, 70) if b.board_class == "independent" else (70, 0) if b.board_class == "asymmetric" else (0, 0)
        assert (b.board.baseline("red"), b.board.baseline("blue")) == expected


def test_the_papers_board_set_is_classified_as_its_authors_stratified_it():
    """The authors' 80 grids (issue #17): our classifier agrees with their stratum on every board."""
    paper = benchmark_boards("paper")
    assert [b.id for b in paper] == list(range(80)) and len({b.board.key for b in paper}) == 80
    assert [b.board_class for b in paper] == ["independent"] * 20 + ["mutually_dependent"] * 20 + ["asymmetric"] * 40
    for b in paper:
        red, blue = (b.board.best_path(p)[1] for p in ("red", "blue"))
        expected = {
            "Independent (Both have optimal paths)": (0, 0),
            "MD (2,2)": (2, 2),
            "NP-Blue (Need=1)": (0, 1),
            "NP-Blue (Need=2)": (0, 2),
        }[b.source_bucket]
        assert (red, blue) == expected, b
    assert (paper[0].source_id, paper[20].source_id, paper[79].source_id) == (0, 80, 143)
    assert paper[0].board.rows() == ["GRBR", "BRRR", "BBBR", "RBBG"]


@pytest.mark.parametrize(
    "rows,message",
    [
        (["GRBR", "BRRR", "BBBR"], "4 rows"),
        (["RRBR", "BRRR", "BBBR", "RBBG"], "green"),
        (["GRRR", "BRRR", "BBBR", "RBBG"], "8 red"),
        (["GRXR", "BRRR", "BBBR", "RBBG"], "letters"),
    ],
)
def test_board_rows_are_checked(rows, message):
    with pytest.raises(ValueError, match=message):
        board_from_rows(rows)


def test_boards_cli_lists_the_paper_set(tmp_path):
    import json

    from tests.helpers import run_cli

    proc = run_cli("ctbench", "boards", "--set", "paper", "--json")
    payload = json.loads(proc.stdout)
    assert proc.returncode == 0 and payload["set"] == "paper" and len(payload["benchmark"]) == 80
    first = payload["benchmark"][40]
    assert (first["paper_id"], first["paper_bucket"], first["class"], first["shortfall"]) == (
        104,
        "NP-Blue (Need=1)",
        "asymmetric",
        [0, 1],
    )
    assert first["baselines"] == [70, 0] and first["best_paths"]["red"][0] == [0, 0]
