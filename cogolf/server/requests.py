"""What `POST /matches` accepts, and how a refused request is reported.

Every live game reads its settings from the same request body, so the body,
the refusal and the deadline bounds live here, in the platform, not in a game.
"""

from __future__ import annotations

import re
import secrets

import msgspec

from cogolf.deadlines import (  # re-exported for the request's users
    MAX_DEADLINE,
    MAX_MATCH_DEADLINE,
    MIN_DEADLINE,
    deadline_problem,
)
from cogolf.sandbox.interpreter import MAX_HASH_SEED

__all__ = [
    "MAX_DEADLINE",
    "MAX_MATCH_DEADLINE",
    "MAX_NAME_CHARS",
    "MIN_DEADLINE",
    "CreateMatch",
    "RequestError",
    "check_deadline",
    "check_hash_seed",
    "check_tokens",
]

MAX_NAME_CHARS = 64
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,200}")  # URL-safe: seat URLs carry it as is


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
    hash_seed: int | None = None  # PYTHONHASHSEED of the match's programs (default: from its seed)


class RequestError(ValueError):
    """A request the server refuses, with the field and the reason."""


def check_tokens(tokens: list[str] | None, seats: int) -> list[str]:
    """The seat tokens: given ones checked (URL-safe, one per seat, all different), or new."""
    if tokens is None:
        return [secrets.token_urlsafe(18) for _ in range(seats)]
    if len(tokens) != seats:
        raise RequestError(f"tokens: give {seats} token(s), one per seat; got {len(tokens)}")
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not TOKEN_PATTERN.fullmatch(token):
            raise RequestError(
                f"tokens[{i}]: 8 to 200 characters from A-Z a-z 0-9 _ - "
                "(they go into seat URLs unescaped)"
            )
    if len(set(tokens)) != len(tokens):
        raise RequestError("tokens: every seat needs its own token; two are the same")
    return list(tokens)


def check_deadline(
    name: str, value: float | None, default: float, most: float = MAX_DEADLINE
) -> float:
    if value is None:
        return default
    problem = deadline_problem(value, most)
    if problem is not None:
        raise RequestError(f"{name} {problem}")
    return float(value)


def check_hash_seed(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= MAX_HASH_SEED:
        raise RequestError(f"hash_seed must be between 0 and {MAX_HASH_SEED}")
    return value
