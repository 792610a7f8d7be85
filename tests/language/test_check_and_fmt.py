"""`check` and `fmt` on contracts a careless user writes: a suggestion for each mistake, every file reported,
every error of a file at once, numbers never rewritten, files with no contract and names with control or bidi
characters refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hardening.hostile import SWAP, WORKED, cli
from tests.helpers import run_cli

CATERING = """contract "c" {
  game contractsim.catering
  prices { pizza: $10  pasta: $5  soup: $3 }
%s
}
"""

# (what, contract source, the line:col the error points at, text the hint must hold)
MISTAKES = [
    (
        "misspelt clause keyword",
        CATERING % "  delivr {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  }",
        "4:3",
        "did you mean `deliver`?",
    ),
    (
        "misspelt product",
        CATERING % "  deliver {\n    weeks 2..10: piza 1, pasta 1, soup 1\n  }",
        "5:18",
        "did you mean `pizza`?",
    ),
    ("misspelt game", 'contract "c" {\n  game contractsim.hotle\n}\n', "2:3", "did you mean `contractsim.hotel`?"),
    (
        "misspelt player",
        'contract "c" {\n  game ctbench\n  cover {\n    (1,2): redd pays for blue\n  }\n}\n',
        "4:12",
        "did you mean `red`?",
    ),
    (
        "block not closed before the next clause",
        CATERING % "  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  pay {\n    weeks 1..9: $18\n  }",
        "6:3",
        "is the '}' closing `deliver {` (line 4) missing?",
    ),
]


@pytest.mark.parametrize("what, source, where, hint", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_contract_mistakes_get_a_suggestion(tmp_path, what, source, where, hint):
    path = tmp_path / "c.contract"
    path.write_text(source, encoding="utf-8")
    result = run_cli("check", str(path))
    assert result.returncode == 1
    out = result.stdout + result.stderr
    assert f"\n{path}:{where}: error[" in "\n" + out, out
    assert hint in out


def test_missing_brace_at_the_end_points_at_the_open_block(tmp_path):
    path = tmp_path / "c.contract"
    path.write_text(
        (CATERING % "  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n").rstrip("}\n"), encoding="utf-8"
    )
    result = run_cli("check", str(path))
    out = result.stdout + result.stderr
    assert result.returncode == 1
    assert f"{path}:4:11: error[E001]: unexpected end of file: `deliver {{` is never closed" in out


def test_check_reports_e502_with_the_other_errors(tmp_path):
    path = tmp_path / "two.contract"
    path.write_text(
        'contract "x" {\n  game contractsim.catering\n  prices { pizza: $10  pasta: $5  soup: $3 }\n'
        "  deliver {\n    weeks 2..8: pizza 1, pasta 1, soup 1\n  }\n"
        "  pay {\n    weeks 1..9: $18\n    week 11: $0\n  }\n"
        "  substitution { minimum: pizza 2, pasta 1, soup 1 }\n}\n"
    )
    done = run_cli("check", path)
    assert done.returncode == 1 and "error[E402]" in done.stderr and "error[E502]" in done.stderr


def test_fmt_refuses_a_name_check_refuses(tmp_path):
    path = tmp_path / "bidi.contract"
    source = 'contract "pay\u202eyap" {\n  game ctbench\n  parties { red: P-Red  blue: P-Blue }\n}\n'
    path.write_text(source)
    for command in (("check",), ("fmt",), ("fmt", "--write"), ("fmt", "--check")):
        done = run_cli(*command, path)
        assert done.returncode == 1 and "error[E107]" in done.stderr, (command, done.stderr)
    assert path.read_text() == source


def test_fmt_refuses_two_contracts_of_one_name_as_check_does(tmp_path):
    path = tmp_path / "twice.contract"
    source = (Path(__file__).parents[1] / "invalid" / "duplicate-contract-name.contract").read_text()
    path.write_text(source)
    for command in (("check",), ("fmt",), ("fmt", "--write"), ("fmt", "--check")):
        done = run_cli(*command, path)
        assert done.returncode == 1 and "error[E106]" in done.stderr and done.stdout == "", (command, done.stderr)
    assert path.read_text() == source


BIG = (
    'contract "big" {\n  game contractsim.catering\n  prices { pizza: $10000000000000000  pasta: $5  soup: $3 }\n'
    "  deliver {\n    weeks 2..10: pizza 1, pasta 1, soup 1\n  }\n  pay {\n    weeks 1..9: $18\n    week 11: $0\n  }\n}\n"
)


def test_fmt_never_rewrites_a_number(tmp_path):
    path = tmp_path / "big.contract"
    path.write_text(BIG)
    proc = cli("fmt", "--write", path)
    assert proc.returncode == 1 and "E003" in proc.stderr and path.read_text() == BIG


def test_check_and_fmt_report_every_file(tmp_path):
    empty, big = tmp_path / "empty.contract", tmp_path / "big.contract"
    empty.write_text("")
    big.write_text(BIG)
    proc = cli("check", empty, tmp_path / "missing.contract", big, WORKED)
    assert proc.returncode == 1
    assert "error[E005]: the file holds no contract" in proc.stderr and "missing.contract: cannot read" in proc.stderr
    assert "E003" in proc.stderr and "worked-example-1.contract: ok" in proc.stdout
    rows = [
        json.loads(line)
        for line in cli("check", "--json", empty, tmp_path / "missing.contract", WORKED).stdout.splitlines()
    ]
    assert [r["ok"] for r in rows] == [False, False, True]
    unformatted = tmp_path / "messy.contract"
    unformatted.write_text(WORKED.read_text().replace("  game", "      game"))
    proc = cli("fmt", "--check", tmp_path / "missing.contract", unformatted, big, WORKED)
    assert proc.returncode == 1
    assert "missing.contract: cannot read" in proc.stderr and "messy.contract: not in canonical form" in proc.stderr
    assert "E003" in proc.stderr


def test_control_and_bidi_characters_in_names_are_refused_and_never_printed_raw(tmp_path):
    contract = tmp_path / "bidi.contract"
    contract.write_text(SWAP.read_text().replace('contract "board-24-swap"', 'contract "swap\u202egnp.exe"', 1))
    proc = cli("check", contract)
    assert proc.returncode == 1 and "E107" in proc.stderr and "U+202E" in proc.stderr
    assert "\u202e" not in proc.stderr


def test_fmt_refuses_a_file_with_no_contract(tmp_path):
    """`check` says E005 for a file with no contract; fmt passed it, and --write made an empty file a blank line."""
    empty = tmp_path / "empty.contract"
    empty.write_text("")
    comment = tmp_path / "comment.contract"
    comment.write_text("// nothing but a comment\n")
    for args in (("fmt", empty, comment), ("fmt", "--check", empty, comment), ("fmt", "--write", empty, comment)):
        proc = run_cli(*args)
        assert proc.returncode == 1 and proc.stderr.count("error[E005]: the file holds no contract") == 2, args
    assert empty.read_text() == "" and comment.read_text() == "// nothing but a comment\n"
