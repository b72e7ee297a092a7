"""How deeply a JSON text nests, measured without parsing it.

Decoders recurse, so a line of ten thousand `[` can exhaust the stack of any
reader. Every JSON text from outside (a seat's frame, a journal line) is measured
here first and refused above one shared cap: what intake accepts a replay reader
can read back, and nothing deeper reaches a decoder. The measure runs at C speed
(bytes methods only): strings are cut out, brackets kept, then innermost pairs
are removed one level per pass, at most `limit` passes.
"""

from __future__ import annotations

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays/objects in one message or journal line. A test's
args may nest up to `values.MAX_DEPTH` (64) inside the few levels of its record."""

_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_AS_PARENS = bytes.maketrans(b"[{]}", b"(())")


def too_deep(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `text` nests deeper than `limit`.

    Brackets inside strings do not count. Where the brackets do not balance, only
    the unclosed ones count (the decoder reports the rest with its position).
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    # Outside strings: drop escaped backslashes, then escaped quotes; every quote
    # left opens or closes a string, so the even pieces between quotes are outside.
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(_AS_PARENS, _NOT_BRACKET)
    for _ in range(limit):
        if not brackets:
            return False
        inner = brackets.replace(b"()", b"")
        if inner == brackets:  # unbalanced: what is left never closes
            return brackets.count(b"(") > limit
        brackets = inner
    return bool(brackets) and b"()" in brackets
