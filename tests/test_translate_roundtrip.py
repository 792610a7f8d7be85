"""translate(render(ir), backend=rules) gives back exactly the same IR (issue #8 acceptance)."""

from hypothesis import given, settings

from contractlang import check_source
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
def test_contractsim_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir


@settings(max_examples=100, deadline=None)
@given(ctbench_irs())
def test_ctbench_render_translate_roundtrip(ir):
    assert back(render(ir), "unused") == ir
