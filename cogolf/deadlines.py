"""The bounds every deadline of a match must keep, wherever it is set.

A deadline reaches a match from a `POST /matches` body, a night file, the
command line or a journal's header; all of them check it against these bounds,
so a value one of them accepts is never refused by another later.
"""

from __future__ import annotations

MIN_DEADLINE = 0.05  # seconds: below this no reply can arrive
MAX_DEADLINE = 3600.0  # a hole's or a retry's deadline
MAX_MATCH_DEADLINE = 86400.0  # a whole match's wall budget


def deadline_problem(value: float, most: float = MAX_DEADLINE) -> str | None:
    """Why `value` (seconds) cannot be a deadline, or None when it can."""
    if not MIN_DEADLINE <= value <= most:
        return f"must be between {MIN_DEADLINE} and {most} seconds"
    return None
