"""Bot names and keys: what a key looks like, how it is stored (only its hash).

A key is 32 random bytes (URL-safe base64 behind a `cgk_` prefix), so a plain
SHA-256 is enough to store it: nothing short enough to guess hashes to it, and the
server finds a key by its hash without comparing secrets. A string that is not
shaped like a key is refused before any lookup.
"""

from __future__ import annotations

import hashlib
import re
import secrets

PREFIX = "cgk_"
KEY_PATTERN = re.compile(r"cgk_[A-Za-z0-9_-]{43}")
# A bot's name is a player's name in its matches (at most 64 characters there) and a path
# segment of its page: letters, digits, `.`, `_`, `-`, starting with a letter or digit.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def is_key(text: str) -> bool:
    return KEY_PATTERN.fullmatch(text) is not None


def name_problem(name: str) -> str | None:
    if NAME_PATTERN.fullmatch(name) is None:
        return (
            f"bot name {name[:80]!r}: 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return None
