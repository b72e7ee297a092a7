"""The pure core of a live solo golf match: observations, submissions, verdicts.

No I/O and no clock of its own: the driver asks for the next observation, hands
back what the seat replied (or that the deadline passed, with `now` supplied), and
gets a decision. A malformed reply earns one retry with the error text; a second
one, or a missed deadline, falls back to no submission for that hole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cogolf import text
from cogolf.golf.courses import Course
from cogolf.golf.holes import Hole, HoleSet
from cogolf.golf.play import MAX_SUBMISSION_BYTES
from cogolf.golf.runners.base import RunLimits

RETRIES_PER_HOLE = 1
DEFAULT_DEADLINE_SECONDS = 120.0


def observation(
    course: Course, hole: Hole, index: int, total: int, limits: RunLimits, deadline: float,
    *, error: str = "",
) -> dict[str, Any]:
    obs: dict[str, Any] = {
        "type": "golf_hole",
        "course": course.name,
        "hole": hole.key,
        "index": index,
        "of": total,
        "title": hole.title,
        "difficulty": hole.difficulty,
        "task": hole.description,
        "signature": course.signature(hole),
        "contract": course.contract,
        "file_name": course.file_name(hole.key),
        "public_tests": [{"args": list(t.args), "expect": t.expect} for t in hole.public],
        "penalty": hole.penalty,
        "limits": {
            "per_test_seconds": limits.per_test_seconds,
            "per_hole_seconds": limits.per_hole_seconds,
            "max_bytes": MAX_SUBMISSION_BYTES,
        },
        "deadline_seconds": deadline,
    }
    if error:
        obs["error"] = error
    return obs


class BadSubmission(ValueError):
    """A reply that is not a submission; the message names the field."""


def parse_submission(reply: Any) -> bytes:
    """A submission is {"source": "<file text>"}; the text is kept byte for byte."""
    if not isinstance(reply, dict):
        raise BadSubmission(
            f"$: expected an object with a source field, got {type(reply).__name__}"
        )
    source = reply.get("source")
    if not isinstance(source, str):
        raise BadSubmission("$.source: expected a string")
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadSubmission(f"$.source: not encodable as UTF-8 (position {exc.start})") from exc
    if len(data) > MAX_SUBMISSION_BYTES:
        raise BadSubmission(f"$.source: {len(data)} bytes, at most {MAX_SUBMISSION_BYTES}")
    return data


@dataclass
class SoloMatch:
    """Which hole is being played and what each hole ended with."""

    course: Course
    holes: HoleSet
    limits: RunLimits
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS
    index: int = 0
    retries_left: int = RETRIES_PER_HOLE
    last_error: str = ""
    sources: dict[str, bytes | None] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.index >= len(self.holes.holes)

    @property
    def hole(self) -> Hole:
        return self.holes.holes[self.index]

    def next_observation(self) -> dict[str, Any]:
        return observation(
            self.course, self.hole, self.index, len(self.holes.holes), self.limits,
            self.deadline_seconds, error=self.last_error,
        )

    def _advance(self, source: bytes | None) -> dict[str, Any]:
        key = self.hole.key
        self.sources[key] = source
        self.index += 1
        self.retries_left = RETRIES_PER_HOLE
        self.last_error = ""
        if source is None:
            return {"type": "golf_fallback", "hole": key, "reason": "no submission"}
        return {"type": "golf_submission", "hole": key, "bytes": len(source)}

    def receive(self, reply: Any) -> dict[str, Any]:
        """A reply arrived in time: accept it, ask again once, or fall back."""
        try:
            source = parse_submission(reply)
        except BadSubmission as exc:
            if self.retries_left > 0:
                self.retries_left -= 1
                self.last_error = text.clip(str(exc), 300)
                return {"type": "golf_retry", "hole": self.hole.key, "error": self.last_error}
            return self._advance(None)
        return self._advance(source)

    def deadline_passed(self) -> dict[str, Any]:
        return self._advance(None)
