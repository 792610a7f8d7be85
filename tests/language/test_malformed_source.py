"""Any input gives diagnostics, never a traceback (issue #2, item 7)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractlang import check_source
from contractlang.diagnostics import ContractError
from contractlang.formatter import format_source
from contractlang.parser import parse
from tests.helpers import EXAMPLES as EXAMPLES_DIR
from tests.helpers import run_cli

EXAMPLES = sorted(EXAMPLES_DIR.glob("*.contract"))
EXAMPLE_TEXT = [p.read_text() for p in EXAMPLES]
TOKENS = [
    "contract",
    '"x"',
    "{",
    "}",
    "game",
    "contractsim.catering",
    "ctbench",
    "prices",
    "pizza",
    ":",
    "$10",
    "$1,000",
    "-",
    "deliver",
    "week",
    "weeks",
    "2",
    "..",
    "10",
    ",",
    "pay",
    "assert",
    "total",
    "pay",
    "==",
    "(",
    ")",
    "*",
    "+",
    "rollover",
    "max_deficit",
    "on",
    "breach",
    "terminate",
    "cover",
    "(1,2)",
    "red",
    "pays",
    "for",
    "blue",
    "with",
    "chip",
    "goal",
    "transfers",
    "points",
    "to",
    "99999999999999999999999",
    "//",
    "\n",
    "\x00",
    "é",
]


def assert_diagnosed(data):
    result = check_source(data, "fuzz")
    for d in result.diagnostics:
        assert d.span.line >= 1 and d.span.column >= 1
        assert d.code.startswith("E")
        d.render(data if isinstance(data, str) else data.decode("utf-8", "replace"))
    return result


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes(data):
    assert_diagnosed(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup(tokens):
    assert_diagnosed(" ".join(tokens))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLE_TEXT), st.data())
def test_truncated_and_mutated_examples(text, data):
    cut = data.draw(st.integers(0, len(text)))
    assert_diagnosed(text[:cut])
    at = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.sampled_from(TOKENS))
    mutated = text[:at] + " " + insert + " " + text[at:]
    result = assert_diagnosed(mutated)
    if result.ok:
        try:
            format_source(parse(mutated))
        except ContractError:
            raise AssertionError("a checked file must also format") from None


def test_huge_numbers_and_deep_nesting_are_diagnosed():
    base = (EXAMPLES[0].parent / "worked-example-1.contract").read_text()
    huge = base.replace("$10", "$" + "9" * 5000, 1)
    assert huge != base
    assert {d.code for d in assert_diagnosed(huge).diagnostics} >= {"E003"}
    deep = 'contract "d" { game contractsim.catering assert ' + "(" * 3000 + "1" + ")" * 3000 + " == 1 }"
    assert not assert_diagnosed(deep).ok
    chain = 'contract "d" { game contractsim.catering assert ' + "1 + " * 3000 + "1 == 1 }"
    assert {d.code for d in assert_diagnosed(chain).diagnostics} == {"E004"}


def test_cli_never_shows_a_traceback(tmp_path):
    cases = {
        "binary.contract": bytes(range(256)),
        "truncated.contract": EXAMPLE_TEXT[0][:200].encode(),
        "latin1.contract": 'contract "caf\xe9" { game ctbench }'.encode("latin-1"),
        "empty-name.contract": b'contract "" { game nowhere }',
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        syntax_ok = name == "empty-name.contract"  # fmt needs only syntax; check also needs a known game
        for cmd in (["check"], ["check", "--json"], ["fmt"], ["fmt", "--check"]):
            if syntax_ok and cmd[0] == "fmt":
                continue
            proc = run_cli(*cmd, tmp_path / name)
            assert proc.returncode == 1, (name, cmd, proc.stderr)
            assert "Traceback" not in proc.stderr + proc.stdout
