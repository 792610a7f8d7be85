"""parse ∘ format is the identity on IR, scenario tests included, and format is idempotent."""

from hypothesis import given, settings
from hypothesis import strategies as st

from contractlang import ast, check_source
from contractlang.checker import check
from contractlang.formatter import format_contracts, format_ir, format_source, format_tests
from contractlang.parser import parse
from tests.helpers import EXAMPLES as EXAMPLES_DIR
from tests.strategies import contract_irs, contracts_with_tests, contractsim_irs

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.contract"))


def reparse(text: str):
    result = check_source(text, "<roundtrip>")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    return [c.ir for c in result.contracts]


@settings(max_examples=300, deadline=None)
@given(contract_irs)
def test_parse_format_is_identity_on_ir(ir):
    text = format_ir(ir)
    assert reparse(text) == [ir]
    assert format_source(parse(text)) == text


@settings(max_examples=100, deadline=None)
@given(st.lists(contractsim_irs(), min_size=2, max_size=3))
def test_many_contracts_in_one_file(irs):
    named = [ir.model_copy(update={"name": f"c{k}"}) for k, ir in enumerate(irs)]
    assert reparse(format_ir(*named)) == named


def test_examples_are_canonical_and_stable():
    for path in EXAMPLES:
        text = path.read_text()
        once = format_source(parse(text))
        assert once == text, f"{path.name} is not in canonical form"
        assert format_source(parse(once)) == once


COMMENTED = """// leading comment
contract   "x"{game contractsim.catering // after game
prices{pizza:$10,pasta:$5 soup:$3}
  deliver {
      // before the entries
      weeks 2..10 : soup 1,pizza 1, pasta 1   // trailing
      // before the brace
  }
pay { weeks 1..9: $18 week 11: $0 }
assert (total pay) == ((total value))
}
// the end
"""


def test_messy_source_formats_canonically_with_comments():
    out = format_source(parse(COMMENTED))
    assert (
        out
        == """// leading comment
contract "x" {
  game contractsim.catering  // after game
  prices { pizza: $10  pasta: $5  soup: $3 }
  deliver {
    // before the entries
    weeks 2..10: pizza 1, pasta 1, soup 1  // trailing
    // before the brace
  }
  pay {
    week 1..9: $18
  }
  assert total pay == total value
}
// the end
""".replace("week 1..9: $18\n", "weeks 1..9: $18\n    week 11: $0\n")
    )
    assert format_source(parse(out)) == out
    assert reparse(out) == reparse(COMMENTED)


@settings(max_examples=200, deadline=None)
@given(contract_irs, st.lists(st.text(alphabet="abc xyz-", max_size=10), max_size=4), st.randoms())
def test_comments_survive_and_formatting_is_idempotent(ir, notes, rng):
    lines = format_ir(ir).splitlines()
    for note in notes:
        at = rng.randrange(len(lines) + 1)
        if at < len(lines) and rng.random() < 0.5:
            lines[at] = lines[at] + "   // " + note
        else:
            lines.insert(at, "// " + note)
    text = "\n".join(lines) + "\n"
    once = format_source(parse(text))
    assert format_source(parse(once)) == once
    assert reparse(once) == [ir]
    kept = " ".join(c.text for c in parse(once).comments)
    assert kept.count("//") == len(notes)
    for note in notes:
        assert note.strip() in kept


def _scenarios(result):
    return [s.ir for s in result.scenarios]


@settings(max_examples=150, deadline=None)
@given(contracts_with_tests())
def test_parse_format_is_identity_on_scenario_tests(contract):
    """Tests inside the contract, and the same tests in a `tests for` block: the same checked scenarios."""
    built = check(ast.SourceFile(path="<built>", contracts=(contract,)))
    assert built.ok, built.diagnostics
    text = format_contracts(contract)
    assert format_source(parse(text)) == text
    result = check_source(text, "<roundtrip>")
    assert result.ok, "\n".join(d.render(text) for d in result.diagnostics)
    assert _scenarios(result) == _scenarios(built) and len(result.scenarios) == len(contract.tests)
    apart = (
        format_contracts(contract.model_copy(update={"tests": ()})) + "\n" + format_tests(contract.name, contract.tests)
    )
    assert format_source(parse(apart)) == apart
    assert _scenarios(check_source(apart, "<roundtrip>")) == _scenarios(built)
