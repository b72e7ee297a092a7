"""Reading plain JSON records defensively: every field a page shows comes from a bot
or from a file anyone may edit, so a missing or mistyped field reads as a default
instead of raising, and every value shown is bounded text."""

from __future__ import annotations

import json
from typing import Any

from cogolf.text import clean

VALUE_CHARS = 2000  # the longest rendering of one test value kept on a page


def as_int(doc: Any, key: str, default: int = 0) -> int:
    v = doc.get(key) if isinstance(doc, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def as_float(doc: Any, key: str, default: float = 0.0) -> float:
    v = doc.get(key) if isinstance(doc, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float):
        return default
    return float(v)


def as_str(doc: Any, key: str, default: str = "", limit: int = 100_000) -> str:
    v = doc.get(key) if isinstance(doc, dict) else None
    return clean(v)[:limit] if isinstance(v, str) else default


def as_list(doc: Any, key: str) -> list[Any]:
    v = doc.get(key) if isinstance(doc, dict) else None
    return v if isinstance(v, list) else []


def as_dict(doc: Any, key: str) -> dict[str, Any]:
    v = doc.get(key) if isinstance(doc, dict) else None
    return v if isinstance(v, dict) else {}


def pair(doc: Any, key: str) -> list[int]:
    """A per-seat pair of integers (scores, breaches); [0, 0] when malformed."""
    v = as_list(doc, key)
    if len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return [int(v[0]), int(v[1])]
    return [0, 0]


def value_text(value: Any, limit: int = VALUE_CHARS) -> str:
    """A test value as compact JSON, cut to `limit` characters (with an ellipsis)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        text = repr(value)
    text = clean(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
