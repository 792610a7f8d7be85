"""The rules backend on hand-written prose: exact extraction, and parse-incomplete with the field named."""

import json
from pathlib import Path

import pytest

from contractlang import check_source
from contractlang.formatter import format_ir
from contractlang.translate.rules import translate

NL = Path(__file__).parent / "nl"
COMPLETE = sorted(p for p in NL.glob("*.txt") if (p.with_suffix(".contract")).exists())
INCOMPLETE = sorted(p for p in NL.glob("*.txt") if (NL / f"{p.stem}.missing.json").exists())


def test_corpus_sizes():
    assert len(COMPLETE) >= 20 and len(INCOMPLETE) >= 5


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
    assert not checked.ok and all(d.code.startswith("E4") for d in checked.diagnostics)
