"""The repository's front matter: a licence, a citation that matches the package, no build artefacts, no issue numbers in code."""

import re
import subprocess
import tomllib

import yaml

from tests.helpers import ROOT


def test_licence_is_apache_2_and_declared():
    assert "Apache License" in (ROOT / "LICENSE").read_text() and "Version 2.0" in (ROOT / "LICENSE").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]


def test_citation_matches_the_package_and_names_both_papers():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == project["version"] and citation["license"] == project["license"]
    titles = {reference["title"] for reference in citation["references"]}
    assert titles == {
        "Evaluating Rational Contracting in Natural Language",
        "Commitment To Cooperation With Self-Negotiated Contracts",
    }
    assert all(reference["authors"] for reference in citation["references"])


def test_no_wheel_or_archive_is_tracked():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert not [name for name in tracked.splitlines() if name.endswith((".whl", ".tar.gz"))]


def test_compiled_kernels_run_on_the_thread_count_the_environment_names():
    """numba reads NUMBA_NUM_THREADS at import and again at every compile: if the two differ once its pool is
    running, the next compile fails, so the test workers set it before anything imports numba."""
    import os

    import numba

    named = os.environ.get("NUMBA_NUM_THREADS", numba.config.NUMBA_DEFAULT_NUM_THREADS)
    assert numba.config.NUMBA_NUM_THREADS == int(named)


def test_package_code_names_no_issue_numbers():
    """Comments and docstrings say why, not which issue brought a line: history is in the commits and the
    changelog."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for top in ("contractlang", "games", "solver")
        for path in sorted((ROOT / top).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if re.search(r"\bissues? #\d", line)
    ]
    assert found == []
