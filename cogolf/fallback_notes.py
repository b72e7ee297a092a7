"""A seat's first fallback, told at once in one line, with where to look next.

`cogolf play` follows the match's journal while it is written and `league run`
reads each match's journal as it finishes: the first hole a seat did not play
itself (once per seat and cause) becomes one line naming the seat, the hole, who
played the fallback, the cause and the seat's own words (or the server's last
error), and for an LLM seat its transcript. So a policy that crashes or a provider
that cannot be reached is seen on its first hole, not only in the final table.

Everything here comes from a journal a bot wrote into, so every string is cleaned
and kept on one line before it reaches a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cogolf.text import clean

MAX_WORDS = 300  # of a seat's words or an error, in one line
MAX_LINE = 1 << 20


def _one_line(value: Any, limit: int = MAX_WORDS) -> str:
    text = clean(str(value)).replace("\n", "\\n").replace("\t", "\\t")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class FallbackNotes:
    """Turns journal records into notes; each (seat name, cause) is told once."""

    def __init__(self, transcripts: Path | None = None) -> None:
        self.transcripts = transcripts  # where LLM seats keep `<match_id>.seat<slot>.ndjson`
        self.seen: set[tuple[str, str]] = set()
        self.names: list[str] = []
        self.match_id = ""

    def feed(self, record: Any) -> str | None:
        """The note a record calls for, or None."""
        if not isinstance(record, dict):
            return None
        kind = record.get("kind")
        if kind == "header":
            names, config = record.get("names"), record.get("config")
            model = config.get("model") if isinstance(config, dict) else None  # golf's one seat
            self.names = [str(n) for n in names] if isinstance(names, list) else [str(model or "")]
            self.match_id = str(record.get("match_id", ""))
            return None
        if kind != "submission":
            return None
        source = record.get("source") if "slot" in record else record.get("origin")
        if source not in ("fallback", "seat_fallback"):
            return None
        slot = record.get("slot", 0)
        slot = slot if isinstance(slot, int) and 0 <= slot < len(self.names) else 0
        name = self.names[slot] if self.names else f"seat {slot}"
        cause = _one_line(record.get("fallback_cause") or "unknown", 40)
        if (name, cause) in self.seen:
            return None
        self.seen.add((name, cause))
        if source == "seat_fallback":
            who = "its bot sent its own fallback"
            words = record.get("fallback_detail") or ""
        else:
            who = "the server played its fallback"
            errors = record.get("errors")
            words = errors[-1] if isinstance(errors, list) and errors else ""
        line = f"{_one_line(name, 80)}, hole {record.get('hole')}: {who} ({cause})"
        if words:
            line += f": {_one_line(words)}"
        transcript = self._transcript(slot)
        if transcript is not None:
            line += f"; transcript: {transcript}"
        return line

    def _transcript(self, slot: int) -> Path | None:
        if self.transcripts is None or not self.match_id:
            return None
        path = self.transcripts / f"{self.match_id}.seat{slot}.ndjson"
        return path if path.is_file() else None

    def read(self, path: Path) -> list[str]:
        """The notes of a finished journal (an unreadable line is skipped)."""
        out = []
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines: Iterable[str] = list(f)
        except OSError:
            return []
        for line in lines:
            note = self.feed(_decoded(line))
            if note is not None:
                out.append(note)
        return out


def _decoded(line: str) -> Any:
    if len(line) > MAX_LINE:
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


async def follow(
    path: Path,
    notes: FallbackNotes,
    say: Callable[[str], None],
    *,
    every: float = 0.25,
    finished: asyncio.Event | None = None,
) -> None:
    """Tell the notes of a journal while it is being written, until its result line.

    `finished` set means the writer is done: the journal is read once more at once and
    the follower ends, so a command never waits out a poll interval after its match."""
    offset, pending = 0, b""
    while True:
        last = finished is not None and finished.is_set()
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except OSError:
            chunk = b""
        offset += len(chunk)
        *complete, pending = (pending + chunk).split(b"\n")
        for raw in complete:
            record = _decoded(raw.decode("utf-8", "replace"))
            note = notes.feed(record)
            if note is not None:
                say(note)
            if isinstance(record, dict) and record.get("kind") == "result":
                return
        if last:
            return
        if len(pending) > MAX_LINE:
            pending = b""
        if finished is None:
            await asyncio.sleep(every)
        else:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(every):
                    await finished.wait()
