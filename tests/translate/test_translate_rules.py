"""The rules backend on hand-written prose: exact extraction, and parse-incomplete with the field named."""

import json

import pytest

from contractlang import check_source
from contractlang.formatter import format_ir
from contractlang.translate.rules import translate

from tests.helpers import ROOT

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
