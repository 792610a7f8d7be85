"""The rules backend on hand-written prose: exact extraction, and parse-incomplete with the field named."""

import json
from pathlib import Path

import pytest

from contractlang import check_source
from contractlang.formatter import format_ir
from contractlang.translate.rules import translate
from tests.helpers import ROOT, run_cli

NL = ROOT / "tests" / "nl"
COMPLETE = sorted(p for p in NL.glob("*.txt") if (p.with_suffix(".contract")).exists())
INCOMPLETE = sorted(p for p in NL.glob("*.txt") if (NL / f"{p.stem}.missing.json").exists())


FLAGGED = sorted(p for p in NL.glob("*.txt") if (NL / f"{p.stem}.flags.json").exists())


def test_corpus_sizes():
    assert len(COMPLETE) >= 39 and len(INCOMPLETE) >= 14 and len(FLAGGED) >= 10


@pytest.mark.parametrize("path", COMPLETE, ids=[p.stem for p in COMPLETE])
def test_extracts_exactly(path):
    result = translate(path.read_text(), path.stem)
    got = check_source(result.dsl, "<rules>")
    assert got.ok, (result.dsl, [d.message for d in got.diagnostics])
    want = check_source(path.with_suffix(".contract").read_text(), str(path.with_suffix(".contract")))
    assert want.ok, [d.message for d in want.diagnostics]
    assert format_ir(got.contracts[0].ir) == format_ir(want.contracts[0].ir)
    assert result.missing == ()


@pytest.mark.parametrize("path", INCOMPLETE, ids=[p.stem for p in INCOMPLETE])
def test_reports_missing_fields(path):
    result = translate(path.read_text(), path.stem)
    assert list(result.missing) == json.loads((NL / f"{path.stem}.missing.json").read_text())
    checked = check_source(result.dsl, "<rules>")
    if checked.ok:  # CT-Bench: what could not be read is reported beside a DSL that checks
        assert result.unread == result.missing
    else:
        assert all(d.code.startswith("E4") for d in checked.diagnostics) and result.unread == ()


CONTRACTSIM_COMPLETE = [p for p in COMPLETE if "game contractsim" in p.with_suffix(".contract").read_text()]


@pytest.mark.parametrize("path", CONTRACTSIM_COMPLETE, ids=[p.stem for p in CONTRACTSIM_COMPLETE])
def test_self_contradicting_texts_are_kept_and_flagged(path, tmp_path):
    """Faithful (ok) either way; well-formed exactly when the text's totals agree, else the checks named."""
    from contractlang.translate import translate_text
    from solver.verify import translation_checks

    result = translate_text(path.read_text(), path.stem, extra_checks=(translation_checks,))
    flags = NL / f"{path.stem}.flags.json"
    expected = json.loads(flags.read_text()) if flags.exists() else []
    assert result.ok and result.error is None
    assert sorted(f.check for f in result.inconsistencies) == expected
    assert result.well_formed is (not expected)
    assert result.status == ("not well-formed" if expected else "ok")


CONTRACT_TEXT = """Acme Foods (the Customer) and Luigi's Kitchen (the Caterer) agree as follows.
The Caterer will deliver 1 pizza, 1 pasta and 1 soup in weeks 2, 4, 6, 8 and 10.
The Customer will pay $18 in weeks 1, 3, 5, 7 and 9, and $0 in week 11.
Prices: pizza $10, pasta $5, soup $3.
"""


def _translate(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "terms.txt"
    path.write_text(text)
    done = run_cli("translate", path, "--json", "--cache", tmp_path / "cache.sqlite", cwd=tmp_path)
    return json.loads(done.stdout)


def test_a_breach_sentence_becomes_the_termination_clause_and_party_names_are_kept(tmp_path):
    out = _translate(tmp_path, CONTRACT_TEXT + "If either side breaches, the agreement ends.\n")
    assert out["status"] == "ok" and out["missing"] == []
    assert "on breach: terminate" in out["dsl"]
    assert 'parties { customer: "Acme Foods"  supplier: "Luigi\'s Kitchen" }' in out["dsl"]


@pytest.mark.parametrize(
    "sentence",
    [
        "A late delivery costs the Caterer a $5 penalty in week 4.",
        "If the Customer defaults, the Caterer may claim damages.",
        "Either side may cancel with two weeks' notice.",
    ],
)
def test_a_remedy_the_rules_cannot_read_is_quoted_and_the_verdict_is_parse_incomplete(tmp_path, sentence):
    out = _translate(tmp_path, CONTRACT_TEXT + sentence + "\n")
    assert out["status"] == "parse-incomplete" and out["error"] == "1 term(s) the text does not settle"
    assert out["missing"] == [f"could not read (a breach, termination or penalty term): {sentence}"]
    assert "week 4: $5" not in out["dsl"]  # a penalty is never read as a payment
    done = run_cli("translate", tmp_path / "terms.txt", "--cache", tmp_path / "cache.sqlite", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("parse-incomplete:") and sentence in done.stderr


PIZZA_TEXT = """Catering agreement between the Customer and the Caterer.
Prices: pizza $10 each, pasta $5 each, soup $3 each.
In each of weeks 2, 4, 6, 8 and 10 the Caterer delivers 2 pizza, 0 pasta and 1 soup.
The Customer pays $23 in each of weeks 1, 3, 5, 7 and 9 and $0 in week 11.
"""


def test_a_deduction_of_a_stated_amount_is_reported_never_dropped(tmp_path):
    """The language's deduction is the missing items' price: "$5 for every missing pizza" cannot be written,
    so it is a `missing:` line and the verdict is not ok; the file written checks as far as it goes."""
    term = "If a delivery falls short, the next payment is reduced by $5 for every missing pizza."
    (tmp_path / "terms.txt").write_text(PIZZA_TEXT + term + "\n")
    out_file = tmp_path / "out.contract"
    args = ("translate", tmp_path / "terms.txt", "--cache", tmp_path / "cache.sqlite", "-o", out_file)
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("parse-incomplete:"), done.stderr
    assert (
        f"missing: could not read (a deduction of a stated amount; the language deducts the missing items' price): {term}"
        in done.stderr
    )
    assert "payment_deduction" not in out_file.read_text()
    assert run_cli("check", out_file, cwd=tmp_path).returncode == 0


def test_ok_only_for_a_file_that_checks(tmp_path):
    """A deduction stated without minimums is written with the default floor of 1 each, which 0 pasta a week
    cannot meet: the written file fails `check` (E502), so the translation is not ok and says why."""
    (tmp_path / "terms.txt").write_text(
        PIZZA_TEXT + "If a delivery falls short, the next payment is reduced by the price of the missing dishes.\n"
    )
    out = _translate(tmp_path, (tmp_path / "terms.txt").read_text())
    assert out["status"] == "failed" and not out["ok"]
    assert out["error"].startswith("the translated contract does not check: minimum 1 pasta is above the 0")
    done = run_cli("translate", tmp_path / "terms.txt", "--cache", tmp_path / "cache.sqlite", cwd=tmp_path)
    assert done.returncode == 1 and "E502" in done.stderr
    for path in sorted((ROOT / "tests" / "nl").glob("[0-9]*.txt")):  # and every ok translation checks as written
        result = json.loads(run_cli("translate", path, "--json", "--cache", tmp_path / "cache.sqlite").stdout)
        if result["status"] == "ok":
            (tmp_path / "written.contract").write_text(result["dsl"])
            assert run_cli("check", tmp_path / "written.contract").returncode == 0, path
