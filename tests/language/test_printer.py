"""One printer of the surface syntax (issue #29, item 4): contract source is built as a syntax tree
(`contractlang.build`) and printed by the formatter, nowhere else; what is built parses, checks and prints back
identically."""

from __future__ import annotations

import ast as pyast
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contractlang import ContractError, check_source
from contractlang.formatter import format_expr, format_source
from contractlang.interpreter import Rules
from contractlang.ir import ContractSimIR
from contractlang.parser import MAX_EXPRESSION_DEPTH, parse, parse_expression
from contractlang.render import render
from contractlang.translate.llm import WORKED_EXAMPLE_DSL
from contractlang.translate.rules import translate
from games.ctbench.judge import judge_json, read_terms, terms_source
from tests.helpers import ROOT
from tests.strategies import assert_terms, contract_irs, ctbench_irs

PACKAGES = ("contractlang", "games", "solver")
PRINTER = ROOT / "contractlang" / "formatter.py"

# the shapes only contract source has: a contract header, a clause block opening, a clause's fixed words, an
# entry of a cover or on-goal block; prose ("input prices {}", "red transfers 5 points to blue") has none of them
DSL = re.compile(
    r'^\s*contract "'
    r"|\b(?:parties|prices|deliver|pay|cover|on goal)\s*\{(?!\})"
    r"|\bon breach: terminate"
    r"|\{\s*(?:minimum|max_deficit):"
    r"|^\s*game (?:ctbench|contractsim)\b"
    r"|^\s*\(\S*\)\s*:\s*\S+ pays for "
    r"|^\s*(?:red|blue|\{\}): (?:red|blue|\{\}) transfers ",
    re.M,
)

# a hint may quote a one-line fragment in backticks (`add \`pay { weeks 1..11: $10 }\``): that is a message
QUOTED = re.compile(r"`[^`\n]*(?:`|$)")


def dsl_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal or f-string of a module that spells contract source; an f-string's
    fields read as `{}`, docstrings and backtick-quoted fragments are left out."""
    tree = pyast.parse(source)
    skip = set()
    for node in pyast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], pyast.Expr)
            and isinstance(body[0].value, pyast.Constant)
        ):
            skip.add(id(body[0].value))
        if isinstance(node, pyast.JoinedStr):
            skip.update(id(v) for v in node.values)
    found = []
    for node in pyast.walk(tree):
        if isinstance(node, pyast.JoinedStr):
            text = "".join(v.value if isinstance(v, pyast.Constant) else "{}" for v in node.values)
        elif isinstance(node, pyast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if DSL.search(QUOTED.sub("", text.replace("```", ""))):
            found.append((node.lineno, text))
    return found


def test_no_module_but_the_formatter_spells_contract_source():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != PRINTER
        for line, text in dsl_literals(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "build a syntax tree (contractlang.build) and print it with the formatter:\n" + "\n".join(
        offenders
    )


def test_the_scan_sees_the_formatter_and_planted_source_but_not_prose():
    assert len(dsl_literals(PRINTER.read_text(encoding="utf-8"))) >= 8
    planted = """
def emit(w, q, r, c, giver):
    lines = ["  deliver {", f"    week {w}: pizza {q}", "  }"]
    lines.append(f"    ({r},{c}): {giver} pays for blue")
    return f'contract "x" {{\\n  game contractsim.catering\\n' + "\\n".join(lines)
"""
    assert [line for line, _ in dsl_literals(planted)] == [3, 4, 5]
    prose = '''
"""A docstring may show `deliver { weeks 2..10: pizza 1 }` and even
contract "x" { game ctbench }."""
hint = "add `pay { weeks 1..11: $10 }` with the amount due"
line = f"week {w}: spoilage {s}, input prices {p}"
note = f"{giver} transfers {n} points to {receiver} when {giver} reaches the goal."
error = f"prices {tuple(p)} are impossible"
'''
    assert dsl_literals(prose) == []


def reprints(text: str) -> None:
    assert format_source(parse(text)) == text


@settings(max_examples=60, deadline=None)
@given(contract_irs, st.data())
def test_rules_translations_are_canonical_even_when_incomplete(ir, data):
    """The rules backend's source, complete or with any one line of the prose dropped, prints back as itself."""
    prose = render(ir)
    reprints(translate(prose, "x").dsl)
    lines = prose.splitlines()
    dropped = data.draw(st.integers(0, len(lines) - 1))
    result = translate("\n".join(lines[:dropped] + lines[dropped + 1 :]), "x")
    if result.error is None:
        reprints(result.dsl)
        assert check_source(result.dsl).ok or result.missing


@settings(max_examples=60, deadline=None)
@given(ctbench_irs(), st.sampled_from(["prog_trading", "prog_points"]))
def test_judge_summaries_print_canonically_and_read_back(ir, condition):
    """judge JSON → source → checked contract → judge JSON is the identity on what the condition holds."""
    terms = judge_json(ir, condition)
    text, notes = terms_source(terms, condition, AUTHORS)
    reprints(text)
    source, contract, problems = read_terms(terms, condition, "<judge>", AUTHORS)
    assert source == text and notes == problems == []
    assert judge_json(contract, condition) == terms


AUTHORS, PAPER = Rules.named("authors"), Rules.named("paper")
_NAMES = st.sampled_from(["P-Red", "p-blue", "Player0", "player1", "nobody", 3, None])
_ENTRIES = st.fixed_dictionaries(
    {},
    optional={
        "giver": _NAMES,
        "receiver": _NAMES,
        "color": st.sampled_from(["Red", "g", "unknown", "purple", None]),
        "amount": st.sampled_from(["10", " 7 ", "25", "-3", "ten", 4]),
    },
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["(0,1)", "( 2, 3)", "(9,9)", "(01,2)", "p-red_reaches_goal", "x"]), _ENTRIES, max_size=4
    ),
    st.sampled_from(["prog_trading", "prog_points"]),
    st.sampled_from([AUTHORS, PAPER]),
)
def test_any_judge_reply_prints_as_canonical_source(terms, condition, rules):
    """Whatever the judge answers, the source printed from it is canonical; what it could not use is a note."""
    text, notes = terms_source(terms, condition, rules)
    reprints(text)
    _, contract, problems = read_terms(terms, condition, "<judge>", rules)
    assert (contract is None) == (len(problems) > len(notes))


def test_judge_source_keeps_left_out_entries_as_notes():
    """Under `paper` a loosely keyed entry is printed with a note; under `authors` ([CT-24a]) it is left out."""
    terms = {
        "(01,2)": {"giver": "P-Red", "receiver": "P-Blue", "color": "Green"},
        "no tile": {"giver": "P-Red", "receiver": "P-Blue", "color": "Red"},
    }
    text, notes = terms_source(terms, "prog_trading", PAPER)
    reprints(text)
    assert "(1,2): red pays for blue with green chip" in text and "no tile" not in text
    assert len(notes) == 2 and "never pays this entry" in notes[0] and "left out" in notes[1]
    text, notes = terms_source(terms, "prog_trading", AUTHORS)
    assert "(1,2)" not in text and "(01,2)' left out" in notes[0]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["catering", "hotel", "ai-hosting"]).flatmap(assert_terms))
def test_a_relation_parses_back_to_its_canonical_text(term):
    assert format_expr(parse_expression(term.text)) == term.text


@pytest.mark.parametrize("text", ["total pay ==", "total pay == $9.50", "(budget", "price(pizza) = $3", ""])
def test_a_broken_relation_is_a_syntax_diagnostic(text):
    with pytest.raises(ContractError) as err:
        parse_expression(text)
    assert [d.code for d in err.value.diagnostics] == ["E001"]


def test_a_too_deep_relation_is_refused():
    with pytest.raises(ContractError) as err:
        parse_expression("-" * MAX_EXPRESSION_DEPTH + "budget == $1")
    assert [d.code for d in err.value.diagnostics] == ["E004"]


def test_a_stated_relation_the_rules_backend_cannot_read_is_reported_not_printed():
    prose = render(
        ContractSimIR(
            name="c",
            setting="catering",
            parties=("Customer", "Caterer"),
            prices=(10, 5, 3),
            deliveries=((1, 1, 1),) * 5,
            payments=(20,) * 5 + (0,),
        )
    )
    result = translate(prose + "\nStated: total pay = $90\nStated: total pay == $90\n", "x")
    assert result.unread == ("could not read the stated relation: total pay = $90",)
    assert result.missing == result.unread
    assert result.dsl.count("assert ") == 1 and "assert total pay == $90" in result.dsl
    reprints(result.dsl)


def test_the_translators_worked_example_is_canonical_and_checks():
    text = WORKED_EXAMPLE_DSL + "\n"
    reprints(text)
    assert check_source(text).ok
