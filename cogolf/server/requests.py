"""What `POST /matches` accepts, and how a refused request is reported.

Every live game reads its settings from the same request body, so the body,
the refusal and the deadline bounds live here, in the platform, not in a game.
"""

from __future__ import annotations

import msgspec

from cogolf.deadlines import (  # re-exported for the request's users
    MAX_DEADLINE,
    MAX_MATCH_DEADLINE,
    MIN_DEADLINE,
    deadline_problem,
)

__all__ = [
    "MAX_DEADLINE",
    "MAX_MATCH_DEADLINE",
    "MAX_NAME_CHARS",
    "MIN_DEADLINE",
    "CreateMatch",
    "RequestError",
    "check_deadline",
]

MAX_NAME_CHARS = 64


class CreateMatch(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The body of `POST /matches`; every field is optional (`course` is needed for golf)."""

    game: str = "cogolf"  # cogolf | golf
    course: str | None = None  # golf: python | racket | rust
    seed: int | None = None
    holes: int | None = None
    hole_deadline_seconds: float | None = None
    retry_deadline_seconds: float | None = None
    match_deadline_seconds: float | None = None
    names: list[str] | None = None
    deck: str | None = None
    tokens: list[str] | None = None  # for operators who hand out tokens themselves
    match_id: str | None = None


class RequestError(ValueError):
    """A request the server refuses, with the field and the reason."""


def check_deadline(
    name: str, value: float | None, default: float, most: float = MAX_DEADLINE
) -> float:
    if value is None:
        return default
    problem = deadline_problem(value, most)
    if problem is not None:
        raise RequestError(f"{name} {problem}")
    return float(value)
