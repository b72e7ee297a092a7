"""How deeply a JSON text nests, measured without parsing it.

Decoders recurse, so a line of ten thousand `[` can exhaust the stack of any
reader. Every JSON text from outside (a seat's frame, a journal line) is measured
here first, iteratively, and refused above one shared cap: what intake accepts a
replay reader can read back, and nothing deeper reaches a decoder.
"""

from __future__ import annotations

import re

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays/objects in one message or journal line. A test's
args may nest up to `values.MAX_DEPTH` (64) inside the few levels of its record."""

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of `text`, or `limit + 1` as soon as it goes deeper than `limit`.

    Brackets inside strings do not count; an unterminated string counts as text
    (the decoder reports it). Malformed bracket sequences are the decoder's to report.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if data.count(b"[") + data.count(b"{") <= limit:
        return 0 if b"[" not in data and b"{" not in data else _scan(data, limit)
    return _scan(data, limit)


def _scan(data: bytes, limit: int) -> int:
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
    depth = deepest = 0
    for b in brackets:
        if b in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > limit:
                    return limit + 1
        else:
            depth -= 1
    return deepest
