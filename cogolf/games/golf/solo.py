"""The pure pieces of a live solo golf hole: what the seat is told, what it may answer.

No I/O and no clock: the deadlines, the one retry and the fallback (no
submission) come from the engine's hole collector, which is handed
`accept_submission` as its intake; the golf driver carries out the effects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cogolf.engine.intake import Rejected, decode_for_hole, seat_fallback
from cogolf.games.golf.courses import Course
from cogolf.games.golf.holes import Hole
from cogolf.games.golf.play import MAX_SUBMISSION_BYTES
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.types import RUST_EDITION
from cogolf.games.golf.wire import (
    GolfObservationBody,
    GolfRules,
    GolfSubmission,
    GolfTask,
    PublicTest,
)

_LANGUAGES = {"python": "Python 3", "racket": "Racket", "rust": f"Rust (edition {RUST_EDITION})"}


def golf_rules(course: Course, limits: RunLimits) -> GolfRules:
    return GolfRules(
        language=_LANGUAGES.get(course.name, course.name),
        contract=course.contract,
        file_extension=course.extension,
        max_source_bytes=MAX_SUBMISSION_BYTES,
        per_test_seconds=limits.per_test_seconds,
        per_hole_seconds=limits.per_hole_seconds,
        compile_seconds=limits.compile_seconds,
        memory_bytes=limits.memory_bytes,
    )


def observation(
    course: Course, hole: Hole, number: int, total: int, limits: RunLimits, score: float
) -> GolfObservationBody:
    """The prompt of hole `number` (1-based); public tests only, never the private ones."""
    return GolfObservationBody(
        course=course.name,
        hole=number,
        holes=total,
        task=GolfTask(
            key=hole.key,
            title=hole.title,
            difficulty=hole.difficulty,
            description=hole.description,
            signature=course.signature(hole),
            public_tests=[PublicTest(list(t.args), t.expect) for t in hole.public],
            penalty=hole.penalty,
            file_name=course.file_name(hole.key),
        ),
        contract=course.contract,
        score=round(score, 2),
        rules=golf_rules(course, limits),
    )


@dataclass(frozen=True)
class AcceptedSource:
    """A valid submission: the file's bytes, or None when the seat passed the hole."""

    hole: int
    source: bytes | None
    fallback_cause: str | None = None  # the seat marked it as its own fallback
    fallback_detail: str = ""


def as_submission(value: Any) -> Any:
    """A policy may return the source text itself; anything else is left for the intake."""
    return {"source": value} if isinstance(value, str) else value


def accept_submission(raw: str | bytes, expected_hole: int) -> AcceptedSource | Rejected:
    """Validate one golf submission frame; rejections name the field and the limit.

    Unlike the Cogolf intake nothing is cleaned or clipped: the source is scored
    byte for byte, so a string that is not valid UTF-8 is refused, not repaired.
    """
    sub = decode_for_hole(raw, GolfSubmission, expected_hole, repair_surrogates=False)
    if isinstance(sub, Rejected):
        return sub
    cause, detail = seat_fallback(sub.fallback, [])
    if sub.source is None:
        return AcceptedSource(sub.hole, None, cause, detail)
    try:
        data = sub.source.encode("utf-8")
    except UnicodeEncodeError as exc:
        return Rejected(
            "malformed",
            f"source is not valid UTF-8 (lone surrogate at character {exc.start}) - at `$.source`",
            hole=sub.hole,
        )
    if len(data) > MAX_SUBMISSION_BYTES:
        return Rejected(
            "malformed",
            f"source is {len(data)} bytes; the cap is {MAX_SUBMISSION_BYTES} - at `$.source`",
            hole=sub.hole,
        )
    return AcceptedSource(sub.hole, data, cause, detail)
