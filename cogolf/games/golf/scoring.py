"""Turning one hole's run into a score, and a course's holes into totals.

score = bytes + penalty x (1 - correctness)^2, so a tiny but wrong file never
beats a correct one, while partial progress still counts. Pure functions: the
runners produce a `BatchResult`, this module judges it against expected values
with the project's one equality rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import msgspec

from cogolf import values
from cogolf.games.golf.holes import Hole, Test
from cogolf.sandbox.api import BatchResult, CallStatus, LoadStatus


class Reason(StrEnum):
    NO_SUBMISSION = "No submission"
    MISSING_FUNCTION = "Missing function"
    SYNTAX_ERROR = "Syntax error"
    RUNTIME_ERROR = "Runtime error"
    TIMEOUT = "Timeout"
    FAILED_TESTS = "Failed tests"


class TestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    passed: bool
    status: str  # "pass", "wrong", or a CallStatus value
    detail: str = ""
    got: str = ""  # short rendering of the returned value, when there was one


class HoleResult(msgspec.Struct, frozen=True, kw_only=True):
    hole: str
    title: str
    difficulty: str
    bytes: int
    tests_passed: int
    tests_total: int
    penalty: float  # the penalty part of the score
    score: float
    status: str  # "passed", "failed" or "missing"
    reason: str = ""  # a Reason value when not passed
    detail: str = ""  # load-time detail (compiler message, exception)
    tests: list[TestOutcome] = []  # public tests only: a private test's data never leaves
    private_passed: int = 0
    private_total: int = 0
    attempt: int | None = None  # index of the chosen attempt
    attempts: int = 0
    # Played live, the hole was not the seat's own play: the fallback's cause (the server's
    # fallback, or the seat's own marked one); "" for a file scored as it was submitted.
    fallback: str = ""

    @property
    def correctness(self) -> float:
        return self.tests_passed / self.tests_total if self.tests_total else 0.0


def penalty_part(passed: int, total: int, penalty: float) -> float:
    correctness = passed / total if total else 0.0
    return penalty * (1.0 - correctness) ** 2


def hole_score(size: int, passed: int, total: int, penalty: float) -> float:
    return size + penalty_part(passed, total, penalty)


_LOAD_REASONS = {
    LoadStatus.SYNTAX_ERROR: Reason.SYNTAX_ERROR,
    LoadStatus.MISSING_FUNCTION: Reason.MISSING_FUNCTION,
    LoadStatus.LOAD_ERROR: Reason.RUNTIME_ERROR,
    LoadStatus.LOAD_TIMEOUT: Reason.TIMEOUT,
    LoadStatus.CRASH: Reason.RUNTIME_ERROR,
    LoadStatus.HARNESS_ERROR: Reason.RUNTIME_ERROR,
}


def judge_tests(tests: Sequence[Test], batch: BatchResult) -> list[TestOutcome]:
    """Compare each call's value with the expected one; never trusts the child's view."""
    out = []
    for i, test in enumerate(tests):
        call = batch.results[i] if i < len(batch.results) else None
        if call is None:
            out.append(TestOutcome(name=test.name, passed=False, status=CallStatus.NOT_RUN.value))
            continue
        if call.status is not CallStatus.OK:
            out.append(
                TestOutcome(
                    name=test.name, passed=False, status=call.status.value, detail=call.detail
                )
            )
            continue
        try:
            got = values.canonical(call.value)
        except values.NotAValue as exc:
            out.append(TestOutcome(name=test.name, passed=False, status="invalid", detail=str(exc)))
            continue
        ok = values.values_equal(got, test.expect)
        out.append(
            TestOutcome(
                name=test.name, passed=ok, status="pass" if ok else "wrong",
                got=values.short_text(got),
            )
        )
    return out


def failure_reason(batch: BatchResult, outcomes: Sequence[TestOutcome]) -> Reason | None:
    """Why a hole did not fully pass; the most fundamental failure wins."""
    if batch.load is not LoadStatus.OK:
        return _LOAD_REASONS[batch.load]
    failed = [t for t in outcomes if not t.passed]
    if not failed:
        return None
    if any(t.status == CallStatus.TIMEOUT.value for t in failed):
        return Reason.TIMEOUT
    if any(t.status not in ("wrong",) for t in failed):
        return Reason.RUNTIME_ERROR
    return Reason.FAILED_TESTS


def judge_hole(
    hole: Hole,
    tests: Sequence[Test],
    size: int,
    batch: BatchResult,
    *,
    attempt: int | None = None,
    attempts: int = 1,
) -> HoleResult:
    outcomes = judge_tests(tests, batch)
    passed = sum(t.passed for t in outcomes)
    reason = failure_reason(batch, outcomes)
    # Private tests are counted, never shown: their values, errors and even their
    # names stay with the scorer, so no result, replay or page can carry their inputs.
    public_names = {t.name for t in hole.public}
    shown = [o for o in outcomes if o.name in public_names]
    hidden = [o for o in outcomes if o.name not in public_names]
    pen = penalty_part(passed, len(tests), hole.penalty)
    return HoleResult(
        hole=hole.key,
        title=hole.title,
        difficulty=hole.difficulty,
        bytes=size,
        tests_passed=passed,
        tests_total=len(tests),
        penalty=pen,
        score=size + pen,
        status="passed" if reason is None else "failed",
        reason="" if reason is None else reason.value,
        detail=batch.load_detail,
        tests=shown,
        private_passed=sum(o.passed for o in hidden),
        private_total=len(hidden),
        attempt=attempt,
        attempts=attempts,
    )


def missing_hole(hole: Hole, tests: Sequence[Test]) -> HoleResult:
    """A hole without a submission scores its full penalty."""
    return HoleResult(
        hole=hole.key,
        title=hole.title,
        difficulty=hole.difficulty,
        bytes=0,
        tests_passed=0,
        tests_total=len(tests),
        penalty=hole.penalty,
        score=hole.penalty,
        status="missing",
        reason=Reason.NO_SUBMISSION.value,
        tests=[],
        attempts=0,
    )


class CourseTotals(msgspec.Struct, frozen=True, kw_only=True):
    score: float
    holes_passed: int
    holes_total: int
    tests_passed: int
    tests_total: int
    raw_bytes: int
    penalty: float
    official_bytes: int  # bytes of fully passing holes only
    fallbacks: int = 0  # holes played live whose play was a fallback (HoleResult.fallback)


def course_totals(holes: Sequence[HoleResult]) -> CourseTotals:
    return CourseTotals(
        score=sum(h.score for h in holes),
        holes_passed=sum(h.status == "passed" for h in holes),
        holes_total=len(holes),
        tests_passed=sum(h.tests_passed for h in holes),
        tests_total=sum(h.tests_total for h in holes),
        raw_bytes=sum(h.bytes for h in holes),
        penalty=sum(h.penalty for h in holes),
        official_bytes=sum(h.bytes for h in holes if h.status == "passed"),
        fallbacks=sum(1 for h in holes if h.fallback),
    )
