"""Match ids: one pattern, checked wherever an id becomes a file name.

A match id names the journal (`<id>.ndjson`) and the metadata (`<id>.json`) of a
match, so an id read from a request, a metadata file or a replay header is a
path component chosen by someone else. Every such id passes `check_match_id`
on creation, on load and on resume; generated ids carry a random part so two
matches started in the same second never share a journal.
"""

from __future__ import annotations

import re
import secrets

MAX_MATCH_ID_CHARS = 80
_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
RULE = f"letters, digits, - and _, starting with a letter or digit, at most {MAX_MATCH_ID_CHARS}"


class MatchIdError(ValueError):
    """An id that cannot name a match's files."""


def is_match_id(text: object) -> bool:
    return type(text) is str and _PATTERN.fullmatch(text) is not None


def check_match_id(text: object, where: str = "match_id") -> str:
    """`text` when it is a valid match id; otherwise MatchIdError saying why."""
    if not is_match_id(text):
        raise MatchIdError(f"{where} {str(text)[:100]!r} is not a match id ({RULE})")
    assert isinstance(text, str)
    return text


def new_match_id(prefix: str = "m") -> str:
    """A fresh id: `prefix-<12 random hex digits>`; the prefix is kept short enough to fit."""
    return check_match_id(f"{prefix[:60]}-{secrets.token_hex(6)}")
