"""A seat's transcript: every request and reply of one match, with tokens, latency and cost.

Written beside the match's replay (`<replays>/llm/<match_id>.seat<slot>.ndjson`),
owner-readable only, never served to anyone: the opponent sees the replay, not
this. Every line passes through `redact` so the key cannot reach the file even
when a provider echoes it back.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

TRANSCRIPTS_DIR = "llm"
REDACTED = "[redacted]"
SHOWN_CHARS = 300  # of a provider's message in an error or a log line
# Control characters (C0, DEL, C1) and line/paragraph separators: a provider's text
# must not start a new log line or drive the operator's terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class Redactor:
    """Removes the key (when there is one) from any text before it is written or logged."""

    def __init__(self, secret: str | None) -> None:
        # The key as written raw and as JSON escapes it (a line is JSON text).
        self.forms = {secret, json.dumps(secret)[1:-1]} if secret and len(secret) >= 4 else set()

    def __call__(self, text: str) -> str:
        for form in self.forms:
            text = text.replace(form, REDACTED)
        return text

    def shown(self, text: str) -> str:
        """`text` fit for one line of an error or a log: redacted, then escaped and cut."""
        text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], self(text))
        return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def transcript_path(directory: Path, match_id: str, slot: int) -> Path:
    return Path(directory) / f"{match_id}.seat{slot}.ndjson"


class Transcript:
    def __init__(self, path: Path, redact: Redactor) -> None:
        self.path, self.redact = Path(path), redact
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        self._file = os.fdopen(fd, "a", encoding="utf-8")

    def write(self, kind: str, **fields: Any) -> None:
        # ASCII only: no raw control or separator character of a reply reaches the file.
        line = json.dumps({"kind": kind, "at": round(time.time(), 3), **fields})
        with self._lock:
            self._file.write(self.redact(line) + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
