"""Parsers for the machine-readable reports that evaluators write.

Each parser turns one report (bytes, as read from disk) into a `TestReport`:
test id -> outcome, whether the run visibly finished, and notes for diagnosis.
A report from a candidate's run is untrusted input: a malformed one raises
`ReportError` with a specific message, never anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cogolf import safeio
from cogolf.evaluation.reports.dart import parse_dart_json
from cogolf.evaluation.reports.gotest import parse_go_test_json
from cogolf.evaluation.reports.junit import parse_junit_xml
from cogolf.evaluation.reports.model import MAX_REPORT_BYTES, Outcome, ReportError, TestReport

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
    try:
        return parser(data)
    except ReportError:
        raise
    except (RecursionError, MemoryError, ValueError, TypeError, UnicodeError) as exc:
        # a last guard: parsers raise ReportError themselves; nothing else may escape
        raise ReportError(f"{fmt} report cannot be read: {type(exc).__name__}") from exc


def read_report(path: Path) -> bytes:
    """The bytes of a report file the program under test could write: a link is
    refused (never followed), so is a file with other hard links, the size is
    checked before reading and at most MAX_REPORT_BYTES + 1 bytes are read.
    Raises ReportError, or FileNotFoundError when there is no report."""
    try:
        return safeio.read_file(path, MAX_REPORT_BYTES, single_link=True)
    except safeio.UnsafeFile as exc:
        raise ReportError(f"report refused: {exc}") from exc
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ReportError(f"{path}: cannot read the report ({exc.strerror})") from exc


__all__ = ["PARSERS", "Outcome", "ReportError", "TestReport", "parse_report", "read_report"]
