"""Sanitising and truncating the strings that bots send us.

Every string that is stored in a replay or sent to another seat passes through
`clean`, so that every line we write is strict UTF-8 and no bot can smuggle
terminal control sequences into a scorecard.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls except \t and \n, DEL, and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Lone surrogates become U+FFFD; control characters other than \\n and \\t are dropped."""
    return _CONTROL.sub("", _SURROGATE.sub("\ufffd", text))


def clip(text: str, limit: int) -> str:
    """Clean, then keep at most `limit` code points."""
    return clean(text)[:limit]
