"""Turning a parsed report into an attempt's score. Pure: no files, no processes.

A check fails when any of its tests is not reported as passed (failed, errored,
skipped, without result, or absent). Failed `floor` and `signal` checks go into
the scale; `optional` ones are reported only. An attempt that produced no usable
report (no change, timeout, missing, empty or unreadable report) fails every
check and scores 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.games.project.task import COUNTED_LABELS, LABELS, ProjectTask


class AttemptStatus(StrEnum):
    OK = "ok"  # the evaluator ran and wrote a report
    NO_CHANGE = "no_change"  # the changes left the template as it was
    BAD_CHANGES = "bad_changes"  # the changes could not be applied
    TIMEOUT = "timeout"
    NO_REPORT = "no_report"
    EMPTY_REPORT = "empty_report"
    BAD_REPORT = "bad_report"
    HARNESS_ERROR = "harness_error"  # the evaluator could not be started (not the entrant's fault)
    TAMPERED = "tampered"  # a canary passed or a tripwire fired: the run decided its own score


# The statuses of an attempt whose evaluator never ran.
NOT_RUN = frozenset(
    {AttemptStatus.NO_CHANGE, AttemptStatus.BAD_CHANGES, AttemptStatus.HARNESS_ERROR}
)


@dataclass
class AttemptScore:
    status: AttemptStatus
    points: float
    failed_checks: list[str]  # ids of failed counted checks
    failed_optional: list[str]
    checks_passed: int
    checks_total: int
    by_label: dict[str, dict[str, int]]
    tests_passed: int
    tests_total: int
    report_complete: bool
    notes: list[str] = field(default_factory=list)
    ran: bool = True  # False: the evaluator never ran, so no check has a result

    def to_json(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "points": self.points,
            "checks": {
                "passed": self.checks_passed,
                "total": self.checks_total,
                "failed": self.failed_checks,
                "failed_optional": self.failed_optional,
                # present only when no evaluator ran, so a run's result reads as before
                **({} if self.ran else {"ran": False}),
            },
            "by_label": self.by_label,
            "tests": {
                "passed": self.tests_passed,
                "total": self.tests_total,
                "complete": self.report_complete,
            },
            "notes": self.notes,
        }


def check_passed(tests: tuple[str, ...], report: TestReport) -> bool:
    return all(report.tests.get(t) is Outcome.PASSED for t in tests)


def score_attempt(
    task: ProjectTask,
    status: AttemptStatus,
    report: TestReport | None,
    notes: Sequence[str] = (),
) -> AttemptScore:
    if status in NOT_RUN:
        # No evaluator ran: listing every check as failed would report results that
        # do not exist. The status says what happened; the checks stay unscored.
        return AttemptScore(
            status=status,
            points=0.0,
            failed_checks=[],
            failed_optional=[],
            checks_passed=0,
            checks_total=len(task.checks),
            by_label={},
            tests_passed=0,
            tests_total=0,
            report_complete=False,
            notes=list(notes)[:50],
            ran=False,
        )
    usable = status is AttemptStatus.OK and report is not None and not report.empty
    if status is AttemptStatus.OK and (report is None or report.empty):
        status = AttemptStatus.EMPTY_REPORT
    by_label = {label: {"passed": 0, "total": 0} for label in LABELS}
    failed: list[str] = []
    failed_optional: list[str] = []
    for check in task.checks:
        ok = usable and report is not None and check_passed(check.tests, report)
        by_label[check.label]["total"] += 1
        if ok:
            by_label[check.label]["passed"] += 1
        elif check.label in COUNTED_LABELS:
            failed.append(check.id)
        else:
            failed_optional.append(check.id)
    counted = task.counted_checks
    points = task.scale.points(len(failed), counted) if usable else 0.0
    all_notes = list(notes) + (report.notes if report is not None else [])
    return AttemptScore(
        status=status,
        points=points,
        failed_checks=failed,
        failed_optional=failed_optional,
        checks_passed=sum(v["passed"] for v in by_label.values()),
        checks_total=len(task.checks),
        by_label=by_label,
        tests_passed=report.count(Outcome.PASSED) if report is not None else 0,
        tests_total=len(report.tests) if report is not None else 0,
        report_complete=bool(report is not None and report.complete),
        notes=all_notes[:50],
    )
