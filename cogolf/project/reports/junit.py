"""JUnit XML, as written by pytest (`--junitxml`), PHPUnit and Pest.

Test id: `<classname>::<name>`. The class comes from `classname` (even when empty,
as for pytest's collection errors), else `class`, else the innermost enclosing
`<testsuite name>`; data-set
names stay part of `name` as the tool wrote them (`testAdd with data set #1`,
`test_split[a-b]`). Outcome: an `<error>` child is an error, `<failure>` a failure,
`<skipped>` a skip (pytest also writes xfail this way), no such child a pass;
`<system-out>`, `<properties>` and PHPUnit's `<warning>` do not change it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from cogolf.project.reports.model import Outcome, ReportError, TestReport, check_size, worst

# A DOCTYPE can only sit in the prolog; refusing it rules out entity expansion.
_DOCTYPE = re.compile(
    rb"\A(\xef\xbb\xbf)?\s*(<\?xml[^>]*\?>)?\s*(<!--.*?-->\s*)*<!DOCTYPE", re.S | re.I
)

_RESULT_TAGS = {"error": Outcome.ERROR, "failure": Outcome.FAILED, "skipped": Outcome.SKIPPED}


def parse_junit_xml(data: bytes) -> TestReport:
    check_size(data)
    report = TestReport()
    if not data.strip():
        report.complete = False
        report.note("empty report file")
        return report
    if _DOCTYPE.match(data):
        raise ReportError("JUnit report declares a DOCTYPE; refused (entities are not allowed)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ReportError(f"JUnit report is not well-formed XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(
            f"JUnit report root is <{root.tag}>, expected <testsuites> or <testsuite>"
        )
    _walk(root, [root.get("name", "")] if root.tag == "testsuite" else [], report)
    return report


def _walk(element: ET.Element, suites: list[str], report: TestReport) -> None:
    for child in element:
        if child.tag == "testsuite":
            _walk(child, [*suites, child.get("name", "")], report)
        elif child.tag == "testcase":
            _case(child, suites, report)


def _case(case: ET.Element, suites: list[str], report: TestReport) -> None:
    name = case.get("name")
    if not name:
        report.note("a <testcase> without a name attribute was ignored")
        return
    klass = case.get("classname")
    if klass is None:
        klass = case.get("class") or next((s for s in reversed(suites) if s), "")
    outcome = Outcome.PASSED
    for child in case:
        found = _RESULT_TAGS.get(child.tag)
        if found is not None:
            outcome = worst(outcome, found)
    report.record(f"{klass}::{name}", outcome)
