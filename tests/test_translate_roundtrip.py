"""translate(render(ir), backend=rules) gives back exactly the same IR (issue #8 acceptance)."""

from hypothesis import example, given, settings

from contractlang import check_source
from contractlang.ir import Contingencies, ContractSimIR
from contractlang.render import render
from contractlang.translate.rules import translate
from strategies import contractsim_irs, ctbench_irs


def back(text: str, name: str):
    result = translate(text, name)
    checked = check_source(result.dsl, "<rules>")
    assert checked.ok, (result.dsl, [d.message for d in checked.diagnostics])
    assert result.missing == ()
    return checked.contracts[0].ir


@settings(max_examples=300, deadline=None)
@given(contractsim_irs())
@example(ContractSimIR(name="", setting="catering", parties=("", "P-BLUE"), prices=(0, 0, 0),
                       deliveries=((0, 0, 0),) * 5, payments=(0,) * 6,
                       contingencies=Contingencies(grim_trigger=False)))  # a party named like a CT-Bench player
def test_contractsim_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir


@settings(max_examples=100, deadline=None)
@given(ctbench_irs().filter(lambda ir: (ir.coverage or ir.points) and len(
    {(c.tile, c.giver, c.receiver) for c in ir.coverage}) == len(ir.coverage)))
def test_ctbench_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir


def test_an_agreement_without_terms_is_reported_not_round_tripped():
    """An empty agreement renders to prose with no term, which the rules backend never calls complete."""
    from contractlang.ir import CTBenchIR

    result = translate(render(CTBenchIR(kind="ctbench", name="x", parties=("a", "b"), coverage=(), points=())), "x")
    assert result.missing == ("no coverage or points term could be read",)


def test_a_repeated_coverage_is_one_entry_and_conflicting_chips_are_left_out():
    """A transcript repeats a term when agreeing to it: that is one entry, not two."""
    same = translate("P-Red pays for P-Blue's move onto (1,2) with a red chip.\n"
                     "P-Blue: Agreed, you pay for my move onto (1,2) with a red chip.", "x")
    assert same.dsl.count("(1,2)") == 1 and same.missing == ()
    clash = translate("P-Red pays for P-Blue's move onto (1,2) with a red chip.\n"
                      "P-Red pays for P-Blue's move onto (1,2) with a green chip.", "x")
    assert "(1,2)" not in clash.dsl and clash.missing == ("no coverage or points term could be read",)
    assert any("two different chips" in n for n in clash.notes)
