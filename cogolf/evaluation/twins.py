"""Mutation twins: hidden copies of real tests whose expected value was changed.

A run of a candidate's code gets, besides the real tests, a few twins drawn
afresh for that run: each copies a real test that the reference passes and
changes one expected value (or inverts one check), so that the twin and its
original cannot both pass for a deterministic implementation. When a report
says both passed, the report was forged or an answer is "equal to everything":
the run is tampered. A twin that passes while its original fails is what an
honest wrong answer can do, so it proves nothing and is not held against the
run. Twins are never counted in a score or shown as tests.

This module is the verdict and the bookkeeping, shared by every evaluator;
each stack (pytest, PHPUnit, Go) has its own generator that plants the twins.
"""

from __future__ import annotations

from collections.abc import Mapping

from cogolf.evaluation.reports.model import Outcome, TestReport


def contradictions(report: TestReport, twins: Mapping[str, str]) -> int:
    """How many twins were reported passed together with their original.

    `twins` maps a twin's report id to its original's report id."""
    passed = Outcome.PASSED
    return sum(
        1
        for twin, original in twins.items()
        if report.tests.get(twin) is passed and report.tests.get(original) is passed
    )


def tamper_reason(forged: int, planted: int) -> str:
    """The note of a tampered run: counts only, never which tests were twins."""
    return (
        f"{forged} of {planted} hidden twin tests (copies of real tests with a changed "
        "expected value) were reported passed together with their originals: the report "
        "was forged or an answer compares equal to everything"
    )


def without_twins(report: TestReport, twins: Mapping[str, str]) -> TestReport:
    """The report with every twin removed: twins are not tests of the task."""
    kept = {test_id: o for test_id, o in report.tests.items() if test_id not in twins}
    return TestReport(tests=kept, complete=report.complete, notes=list(report.notes))
