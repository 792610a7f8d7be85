"""Test results as JUnit XML, the format CI systems and editors read."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from contractlang.scenario.suite import TestReport


def junit_xml(report: TestReport) -> str:
    """One `<testsuite>` per contract, one `<testcase>` per test; a failure carries its `file:line:col` message
    and the week's trace, a check error is an `<error>` case of its file."""
    root = ET.Element("testsuites", name="contractlang", tests=str(len(report.results)), failures=str(report.failed))
    by_contract: dict[str, list] = {}
    for r in report.results:
        by_contract.setdefault(r.contract, []).append(r)
    for contract, results in by_contract.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=contract,
            tests=str(len(results)),
            failures=str(sum(not r.passed for r in results)),
            errors="0",
        )
        for r in results:
            case = ET.SubElement(suite, "testcase", name=r.name, classname=contract, file=r.file, line=str(r.span.line))
            for f in r.failures:
                kind = "game" if f.problem else "expectation"
                failure = ET.SubElement(case, "failure", message=f.summary, type=kind)
                failure.text = f.text()
    if report.diagnostics:
        suite = ET.SubElement(
            root,
            "testsuite",
            name="check",
            tests=str(len(report.diagnostics)),
            failures="0",
            errors=str(len(report.diagnostics)),
        )
        for d in report.diagnostics:
            case = ET.SubElement(suite, "testcase", name=f"{d.file}:{d.span.line}:{d.span.column}", classname="check")
            error = ET.SubElement(case, "error", message=d.message, type=d.code)
            error.text = d.render(None)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
