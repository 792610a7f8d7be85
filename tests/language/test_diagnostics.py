"""Every invalid file gives exactly its golden diagnostics (rendered as the CLI prints them)."""

import re
from pathlib import Path

import pytest

from contractlang import check_source
from tests.helpers import INVALID, compare_golden

FILES = sorted(INVALID.glob("*.contract"))


def render(path: Path) -> str:
    data = path.read_bytes()
    result = check_source(data, f"invalid/{path.name}")
    text = data.decode("utf-8", errors="replace")
    return "\n".join(d.render(text) for d in result.diagnostics) + "\n"


def test_corpus_size():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_diagnostics(path: Path):
    rendered = render(path)
    assert "error[" in rendered, f"{path.name} was accepted"
    compare_golden(path.with_suffix(".expected"), rendered)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_expected_code_is_reported(path: Path):
    """The code named in each file's first comment line is among its diagnostics."""
    head = path.read_bytes().split(b"\n", 1)[0].decode("latin-1")
    wanted = re.findall(r"E\d{3}", head)
    codes = {d.code for d in check_source(path.read_bytes(), path.name).diagnostics}
    for code in wanted:
        assert code in codes


def test_many_errors_reported_in_one_run():
    result = check_source((INVALID / "many-errors.contract").read_text(), "m")
    codes = sorted(d.code for d in result.diagnostics)
    assert codes == ["E102", "E203", "E301", "E401", "E402", "E501", "E505"]


def test_diagnostic_json_fields():
    result = check_source((INVALID / "unknown-product.contract").read_text(), "u.contract")
    d = next(x for x in result.diagnostics if x.code == "E102").to_json()
    assert set(d) == {"code", "severity", "message", "file", "line", "column", "end_line", "end_column", "hint"}
    assert (d["line"], d["column"], d["end_line"], d["end_column"]) == (4, 35, 4, 41)
    assert d["message"] == "unknown product `burger` in Catering"
    assert [x.code for x in result.diagnostics] == ["E401", "E102"]
