"""An attempt's score from a parsed report, field by field, on real tasks and reports.

Pure and fast: no evaluator runs here (tests/games/project/test_attempt.py runs them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.games.project.scoring import (
    NOT_RUN,
    AttemptScore,
    AttemptStatus,
    check_passed,
    score_attempt,
)
from cogolf.games.project.task import ProjectTask, parse_task

P, F, E, S, N = (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED,
                 Outcome.NO_RESULT)


def task(checks: list[dict[str, Any]], scale: str = "failure_weighted") -> ProjectTask:
    return parse_task(
        {"name": "t", "report_format": "junit", "checks": checks, "scale": scale}, Path(".")
    )


def check(cid: str, label: str, *tests: str) -> dict[str, Any]:
    return {"id": cid, "label": label, "tests": list(tests)}


# floor a (t1, t2), signal b (t3), optional c (t4), floor d (t5)
MIXED = [
    check("a", "floor", "t1", "t2"),
    check("b", "signal", "t3"),
    check("c", "optional", "t4"),
    check("d", "floor", "t5"),
]


def report(tests: dict[str, Outcome], *, complete: bool = True,
           notes: list[str] | None = None) -> TestReport:
    return TestReport(tests=dict(tests), complete=complete, notes=list(notes or []))


def test_check_passed_needs_every_test_passed() -> None:
    rep = report({"x": P, "y": P, "f": F, "e": E, "s": S, "n": N})
    assert check_passed(("x", "y"), rep) is True
    assert check_passed(("x",), rep) is True
    for other in ("f", "e", "s", "n", "absent"):
        assert check_passed(("x", other), rep) is False
        assert check_passed((other, "x"), rep) is False


def test_a_scored_report_field_by_field() -> None:
    # a passes; b fails on a skip; c (optional) fails; d's test is absent
    rep = report({"t1": P, "t2": P, "t3": S, "t4": F, "extra": P}, complete=False,
                 notes=["from the report"])
    score = score_attempt(task(MIXED), AttemptStatus.OK, rep, notes=("given",))
    assert score == AttemptScore(
        status=AttemptStatus.OK,
        points=0.2,  # two counted checks failed
        failed_checks=["b", "d"],
        failed_optional=["c"],
        checks_passed=1,
        checks_total=4,
        by_label={
            "floor": {"passed": 1, "total": 2},
            "signal": {"passed": 0, "total": 1},
            "optional": {"passed": 0, "total": 1},
        },
        tests_passed=3,
        tests_total=5,
        report_complete=False,
        notes=["given", "from the report"],
        ran=True,
    )
    assert score.to_json() == {
        "status": "ok",
        "points": 0.2,
        "checks": {"passed": 1, "total": 4, "failed": ["b", "d"], "failed_optional": ["c"]},
        "by_label": {
            "floor": {"passed": 1, "total": 2},
            "signal": {"passed": 0, "total": 1},
            "optional": {"passed": 0, "total": 1},
        },
        "tests": {"passed": 3, "total": 5, "complete": False},
        "notes": ["given", "from the report"],
    }


def test_every_check_passed_scores_one_and_counts_each_label() -> None:
    rep = report({"t1": P, "t2": P, "t3": P, "t4": P, "t5": P})
    score = score_attempt(task(MIXED), AttemptStatus.OK, rep)
    assert (score.status, score.points, score.failed_checks, score.failed_optional) == (
        AttemptStatus.OK, 1.0, [], [])
    assert (score.checks_passed, score.checks_total) == (4, 4)
    assert score.by_label == {
        "floor": {"passed": 2, "total": 2},
        "signal": {"passed": 1, "total": 1},
        "optional": {"passed": 1, "total": 1},
    }
    assert (score.tests_passed, score.tests_total, score.report_complete) == (5, 5, True)
    assert score.notes == [] and score.ran is True


def test_an_optional_failure_costs_no_points() -> None:
    rep = report({"t1": P, "t2": P, "t3": P, "t4": E, "t5": P})
    score = score_attempt(task(MIXED), AttemptStatus.OK, rep)
    assert (score.points, score.failed_checks, score.failed_optional) == (1.0, [], ["c"])
    assert score.checks_passed == 3


def test_one_counted_failure_is_half_on_failure_weighted() -> None:
    rep = report({"t1": P, "t2": F, "t3": P, "t4": P, "t5": P})
    score = score_attempt(task(MIXED), AttemptStatus.OK, rep)
    assert (score.points, score.failed_checks) == (0.5, ["a"])


def test_graduated_divides_by_the_counted_checks_only() -> None:
    # 19 counted checks and one optional: 2 failed of 19 is over 10% (0.4); were the
    # optional one counted, 2 of 20 would be 10% (0.6)
    checks = [check(f"k{i}", "floor" if i % 2 else "signal", f"t{i}") for i in range(19)]
    checks.append(check("opt", "optional", "to"))
    rep = report({f"t{i}": P for i in range(2, 19)} | {"to": P})
    score = score_attempt(task(checks, "graduated"), AttemptStatus.OK, rep)
    assert (score.points, score.failed_checks, score.checks_passed) == (0.4, ["k0", "k1"], 18)
    assert score.by_label == {
        "floor": {"passed": 8, "total": 9},
        "signal": {"passed": 9, "total": 10},
        "optional": {"passed": 1, "total": 1},
    }


@pytest.mark.parametrize("status", [s for s in AttemptStatus if s is not AttemptStatus.OK
                                    and s not in NOT_RUN])
def test_a_run_that_went_wrong_scores_zero_with_every_check_failed(
    status: AttemptStatus,
) -> None:
    # even a report where everything passed (a tampered run's, say) earns nothing
    rep = report({"t1": P, "t2": P, "t3": P, "t4": P, "t5": P}, notes=["r"])
    score = score_attempt(task(MIXED), status, rep, notes=["n"])
    assert score == AttemptScore(
        status=status,
        points=0.0,
        failed_checks=["a", "b", "d"],
        failed_optional=["c"],
        checks_passed=0,
        checks_total=4,
        by_label={
            "floor": {"passed": 0, "total": 2},
            "signal": {"passed": 0, "total": 1},
            "optional": {"passed": 0, "total": 1},
        },
        tests_passed=5,
        tests_total=5,
        report_complete=True,
        notes=["n", "r"],
        ran=True,
    )


def test_no_report_at_all_is_an_empty_report() -> None:
    score = score_attempt(task(MIXED), AttemptStatus.OK, None, notes=["n"])
    assert score == AttemptScore(
        status=AttemptStatus.EMPTY_REPORT,
        points=0.0,
        failed_checks=["a", "b", "d"],
        failed_optional=["c"],
        checks_passed=0,
        checks_total=4,
        by_label={
            "floor": {"passed": 0, "total": 2},
            "signal": {"passed": 0, "total": 1},
            "optional": {"passed": 0, "total": 1},
        },
        tests_passed=0,
        tests_total=0,
        report_complete=False,
        notes=["n"],
    )


def test_a_report_without_tests_is_an_empty_report() -> None:
    score = score_attempt(task(MIXED), AttemptStatus.OK, report({}, notes=["r"]))
    assert (score.status, score.points) == (AttemptStatus.EMPTY_REPORT, 0.0)
    assert (score.failed_checks, score.failed_optional) == (["a", "b", "d"], ["c"])
    assert (score.tests_passed, score.tests_total, score.report_complete) == (0, 0, True)
    assert score.notes == ["r"]


def test_another_status_without_a_report_keeps_its_status() -> None:
    score = score_attempt(task(MIXED), AttemptStatus.TIMEOUT, None)
    assert (score.status, score.points, score.checks_passed) == (AttemptStatus.TIMEOUT, 0.0, 0)
    assert (score.tests_passed, score.tests_total, score.report_complete) == (0, 0, False)


def test_notes_are_cut_at_fifty_given_ones_first() -> None:
    rep = report({"t1": P, "t2": P, "t3": P, "t4": P, "t5": P},
                 notes=[f"r{i}" for i in range(10)])
    given = [f"n{i}" for i in range(45)]
    score = score_attempt(task(MIXED), AttemptStatus.OK, rep, notes=given)
    assert score.notes == [*given, "r0", "r1", "r2", "r3", "r4"]
    exactly = score_attempt(task(MIXED), AttemptStatus.OK, rep, notes=given[:40])
    assert exactly.notes == [*given[:40], *(f"r{i}" for i in range(10))]


def test_the_not_run_statuses() -> None:
    assert frozenset(NOT_RUN) == {AttemptStatus.NO_CHANGE, AttemptStatus.BAD_CHANGES,
                                  AttemptStatus.HARNESS_ERROR}


@pytest.mark.parametrize("status", sorted(NOT_RUN))
def test_an_evaluator_that_never_ran_leaves_the_checks_unscored(status: AttemptStatus) -> None:
    # a report handed in anyway is not read
    rep = report({"t1": P, "t2": P, "t3": P, "t4": P, "t5": P}, notes=["r"])
    notes = [f"n{i}" for i in range(51)]
    score = score_attempt(task(MIXED), status, rep, notes=notes)
    assert score == AttemptScore(
        status=status,
        points=0.0,
        failed_checks=[],
        failed_optional=[],
        checks_passed=0,
        checks_total=4,
        by_label={},
        tests_passed=0,
        tests_total=0,
        report_complete=False,
        notes=notes[:50],
        ran=False,
    )
    assert score.to_json() == {
        "status": str(status),
        "points": 0.0,
        "checks": {"passed": 0, "total": 4, "failed": [], "failed_optional": [],
                   "ran": False},
        "by_label": {},
        "tests": {"passed": 0, "total": 0, "complete": False},
        "notes": notes[:50],
    }


def test_the_statuses_spell_as_written_in_results() -> None:
    assert [str(s) for s in AttemptStatus] == [
        "ok", "no_change", "bad_changes", "timeout", "no_report", "empty_report",
        "bad_report", "harness_error", "tampered",
    ]


def test_a_run_without_a_usable_report_scores_zero_where_the_scale_would_not() -> None:
    # one counted check: failing it is worth 0.5 on failure_weighted, yet a run whose
    # report cannot be used earns nothing at all
    one = task([check("only", "floor", "t1")])
    assert score_attempt(one, AttemptStatus.OK, report({"t1": F})).points == 0.5
    assert score_attempt(one, AttemptStatus.OK, None).points == 0.0
    assert score_attempt(one, AttemptStatus.OK, report({})).points == 0.0
    assert score_attempt(one, AttemptStatus.TAMPERED, report({"t1": P})).points == 0.0
    assert score_attempt(one, AttemptStatus.TIMEOUT, report({"t1": F})).points == 0.0
