"""A seat's transcript: every request and reply of one match, with tokens, latency and cost.

Written beside the match's replay (`<replays>/llm/<match_id>.seat<slot>.ndjson`),
owner-readable only, never served to anyone: the opponent sees the replay, not
this. Every string of a line passes through the redactor before the line is
written, so the key cannot reach the file even when a provider echoes it back,
encoded.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from cogolf.llm.redact import Redactor

TRANSCRIPTS_DIR = "llm"


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
        # Redacting the strings is enough: JSON's own escaping of them makes no new match,
        # as every escape it writes is one the redactor reads.
        line = json.dumps({"kind": kind, "at": round(time.time(), 3), **self.redact.value(fields)})
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
