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

import xml.etree.ElementTree as ET

import defusedxml  # type: ignore[import-untyped]
import defusedxml.ElementTree as SafeET  # type: ignore[import-untyped]

from cogolf.evaluation.reports.model import Outcome, ReportError, TestReport, check_size, worst

MAX_SUITE_NAMES = 64  # innermost enclosing suite names kept (only the innermost is used)

_RESULT_TAGS = {"error": Outcome.ERROR, "failure": Outcome.FAILED, "skipped": Outcome.SKIPPED}


def parse_junit_xml(data: bytes) -> TestReport:
    check_size(data)
    report = TestReport()
    if not data.strip():
        report.complete = False
        report.note("empty report file")
        return report
    try:
        # The parser itself refuses any DOCTYPE, entity or external reference, wherever
        # it sits and in whatever encoding the document declares.
        root = SafeET.fromstring(data, forbid_dtd=True)
    except defusedxml.DefusedXmlException as exc:
        raise ReportError(
            f"JUnit report refused: {type(exc).__name__} (a DOCTYPE, entities and "
            "external references are not allowed)"
        ) from exc
    except (ET.ParseError, ValueError, LookupError) as exc:
        raise ReportError(f"JUnit report is not well-formed XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(
            f"JUnit report root is <{root.tag}>, expected <testsuites> or <testsuite>"
        )
    _walk(root, [root.get("name", "")] if root.tag == "testsuite" else [], report)
    return report


def _walk(root: ET.Element, suites: list[str], report: TestReport) -> None:
    """In document order over nested <testsuite>s, with a stack rather than recursion
    so no nesting depth can exhaust the interpreter's."""
    stack: list[tuple[ET.Element, tuple[str, ...]]] = [(root, tuple(suites))]
    while stack:
        element, names = stack.pop()
        if element.tag == "testcase":
            _case(element, list(names), report)
            continue
        for child in reversed(element):
            if child.tag == "testsuite":
                # only the innermost named suite is ever used; a bounded chain is enough
                stack.append((child, (*names[-MAX_SUITE_NAMES + 1 :], child.get("name", ""))))
            elif child.tag == "testcase":
                stack.append((child, names))


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
