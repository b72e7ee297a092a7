"""Parsers for the machine-readable reports that evaluators write.

Each parser turns one report (bytes, as read from disk) into a `TestReport`:
test id -> outcome, whether the run visibly finished, and notes for diagnosis.
A report from a candidate's run is untrusted input: a malformed one raises
`ReportError` with a specific message, never anything else.
"""

from __future__ import annotations

from collections.abc import Callable

from cogolf.project.reports.dart import parse_dart_json
from cogolf.project.reports.gotest import parse_go_test_json
from cogolf.project.reports.junit import parse_junit_xml
from cogolf.project.reports.model import Outcome, ReportError, TestReport

PARSERS: dict[str, Callable[[bytes], TestReport]] = {
    "junit": parse_junit_xml,
    "go-test-json": parse_go_test_json,
    "dart-json": parse_dart_json,
}
"""Report format name (as written in a task file) -> parser."""


def parse_report(fmt: str, data: bytes) -> TestReport:
    """Parse `data` as a report of format `fmt` (one of `PARSERS`)."""
    parser = PARSERS.get(fmt)
    if parser is None:
        known = ", ".join(sorted(PARSERS))
        raise ReportError(f"unknown report format {fmt!r} (known: {known})")
    return parser(data)


__all__ = ["PARSERS", "Outcome", "ReportError", "TestReport", "parse_report"]
