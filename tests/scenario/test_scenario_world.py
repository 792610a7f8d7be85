"""Scenario tests that give the rest of the world (an environment, orders, input prices, receipts, spoilage) and
expect the players' realised utilities, played on the game's own engine through `cl.test`."""

from __future__ import annotations

import json
import re

import pytest

import contractlang as cl
from contractlang.scenario.suite import run_tests as run_without_games
from tests.helpers import EXAMPLES, run_cli

CONTRACT = """\
contract "plain" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $3 }
  deliver { weeks 2..10: pizza 1, pasta 1, soup 1 }
  pay { weeks 1..9: $18  week 11: $8 }
}
"""


def _suite(tmp_path, given: str, expect: str):
    path = tmp_path / "plain.contract"
    test = f'tests for "plain" {{\n  test "t" {{\n    given {{\n{given}\n    }}\n    expect {{\n{expect}\n    }}\n  }}\n}}\n'
    path.write_text(CONTRACT + test)
    return path


def test_utilities_in_environment_1_are_the_hand_computed_ones(tmp_path):
    # Environment 1: budget $200, capital $20, values pizza $12, pasta $6, soup $3, inputs at $1, $1, $2, whole
    # receipts, no spoilage. Every week as agreed: the Supplier buys the 2, 2, 2 inputs a pizza, a pasta and a
    # soup use ($2 + $2 + $4 = $8) in each of the five production weeks.
    #   Customer: $200 + 5 x ($12 + $6 + $3) - (5 x $18 + $8) = $200 + $105 - $98 = $207
    #   Supplier: $98 - 5 x $8 = $58
    path = _suite(tmp_path, "      env 1", "      utility customer $207\n      utility supplier $58")
    report = cl.test(path)
    assert report.ok, [f.text() for r in report.results for f in r.failures]
    assert report.results[0].utilities == {"customer": 207, "supplier": 58}


def test_orders_prices_receipts_and_spoilage_change_the_supplier_utility(tmp_path):
    # Environment 5 (prices $1/$3, $1/$2, $2/$3; receipts uniform on half the order up to it; spoilage 0..2).
    # Week 2 orders 4, 4, 2 at $3, $2, $3 ($12 + $8 + $6 = $26) and receives 2, 3, 2: after the week's pizza,
    # pasta and soup (2, 2, 2) it keeps 0, 1, 0. Week 4 spoils that basil and buys 2, 2, 2 for $8, as weeks 6, 8
    # and 10 do. Spend $26 + 4 x $8 = $58; the Customer's side is as in environment 1 but with environment 5's
    # values, the same $12, $6, $3.
    #   Supplier: $98 - $58 = $40.   Customer: $200 + $105 - $98 = $207
    given = (
        "      env 5\n      week 2: prices mozzarella $3, basil $2, tomato $3\n"
        "      week 2: order mozzarella 4, basil 4, tomato 2\n      week 2: receive mozzarella 2, basil 3\n"
        "      week 4: spoil basil 2"
    )
    path = _suite(tmp_path, given, "      utility supplier $40\n      utility customer $207")
    report = cl.test(path)
    assert report.ok, [f.text() for r in report.results for f in r.failures]


def test_a_wrong_utility_fails_at_its_line_with_the_arithmetic(tmp_path):
    path = _suite(tmp_path, "      env 1", "      no breach\n      utility supplier $60")
    done = run_cli("test", path)
    assert done.returncode == 1
    assert f"{path}:14:7: expected utility supplier $60, got utility supplier $58" in done.stdout
    assert "utility supplier $58 = payments $98 - input spend $40" in done.stdout
    assert "week 2: prices mozzarella $1, basil $1, tomato $2; ordered mozzarella 2, basil 2, tomato 2 for $8" in (
        done.stdout
    )
    payload = json.loads(run_cli("test", path, "--json").stdout)
    [failure] = payload["tests"][0]["failures"]
    assert failure["kind"] == "utility" and (failure["line"], failure["column"]) == (14, 7)
    assert payload["tests"][0]["utilities"] == {"customer": 207, "supplier": 58}


@pytest.mark.parametrize(
    "given, line, message",
    [
        ("      env 5\n      week 4: prices basil $3", 11, "week 4: basil at $3 is not a price of environment 5"),
        ("      env 1\n      week 6: spoil tomato 1", 11, "week 6: environment 1 spoils at most 0 of an input a week"),
        (
            "      env 3\n      week 2: order mozzarella 4, basil 2, tomato 2\n      week 2: receive mozzarella 2",
            12,
            "week 2: environment 3 delivers at least 3 of an order of 4 mozzarella, not 2",
        ),
        ("      env 1\n      week 2: order mozzarella 12, basil 12, tomato 12", 11, "orders inputs costing $48"),
        (
            "      env 1\n      week 2: order mozzarella 1, basil 1, tomato 1",
            11,
            "week 2: the Supplier produces (1, 1, 1), which needs 2 of input 1",
        ),
    ],
    ids=["price", "spoilage", "receipt", "cash", "production"],
)
def test_a_world_the_environment_cannot_produce_fails_at_its_given_line(tmp_path, given, line, message):
    path = _suite(tmp_path, given, "      utility customer $207")
    [result] = cl.test(path).results
    [failure] = result.failures
    assert (failure.span.line, failure.span.column) == (line, 7)
    assert failure.text().startswith(f"{path}:{line}:7: the game cannot play this: ")
    assert message in failure.text()


def test_without_the_games_engine_a_utility_fails_saying_so(tmp_path):
    path = _suite(tmp_path, "      env 1", "      no breach\n      utility customer $207")
    report = run_without_games([path])
    [result] = report.results
    [failure] = result.failures
    assert not report.ok and failure.span.line == 14
    assert "a utility needs the game's engine" in failure.text()


def test_changing_a_price_of_an_example_fails_its_utility_test(tmp_path):
    """A pizza short in week 4 is deducted at the contract's pizza price, so a dearer pizza pays the Caterer less."""
    mutant = tmp_path / "catering-env5-a.contract"
    text = (EXAMPLES / "catering-env5-a.contract").read_text()
    mutant.write_text(text.replace("prices { pizza: $10", "prices { pizza: $12", 1))
    report = cl.test(mutant)
    failures = [f.text() for r in report.results for f in r.failures]
    line = text[: text.index("utility customer $238")].count("\n") + 1
    assert f"{mutant}:{line}:7: expected utility customer $238, got utility customer $240" in "\n".join(failures)
    world = tmp_path / "world.contract"
    world.write_text(text.replace("week 4: prices mozzarella $3", "week 4: prices mozzarella $1", 1))
    failures = [f.text() for r in cl.test(world).results for f in r.failures]
    assert len(failures) == 1  # mozzarella at $1: week 4's order costs $24, not $36, and the Customer is unmoved
    assert failures[0].startswith(f"{world}:{line + 1}:7: expected utility supplier $35, got utility supplier $47")


def _as_test(record) -> str:
    """A played game's log as a scenario test stating its environment, every event and its utilities."""
    from contractlang.interpreter.events import Delivery, Payment
    from games.contractsim.log import OrderPlaced, WeekShocks

    inputs = ("mozzarella", "basil", "tomato")
    lines = [f"env {record.env}"]
    delivered: dict[int, list[str]] = {}
    for e in record.log:
        if isinstance(e, Payment):
            lines.append(f"week {e.week}: pay ${e.amount}")
        elif isinstance(e, WeekShocks):
            lines.append(f"week {e.week}: prices " + ", ".join(f"{x} ${p}" for x, p in zip(inputs, e.prices)))
            lines.append(f"week {e.week}: spoil " + ", ".join(f"{x} {s}" for x, s in zip(inputs, e.spoiled)))
        elif isinstance(e, OrderPlaced):
            lines.append(f"week {e.week}: order " + ", ".join(f"{x} {q}" for x, q in zip(inputs, e.order)))
            lines.append(f"week {e.week}: receive " + ", ".join(f"{x} {q}" for x, q in zip(inputs, e.received)))
        elif isinstance(e, Delivery):
            delivered.setdefault(e.week, []).append(f"{e.product} {e.qty}")
            if len(delivered[e.week]) == 3:
                lines.append(f"week {e.week}: deliver " + ", ".join(delivered[e.week]))
    expect = f"utility customer ${record.u_customer}\n    utility supplier ${record.u_supplier}"
    expect = re.sub(r"\$-", "-$", expect)
    body = "\n    ".join(lines)
    return f'tests for "catering-env5-a" {{\n  test "replayed" {{\n    given {{\n    {body}\n    }}\n' + (
        f"    expect {{\n    {expect}\n    }}\n  }}\n}}\n"
    )


@pytest.mark.parametrize("seed", [3, 11])
def test_a_played_game_replayed_as_a_test_gives_the_games_own_utilities(tmp_path, seed):
    """The scenario engine and `play` agree: random agents in environment 5, their game written as a test."""
    from contractlang import check_source
    from games.contractsim.environments import environment
    from games.contractsim.play import play

    source = (EXAMPLES / "catering-env5-a.contract").read_bytes()
    [checked] = check_source(source, "catering-env5-a.contract").contracts
    record = play(checked.ir, environment(5), "random", "random", seed=seed)
    (tmp_path / "catering-env5-a.contract").write_bytes(source)
    replayed = tmp_path / "replayed.contract"
    replayed.write_text(_as_test(record))
    report = cl.test(replayed)
    assert report.ok, [f.text() for r in report.results for f in r.failures] + [d.message for d in report.diagnostics]
    assert report.results[0].utilities == {"customer": record.u_customer, "supplier": record.u_supplier}


SWAP = (EXAMPLES / "ctbench-board-24-swap.contract").read_text()
WALK = """\
tests for "board-24-swap" {
  test "walk" {
    given {
      board 24
%s
    }
    expect {
%s
    }
  }
}
"""


def _walk(tmp_path, given: str, expect: str):
    (tmp_path / "ctbench-board-24-swap.contract").write_text(SWAP)
    path = tmp_path / "walk.contract"
    path.write_text(WALK % (given, expect))
    return path


def test_a_score_on_a_board_is_the_hand_computed_one(tmp_path):
    # Board 24 (rows: g r r b / r b b r / b r r b / b r b g). Red starts on (0,0) with 14 red and 2 green chips
    # and walks (0,1) r, (0,2) r, (0,3) b, (1,3) r, (2,3) b to the goal (3,3), which takes a green chip; blue's
    # cover entries pay red's two blue tiles with blue chips, so red spends 3 red and 1 green of its own.
    #   red: 20 + 5 x (11 red + 1 green) = 80;  blue, still on the start: 0
    walk = "\n".join(
        f"      red moves onto {c} tile {t}"
        for c, t in (("red", "(0,1)"), ("red", "(0,2)"), ("blue", "(0,3)"), ("red", "(1,3)"), ("blue", "(2,3)"))
    )
    path = _walk(tmp_path, walk + "\n      red moves onto green tile (3,3)", "      score red 80\n      score blue 0")
    report = cl.test(path)
    assert report.ok, [f.text() for r in report.results for f in r.failures]
    assert report.results[0].utilities == {"red": 80, "blue": 0}
    wrong = _walk(tmp_path, walk, "      score red 80")  # red stops short of the goal: 0
    [failure] = cl.test(wrong).results[0].failures
    assert failure.text().startswith(f"{wrong}:12:7: expected score red 80, got score red 0")
    assert "score red 0 = 0 (not on the goal)" in failure.text()


@pytest.mark.parametrize(
    "given, line, message",
    [
        ("      red moves onto blue tile (0,1)", 5, "tile (0, 1) is red on board 24, not blue"),
        ("      red moves onto blue tile (1,1)", 5, "red moves onto (1, 1), which is not next to the mover"),
        ("      blue gives red red 1 for red 1", 5, "the chips held cannot cover this trade"),
        ("      red reaches goal", 5, "red is on (0, 0), not on the goal (3, 3)"),
    ],
    ids=["colour", "adjacency", "trade", "goal"],
)
def test_a_move_the_board_cannot_take_fails_at_its_line(tmp_path, given, line, message):
    path = _walk(tmp_path, given, "      score red 0")
    [failure] = cl.test(path).results[0].failures
    assert failure.text().startswith(f"{path}:{line}:7: the game cannot play this: {message}")


def test_without_the_games_engine_a_board_fails_saying_so(tmp_path):
    path = _walk(tmp_path, "      red moves onto red tile (0,1)", "      nothing enforced")
    [result] = run_without_games([path]).results
    [failure] = result.failures
    assert failure.span.line == 4 and "a board needs the game's engine" in failure.text()


def test_a_test_the_game_cannot_play_reads_as_such_in_json_and_junit(tmp_path):
    from lxml import etree

    path = _suite(tmp_path, "      env 5\n      week 4: prices basil $3", "      utility customer $207")
    junit = tmp_path / "junit.xml"
    done = run_cli("test", path, "--json", "--junit", junit)
    assert done.returncode == 1
    [failure] = json.loads(done.stdout)["tests"][0]["failures"]
    assert failure["expected"] is None and failure["got"] is None and failure["kind"] is None
    assert failure["problem"].startswith("the game cannot play this: week 4: basil at $3")
    schema = etree.XMLSchema(etree.parse(str(EXAMPLES.parent / "tests" / "scenario" / "junit.xsd")))
    document = etree.parse(str(junit))
    schema.assertValid(document)
    [element] = document.findall(".//failure")
    assert element.get("type") == "game" and element.get("message") == failure["problem"]


def test_the_checker_refuses_what_neither_game_can_produce_with_a_caret():
    from contractlang import check_source

    test = """\
  test "bad" {
    given {
      env 9
      week 3: order mozzarella 1
      week 4: order mozzarella -1
      week 12: spoil basil 1
      board 24
      red gives blue red 1 for blue 1
    }
    expect { score red 5 }
  }
}
"""
    source = CONTRACT.removesuffix("}\n") + test
    found = [(d.code, d.span.line, d.span.column) for d in check_source(source, "w.contract").diagnostics]
    assert found == [
        ("E808", 8, 11),  # no environment 9
        ("E808", 9, 12),  # an order in payment week 3
        ("E301", 10, 32),  # a negative order
        ("E201", 11, 12),  # week 12 is outside the game
        ("E803", 12, 7),  # a board belongs to CT-Bench
        ("E803", 13, 7),  # so does a trade
        ("E803", 15, 14),  # and a score
    ]


def _as_board_test(record, contract: str, mode: str) -> str:
    """A played CT-Bench game's log as a test on its board: its accepted offers (trades or Pay-for-Partner
    arrangements), move attempts and refused promises in order; a refusal is written before the move it refuses."""
    from games.ctbench.log import Arrangement, CoverageUnfulfilled, Proposal, Response, RoundMoveAttempt

    def chips(counts) -> str:
        return ", ".join(f"{c} {n}" for c, n in counts.model_dump().items() if n)

    lines, offered = [f"board {record.board_id}", f"mode {mode}"], None
    for e in record.log:
        if isinstance(e, Proposal):
            offered = e
        elif isinstance(e, Response) and e.executed:
            offer, partner = offered.offer, "blue" if offered.player == "red" else "red"
            if isinstance(offer, Arrangement):
                asks = f" and asks {chips(offer.you_cover)}" if chips(offer.you_cover) else ""
                lines.append(f"{offered.player} pays for {partner} {chips(offer.i_cover) or 'red 0'}{asks}")
            else:
                lines.append(f"{offered.player} gives {partner} {chips(offer.give)} for {chips(offer.receive)}")
        elif isinstance(e, RoundMoveAttempt):
            lines.append(f"{e.player} moves onto {e.tile_colour} tile ({e.tile[0]},{e.tile[1]})")
        elif isinstance(e, CoverageUnfulfilled) and e.why == "refused":
            lines.insert(len(lines) - 1, f"{e.payer} defects")
    red, blue = record.scores
    body = "\n      ".join(lines)
    return (
        f'tests for "{contract}" {{\n  test "replayed" {{\n    given {{\n      {body}\n    }}\n'
        f"    expect {{\n      score red {red}\n      score blue {blue}\n    }}\n  }}\n}}\n"
    )


PFP = """\
contract "pfp" {
  game ctbench
  parties { red: P-Red  blue: P-Blue }
}
"""
# board 24: a cooperative game (both finish, the contract paying 4 moves), a random red's executed trade with a
# planning blue (both finish); board 3: blue forfeits ([CT-24]). Pay-for-Partner on board 24, under a contract
# with no terms: two planners honour every promise; an exploiting blue refuses red's covered moves once its own
# path is secured; a random red's arrangements, some promises lacking the payer's chip ([CT-17], [CT-18]).
PLAYED = [
    (24, "trade", "planner", "planner", 1, 0),
    (24, "trade", "random", "planner", 4, 1),
    (3, "trade", "planner", "planner", 1, 0),
    (24, "pfp", "planner", "planner", 1, 1),
    (24, "pfp", "planner", "exploiter", 1, 1),
    (24, "pfp", "random", "exploiter", 1, 2),
]


@pytest.mark.parametrize(
    "board, mode, red, blue, seed, offers",
    PLAYED,
    ids=["cooperative", "trade", "forfeit", "pfp-honoured", "pfp-defected", "pfp-random"],
)
def test_a_played_board_game_replayed_as_a_test_gives_the_games_own_scores(
    tmp_path, board, mode, red, blue, seed, offers
):
    """The scenario engine and CT-Bench's `play` agree on the final scores of a game under the contract."""
    from contractlang import check_source
    from games.ctbench.board import benchmark_board
    from games.ctbench.play import play

    source, name = (SWAP, "board-24-swap") if mode == "trade" else (PFP, "pfp")
    [checked] = check_source(source, "played.contract").contracts
    record = play(
        benchmark_board(board), "file", mode, red, blue, seed=seed, contract=checked.ir, keep_log=True, rules="paper"
    )
    (tmp_path / f"{name}.contract").write_text(source)
    replayed = tmp_path / "replayed.contract"
    replayed.write_text(_as_board_test(record, name, mode))
    text = replayed.read_text()
    assert text.count(" gives " if mode == "trade" else " pays for ") == offers
    assert (" defects" in text) == (blue == "exploiter")
    report = cl.test(replayed)
    assert report.ok, [f.text() for r in report.results for f in r.failures] + [d.message for d in report.diagnostics]
    assert report.results[0].utilities == dict(zip(("red", "blue"), record.scores))


# Board 24 (rows: g r r b / r b b r / b r r b / b r b g). Red starts with 14 red and 2 green chips, blue with
# 14 blue and 2 green. Red offers to pay for blue's two red tiles and asks blue to pay for its two blue ones;
# blue accepts. Red walks (0,1) r, (0,2) r, (0,3) b, (1,3) r, (2,3) b to the goal (3,3) g; blue walks (1,0) r,
# (2,0) b, (3,0) b, (3,1) r, (3,2) b to the goal.
BOTH_WALK = (
    ("red", "red", "(0,1)"),
    ("blue", "red", "(1,0)"),
    ("red", "red", "(0,2)"),
    ("blue", "blue", "(2,0)"),
    ("red", "blue", "(0,3)"),
    ("blue", "blue", "(3,0)"),
    ("red", "red", "(1,3)"),
    ("blue", "red", "(3,1)"),
    ("red", "blue", "(2,3)"),
    ("blue", "blue", "(3,2)"),
    ("red", "green", "(3,3)"),
    ("blue", "green", "(3,3)"),
)


def _pfp(tmp_path, given: str, expect: str):
    (tmp_path / "pfp.contract").write_text(PFP)
    path = tmp_path / "walk.contract"
    path.write_text(
        'tests for "pfp" {\n  test "walk" {\n    given {\n      board 24\n      mode pfp\n'
        f"{given}\n    }}\n    expect {{\n{expect}\n    }}\n  }}\n}}\n"
    )
    return path


def _moves(walk) -> str:
    return "\n".join(f"      {p} moves onto {c} tile {t}" for p, c, t in walk)


def test_a_pay_for_partner_score_is_the_hand_computed_one(tmp_path):
    # Each pays 3 of its own tiles, 2 of the partner's and the goal's green ([CT-18]):
    #   red: 20 + 5 x (14 - 3 - 2 red + 2 - 1 green) = 20 + 5 x 10 = 70;  blue likewise 70.
    # Were no promise kept, red could not pay (0,3) (it holds no blue chip) and would score 0.
    arrangement = "      red pays for blue red 2 and asks blue 2\n"
    path = _pfp(tmp_path, arrangement + _moves(BOTH_WALK), "      score red 70\n      score blue 70")
    report = cl.test(path)
    assert report.ok, [f.text() for r in report.results for f in r.failures]
    assert report.results[0].utilities == {"red": 70, "blue": 70}


def test_a_defection_leaves_the_mover_to_pay_and_the_promise_owed(tmp_path):
    # Blue refuses red's move onto (0,3): red holds no blue chip, so the move fails and red stays on (0,2)
    # ([CT-18]); red stops there, scoring 0. Blue walks home paying no tile of red's:
    #   blue: 20 + 5 x (14 - 3 blue + 2 - 1 green) = 20 + 5 x 12 = 80.
    walk = BOTH_WALK[:4] + (("red", "blue", "(0,3)"),) + tuple(m for m in BOTH_WALK[5:] if m[0] == "blue")
    given = "      red pays for blue red 2 and asks blue 2\n" + _moves(walk[:4]) + "\n      blue defects\n"
    path = _pfp(tmp_path, given + _moves(walk[4:]), "      score red 0\n      score blue 80")
    report = cl.test(path)
    assert report.ok, [f.text() for r in report.results for f in r.failures]
    assert report.results[0].utilities == {"red": 0, "blue": 80}


def test_a_defection_no_promise_asks_for_fails_at_its_line(tmp_path):
    path = _pfp(tmp_path, "      red pays for blue red 2\n      red defects", "      score red 0")
    [failure] = cl.test(path).results[0].failures
    assert failure.text().startswith(
        f"{path}:7:7: the game cannot play this: red is never asked to pay for a covered move after this line"
    )


@pytest.mark.parametrize(
    "given, where, message",
    [
        ("board 24\n      mode pfp\n      red gives blue red 1 for blue 1", (6, 7), "a trade in a Pay-for-Partner"),
        ("board 24\n      red pays for blue red 1", (5, 7), "a Pay-for-Partner line in a trading game"),
        ("board 24\n      blue defects", (5, 7), "a Pay-for-Partner line in a trading game"),
        ("mode pfp", (4, 7), "a Pay-for-Partner test needs the board"),
        ("board 24\n      mode barter", (5, 12), "there is no mode `barter`"),
        ("board 24\n      mode pfp\n      red pays for blue red 0", (6, 7), "an arrangement that covers no tile"),
        ("board 24\n      mode pfp\n      red pays for red blue 1", (6, 20), "red pays for itself"),
    ],
    ids=["trade-in-pfp", "arrangement-in-trade", "defect-in-trade", "no-board", "unknown-mode", "empty", "self"],
)
def test_the_checker_refuses_pay_for_partner_lines_out_of_place_with_a_caret(given, where, message):
    from contractlang import check_source

    source = (
        PFP
        + f'tests for "pfp" {{\n  test "t" {{\n    given {{\n      {given}\n    }}\n    expect {{ nothing enforced }}\n  }}\n}}\n'
    )
    [d] = check_source(source, "p.contract").diagnostics
    assert (d.code, d.span.line - 4, d.span.column) == ("E808", *where) and message in d.message
    assert "^" in d.render(source)


@pytest.mark.parametrize(
    "line, after, wanted",
    [
        ("week 4: order mozzarella 6", "week 4: order ", ["mozzarella", "basil", "tomato"]),
        ("week 4: receive mozzarella 4, basil 5", "week 4: receive mozzarella 4, ", ["mozzarella", "basil", "tomato"]),
        ("week 4: deliver pizza 1", "week 4: deliver ", ["pizza", "pasta", "soup"]),
    ],
)
def test_the_editor_completes_inputs_in_world_lines_and_products_in_deliveries(line, after, wanted):
    from contractlang.lsp.completion import complete
    from contractlang.lsp.text import Position

    text = (EXAMPLES / "catering-env5-a.contract").read_text()
    at = text.index(line) + len(after)
    where = Position(line=text.count("\n", 0, at), character=at - (text.rfind("\n", 0, at) + 1))
    offered = [c for c in complete(text, where) if c.kind != "keyword"]
    assert [c.label for c in offered] == wanted


def test_nothing_happens_after_the_game_ends(tmp_path):
    path = _walk(tmp_path, "      game ends\n      red moves onto red tile (0,1)", "      score red 0")
    [problem] = cl.test(path).diagnostics
    assert (problem.code, problem.span.line, problem.span.column) == ("E808", 6, 7)
    assert problem.message == "the game has ended (line 5): nothing happens after it"
