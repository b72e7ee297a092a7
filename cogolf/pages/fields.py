"""Reading plain JSON records defensively: every field a page shows comes from a bot
or from a file anyone may edit, so a missing or mistyped field reads as a default
instead of raising, and every value shown is bounded text."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from cogolf.text import clean

VALUE_CHARS = 2000  # the longest rendering of one test value kept on a page
MAX_HOLES = 1000  # what a journal's reader accepts (`cogolf.replay`); a page never draws more


def as_int(doc: Any, key: str, default: int = 0) -> int:
    v = doc.get(key) if isinstance(doc, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def as_float(doc: Any, key: str, default: float = 0.0) -> float:
    v = doc.get(key) if isinstance(doc, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float):
        return default
    return float(v)


def as_text(value: Any, default: str = "", limit: int = 100_000) -> str:
    """A string as it may be shown: cleaned of control characters, with invisible ones
    (direction overrides, zero-width joiners) escaped (`visible`), at most `limit`;
    `default` for anything that is not a string."""
    return visible(clean(value))[:limit] if isinstance(value, str) else default


def as_str(doc: Any, key: str, default: str = "", limit: int = 100_000) -> str:
    """A string field as it may be shown (`as_text`)."""
    return as_text(doc.get(key) if isinstance(doc, dict) else None, default, limit)


def str_list(doc: Any, key: str, limit: int) -> list[str]:
    """A list-of-strings field as it may be shown; an item that is no string reads as ""."""
    return [as_text(item, limit=limit) for item in as_list(doc, key)]


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


# Characters that draw nothing or look like a plain space: format characters
# (zero-width joiners, direction marks), blanks other than U+0020, unassigned and
# private-use code points, and the fillers that render empty.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"})
_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")


def _shown(c: str) -> str:
    if c in " \n\t" or (c.isascii() and c.isprintable()):
        return c  # line breaks and tabs are the layout of a source or a message
    if unicodedata.category(c) in _HIDDEN_CATEGORIES or c in _FILLERS:
        code = ord(c)
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return c


def visible(text: str) -> str:
    """`text` with every invisible or non-space blank character written as an escape,
    so that two values that differ only there (a no-break or an em space, a zero-width
    joiner) never look the same on a page, and no direction override (U+202E) can make
    text read backwards or reorder what follows it. Line breaks and tabs are kept."""
    return text if text.isascii() else "".join(map(_shown, text))


def one_line(text: str) -> str:
    """`text` (already `visible`) on one line: a line break or a tab inside a bot's
    string is written as `\\n` or `\\t`, so it cannot start a line of its own (in the
    terminal's `--explain`, a forged verdict)."""
    return text.replace("\n", "\\n").replace("\t", "\\t")


def holes_count(declared: int) -> int:
    """The holes a page draws a timeline for: what the header declares, within bounds."""
    return max(0, min(declared, MAX_HOLES))


def value_text(value: Any, limit: int = VALUE_CHARS) -> str:
    """A test value as compact JSON with invisible characters escaped (`visible`), cut to
    `limit` characters (with an ellipsis)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        text = repr(value)
    text = visible(clean(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"
