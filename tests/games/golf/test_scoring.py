"""The score formula, failure reasons, course totals and attempt selection."""

from __future__ import annotations

import msgspec
import pytest

from cogolf.games.golf import play, scoring
from cogolf.games.golf.attempts import PublicRun, choose_attempt
from cogolf.games.golf.holes import HoleSet
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus


@pytest.mark.parametrize(
    ("passed", "total", "expected"), [(1, 6, 694.44), (3, 4, 62.5), (6, 7, 20.41), (6, 6, 0.0)]
)
def test_penalty_worked_cases(passed: int, total: int, expected: float) -> None:
    assert round(scoring.penalty_part(passed, total, 1000.0), 2) == expected


def test_fully_correct_file_scores_its_bytes_and_missing_scores_full_penalty(
    holes: HoleSet,
) -> None:
    assert scoring.hole_score(31, 10, 10, 1000.0) == 31
    hole = holes.hole("reverse-string")
    missing = scoring.missing_hole(hole, hole.scoring)
    assert (missing.score, missing.reason, missing.status) == (1000.0, "No submission", "missing")


def _batch(statuses: list[CallStatus], values: list[object], load: LoadStatus = LoadStatus.OK
           ) -> BatchResult:
    return BatchResult(load=load, results=[
        CallResult(status=s, value=v) for s, v in zip(statuses, values, strict=True)])


def test_judging_uses_the_one_equality_rule(holes: HoleSet) -> None:
    hole = holes.hole("palindrome")
    tests = hole.public[:2]  # racecar -> true, ab -> false
    # 1 is not true, 0 is not false
    outcome = scoring.judge_hole(hole, tests, 5, _batch([CallStatus.OK] * 2, [1, 0]))
    assert outcome.tests_passed == 0 and outcome.reason == "Failed tests"
    outcome = scoring.judge_hole(hole, tests, 5, _batch([CallStatus.OK] * 2, [True, False]))
    assert outcome.status == "passed" and outcome.score == 5


def test_failure_reason_precedence(holes: HoleSet) -> None:
    hole = holes.hole("sum-digits")
    tests = hole.public[:3]  # expects 6, 0, 9
    mixed = _batch([CallStatus.OK, CallStatus.ERROR, CallStatus.TIMEOUT], [6, None, None])
    assert scoring.judge_hole(hole, tests, 9, mixed).reason == "Timeout"
    errors = _batch([CallStatus.OK, CallStatus.ERROR, CallStatus.OK], [6, None, 9])
    assert scoring.judge_hole(hole, tests, 9, errors).reason == "Runtime error"
    wrong = _batch([CallStatus.OK] * 3, [6, 1, 9])
    result = scoring.judge_hole(hole, tests, 9, wrong)
    assert result.reason == "Failed tests" and result.tests[1].got == "1"
    for load, reason in [(LoadStatus.SYNTAX_ERROR, "Syntax error"),
                         (LoadStatus.MISSING_FUNCTION, "Missing function"),
                         (LoadStatus.LOAD_ERROR, "Runtime error"),
                         (LoadStatus.LOAD_TIMEOUT, "Timeout")]:
        batch = _batch([CallStatus.NOT_RUN] * 3, [None] * 3, load)
        assert scoring.judge_hole(hole, tests, 9, batch).reason == reason


def test_course_totals_count_official_bytes_of_passing_holes_only(holes: HoleSet) -> None:
    a, b = holes.hole("sum-digits"), holes.hole("palindrome")
    good = scoring.judge_hole(a, a.public, 20, _batch([CallStatus.OK] * 3, [6, 0, 9]))
    half = scoring.judge_hole(b, b.public[:2], 30, _batch([CallStatus.OK] * 2, [True, True]))
    totals = scoring.course_totals([good, half, scoring.missing_hole(a, a.scoring)])
    assert totals.holes_passed == 1
    assert totals.official_bytes == 20 and totals.raw_bytes == 50
    assert totals.tests_passed == 4 and totals.tests_total == 3 + 2 + len(a.scoring)
    assert totals.penalty == pytest.approx(250.0 + 1000.0)
    assert totals.score == pytest.approx(50 + 1250.0)


def test_attempt_selection_tie_breaks() -> None:
    def run(i: int, size: int, passed: int, penalty: float = 1000.0) -> PublicRun:
        return PublicRun(index=i, size=size, public_passed=passed, public_total=3, penalty=penalty)

    # most public tests passed beats a smaller file
    assert choose_attempt([run(0, 10, 2), run(1, 500, 3)]).index == 1
    # same passed count: lowest public-test score (here the same as fewest bytes)
    assert choose_attempt([run(0, 90, 2), run(1, 80, 2)]).index == 1
    # everything equal: the earliest attempt
    assert choose_attempt([run(0, 80, 3), run(1, 80, 3)]).index == 0
    with pytest.raises(ValueError):
        choose_attempt([])


def test_private_tests_never_choose(holes: HoleSet) -> None:
    hole = holes.hole("sum-digits")
    n_pub, n_all = len(hole.public), len(hole.scoring)
    expected = [t.expect for t in hole.scoring]
    # attempt 0: passes public only; attempt 1: passes everything but is larger
    first = _batch([CallStatus.OK] * n_all, expected[:n_pub] + [-1] * (n_all - n_pub))
    second = _batch([CallStatus.OK] * n_all, expected)
    result = play.judge_attempts(hole, [b"x" * 10, b"y" * 20], [first, second])
    assert result.attempt == 0 and result.attempts == 2
    assert result.tests_passed == n_pub and result.bytes == 10


def test_each_call_is_judged_exactly(holes: HoleSet) -> None:
    hole = holes.hole("sum-digits")
    tests = [*hole.public[:3], hole.private[0]]  # public expects 6, 0, 9
    batch = BatchResult(load=LoadStatus.OK, results=[
        CallResult(status=CallStatus.OK, value=6),
        CallResult(status=CallStatus.ERROR, value=None, detail="ZeroDivisionError"),
        CallResult(status=CallStatus.OK, value=float("nan")),
    ])  # the fourth call never ran
    assert scoring.judge_tests(tests, batch) == [
        scoring.TestOutcome(name=tests[0].name, passed=True, status="pass", got="6"),
        scoring.TestOutcome(name=tests[1].name, passed=False, status="error",
                            detail="ZeroDivisionError"),
        scoring.TestOutcome(name=tests[2].name, passed=False, status="invalid",
                            detail="non-finite float at $"),
        scoring.TestOutcome(name=tests[3].name, passed=False, status="not_run"),
    ]
    result = scoring.judge_hole(hole, tests, 40, batch, attempt=2, attempts=3)
    pen = scoring.penalty_part(1, 4, hole.penalty)
    assert pen == hole.penalty * 0.75**2
    assert result == scoring.HoleResult(
        hole=hole.key, title=hole.title, difficulty=hole.difficulty, bytes=40,
        tests_passed=1, tests_total=4, penalty=pen, score=40 + pen, status="failed",
        reason="Runtime error", detail="",
        tests=scoring.judge_tests(tests, batch)[:3],  # the private test is only counted
        private_passed=0, private_total=1, attempt=2, attempts=3,
    )


def test_a_hole_passes_only_when_every_call_does(holes: HoleSet) -> None:
    hole = holes.hole("sum-digits")
    tests = [hole.public[0], hole.private[0]]
    batch = _batch([CallStatus.OK, CallStatus.OK], [6, tests[1].expect])
    result = scoring.judge_hole(hole, tests, 12, batch)
    assert (result.status, result.reason, result.score, result.penalty) == ("passed", "", 12, 0.0)
    assert (result.private_passed, result.private_total, result.attempts) == (1, 1, 1)
    assert result.attempt is None
    assert scoring.failure_reason(batch, scoring.judge_tests(tests, batch)) is None


@pytest.mark.parametrize(
    ("load", "reason"),
    [(LoadStatus.CRASH, "Runtime error"), (LoadStatus.HARNESS_ERROR, "Runtime error")],
)
def test_a_crashed_load_is_a_runtime_error(holes: HoleSet, load: LoadStatus, reason: str) -> None:
    hole = holes.hole("sum-digits")
    batch = BatchResult(load=load, results=[], load_detail="boom")
    result = scoring.judge_hole(hole, hole.public[:2], 9, batch)
    assert (result.reason, result.detail, result.tests_passed) == (reason, "boom", 0)
    assert [t.status for t in result.tests] == ["not_run", "not_run"]


def test_the_score_adds_the_penalty_and_no_tests_is_no_correctness() -> None:
    assert scoring.hole_score(10, 1, 2, 100.0) == 10 + 25.0
    assert scoring.penalty_part(0, 0, 80.0) == 80.0
    assert scoring.penalty_part(2, 2, 80.0) == 0.0


def test_a_missing_hole_exactly(holes: HoleSet) -> None:
    hole = holes.hole("reverse-string")
    assert scoring.missing_hole(hole, hole.scoring) == scoring.HoleResult(
        hole=hole.key, title=hole.title, difficulty=hole.difficulty, bytes=0, tests_passed=0,
        tests_total=len(hole.scoring), penalty=hole.penalty, score=hole.penalty,
        status="missing", reason="No submission", tests=[], attempts=0,
    )


def test_course_totals_add_every_field(holes: HoleSet) -> None:
    hole = holes.hole("sum-digits")
    tests = hole.public[:2]
    passed = scoring.judge_hole(hole, tests, 20, _batch([CallStatus.OK] * 2, [6, 0]))
    failed = msgspec.structs.replace(
        scoring.judge_hole(hole, tests, 7, _batch([CallStatus.OK] * 2, [6, 1])),
        fallback="timeout",
    )
    missing = scoring.missing_hole(hole, tests)
    totals = scoring.course_totals([passed, failed, missing])
    assert totals == scoring.CourseTotals(
        score=passed.score + failed.score + missing.score,
        holes_passed=1, holes_total=3, tests_passed=3, tests_total=6, raw_bytes=27,
        penalty=failed.penalty + missing.penalty, official_bytes=20, fallbacks=1,
    )
