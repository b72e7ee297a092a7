"""The common shape every report parser produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import msgspec

MAX_REPORT_BYTES = 64 * 1024 * 1024
"""Largest report accepted; a bigger one is treated as a broken run."""

MAX_NOTES = 50
"""Notes kept per report, so a flood of noise cannot bloat a result file."""


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # an assertion failed
    ERROR = "error"  # the test could not run or crashed (setup, collection, panic)
    SKIPPED = "skipped"
    NO_RESULT = "no_result"  # started, but the run ended before it reported


# When one id is reported more than once, the worst outcome stands.
_SEVERITY = {
    Outcome.PASSED: 0,
    Outcome.SKIPPED: 1,
    Outcome.NO_RESULT: 2,
    Outcome.FAILED: 3,
    Outcome.ERROR: 4,
}


def worst(a: Outcome, b: Outcome) -> Outcome:
    return a if _SEVERITY[a] >= _SEVERITY[b] else b


class ReportError(ValueError):
    """The report cannot be read at all (not the format, truncated, too large)."""


@dataclass
class TestReport:
    """Test id -> outcome. Ids are stable strings a score map can name."""

    __test__ = False  # not a pytest test class despite the name

    tests: dict[str, Outcome] = field(default_factory=dict)
    complete: bool = True  # False when the run visibly stopped early
    notes: list[str] = field(default_factory=list)

    def record(self, test_id: str, outcome: Outcome) -> None:
        previous = self.tests.get(test_id)
        self.tests[test_id] = outcome if previous is None else worst(previous, outcome)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text[:300])

    @property
    def empty(self) -> bool:
        return not self.tests

    def count(self, outcome: Outcome) -> int:
        return sum(1 for o in self.tests.values() if o is outcome)


def check_size(data: bytes) -> None:
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"report is {len(data)} bytes, over the {MAX_REPORT_BYTES}-byte limit")


def json_lines(data: bytes, report: TestReport) -> list[dict[str, object]]:
    """Decode a stream of JSON objects, one per line. Lines that are not JSON
    objects (tool chatter mixed into the stream) are noted and skipped."""
    events: list[dict[str, object]] = []
    skipped = 0
    for raw in data.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            # msgspec caps nesting depth (RecursionError, raised before the stack runs out)
            obj = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            obj = None
        if isinstance(obj, dict):
            events.append(obj)
        else:
            skipped += 1
            if skipped <= 3:
                report.note(f"not a JSON event: {line[:120].decode('utf-8', 'replace')}")
    if skipped > 3:
        report.note(f"{skipped} lines in total were not JSON events")
    return events
