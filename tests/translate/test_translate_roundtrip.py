"""translate(render(ir), backend=rules) gives back exactly the same IR (issue #8 acceptance)."""

import re

import pytest
from hypothesis import example, given, settings

from contractlang import check_source
from contractlang.formatter import money
from contractlang.ir import Contingencies, ContractSimIR, CTBenchIR, PointsTerm
from contractlang.render import render
from contractlang.render.prose import relabel
from contractlang.translate.rules import translate
from contractlang.vocab import SETTINGS
from tests.strategies import contractsim_irs, ctbench_irs


def back(text: str, name: str):
    result = translate(text, name)
    checked = check_source(result.dsl, "<rules>")
    assert checked.ok, (result.dsl, [d.message for d in checked.diagnostics])
    assert result.missing == ()
    return checked.contracts[0].ir


@settings(max_examples=300, deadline=None)
@given(contractsim_irs())
@example(
    ContractSimIR(
        name="",
        setting="catering",
        parties=("", "P-BLUE"),
        prices=(0, 0, 0),
        deliveries=((0, 0, 0),) * 5,
        payments=(0,) * 6,
        contingencies=Contingencies(grim_trigger=False),
    )
)  # a party named like a CT-Bench player
def test_contractsim_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir


@settings(max_examples=100, deadline=None)
@given(
    ctbench_irs().filter(
        lambda ir: (
            (ir.coverage or ir.points) and len({(c.tile, c.giver, c.receiver) for c in ir.coverage}) == len(ir.coverage)
        )
    )
)
def test_ctbench_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir


def test_an_agreement_without_terms_is_reported_not_round_tripped():
    """An empty agreement renders to prose with no term, which the rules backend never calls complete."""
    from contractlang.ir import CTBenchIR

    result = translate(render(CTBenchIR(kind="ctbench", name="x", parties=("a", "b"), coverage=(), points=())), "x")
    assert result.missing == ("no coverage or points term could be read",)


def test_a_repeated_coverage_is_one_entry_and_conflicting_chips_are_left_out():
    """A transcript repeats a term when agreeing to it: that is one entry, not two."""
    same = translate(
        "P-Red pays for P-Blue's move onto (1,2) with a red chip.\n"
        "P-Blue: Agreed, you pay for my move onto (1,2) with a red chip.",
        "x",
    )
    assert same.dsl.count("(1,2)") == 1 and same.missing == ()
    clash = translate(
        "P-Red pays for P-Blue's move onto (1,2) with a red chip.\n"
        "P-Red pays for P-Blue's move onto (1,2) with a green chip.",
        "x",
    )
    assert "(1,2)" not in clash.dsl and clash.missing == ("no coverage or points term could be read",)
    assert any("two different chips" in n for n in clash.notes)


# every reference and operator a relation can hold, nested so that parentheses matter, and a count of one
STATED = """contract "words" {
  game contractsim.catering
  prices { pizza: $9  pasta: $5  soup: $3 }
  deliver { weeks 2..10: pizza 2, pasta 1, soup 0 }
  pay { weeks 1..9: $23  week 11: $0 }
  assert price(pizza) * (total deliver pasta - 2) + -(capital - budget) != total pay - (total value - $5)
  assert total deliver soup * 3 >= -1
  assert total pay == total value
  rollover { max_deficit: 1 }
}
"""


@pytest.mark.parametrize("setting", ["catering", "hotel", "ai-hosting"])
def test_stated_words_and_plurals_round_trip_in_every_setting(setting):
    """`render --setting` keeps the asserts (money scaled) in words, with singular and plural counts, and the
    rules backend reads all of it back to the same contract."""
    [checked] = check_source(STATED, "<words>").contracts
    ir = relabel(checked.ir, setting)
    prose = render(ir)
    stated = [line for line in prose.splitlines() if line.startswith("Stated: ")]
    assert len(stated) == 3 and not any(re.search(r"==|!=|<=|>=|[<>*]|total_|price\(", s) for s in stated)
    assert "1 missed item of each kind" in prose
    assert back(prose, "unused") == ir
    assert f"the total value minus {money(5 * SETTINGS[setting].multiplier)})" in stated[0]


def test_one_point_is_singular_and_round_trips():
    ir = CTBenchIR(
        kind="ctbench",
        name="p",
        parties=("a", "b"),
        coverage=(),
        points=(PointsTerm(giver="blue", receiver="red", amount=1),),
    )
    assert "transfers 1 point to P-Red." in render(ir)
    assert back(render(ir), "unused") == ir
