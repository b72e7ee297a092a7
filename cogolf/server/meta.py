"""A hosted match's metadata file and seat tokens, the same for every live game.

The metadata file (`matches/<id>.json`) holds a match's configuration and the
hashes of its seat tokens, never the tokens themselves.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import msgspec


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_matches(stored_hash: str, token: str) -> bool:
    """Constant-time check of a presented token against its stored hash."""
    return hmac.compare_digest(stored_hash, token_hash(token))


def write_meta(path: Path, meta: msgspec.Struct) -> None:
    """Persist a hosted match's metadata atomically (a crash never leaves half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.encode(meta))
    tmp.replace(path)
