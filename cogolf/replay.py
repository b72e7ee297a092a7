"""NDJSON replays: the match journal.

A header line, then one line per event written and flushed as it happens, then a
result line. The same file serves to re-resolve every hole without the bots, to
resume a match after a crash, and to drive a viewer. Reading is defensive: a
replay file is input like any other, and a torn last line (the writer was
killed mid-write) is reported, not fatal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgspec

from cogolf import messages as m

MAX_LINE_BYTES = 4 * 1024 * 1024
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(m.ReplayRecord)


class ReplayError(ValueError):
    """A replay that cannot be read; the message names the line."""


class ReplayWriter:
    """Appends records to a replay file, one flushed line per record."""

    def __init__(self, path: Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(self.path, "ab" if append else "wb")  # noqa: SIM115
        if append:
            self._drop_torn_tail()

    def _drop_torn_tail(self) -> None:
        """A writer killed mid-line leaves a partial record; cut it so appends stay valid."""
        size = self.path.stat().st_size
        if size == 0:
            return
        with open(self.path, "rb") as f:
            data = f.read()
        end = data.rfind(b"\n") + 1
        if end != size:
            self._file.truncate(end)
            self._file.seek(end)

    def write(self, record: m.ReplayRecord) -> None:
        self._file.write(_encoder.encode(record) + b"\n")
        self._file.flush()

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()

    def __enter__(self) -> ReplayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Replay:
    path: Path
    header: m.ReplayHeader
    events: list[m.ReplayEvent] = field(default_factory=list)
    result: m.MatchResult | None = None
    torn_tail: bool = False  # the last line was cut off mid-write

    @property
    def complete(self) -> bool:
        return self.result is not None


def decode_record(line: bytes) -> m.ReplayRecord:
    return _decoder.decode(line)


def read_replay(path: Path) -> Replay:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read ({exc.strerror})") from None
    lines = data.split(b"\n")
    torn = bool(lines and lines[-1])
    if not torn:
        lines = lines[:-1]
    header: m.ReplayHeader | None = None
    replay: Replay | None = None
    for n, line in enumerate(lines, start=1):
        last = n == len(lines)
        if len(line) > MAX_LINE_BYTES:
            raise ReplayError(f"{path}:{n}: line of {len(line)} bytes exceeds {MAX_LINE_BYTES}")
        try:
            rec = decode_record(line)
        except (msgspec.DecodeError, RecursionError) as exc:
            if last and torn:
                if replay is not None:
                    replay.torn_tail = True
                break
            raise ReplayError(f"{path}:{n}: {exc}") from None
        if n == 1:
            if not isinstance(rec, m.ReplayHeader):
                raise ReplayError(f"{path}:1: the first line must be the header")
            header = rec
            replay = Replay(path, header)
            continue
        assert replay is not None
        if isinstance(rec, m.ReplayHeader):
            raise ReplayError(f"{path}:{n}: a second header")
        if replay.result is not None:
            raise ReplayError(f"{path}:{n}: a record after the result")
        if isinstance(rec, m.MatchResult):
            replay.result = rec
        else:
            replay.events.append(rec)
    if replay is None:
        raise ReplayError(f"{path}: empty replay")
    return replay


def without_wall_clock(record: Any) -> Any:
    """A record as builtins, minus the fields that differ between identical runs."""
    doc = msgspec.to_builtins(record)
    return _strip(doc)


def _strip(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k not in m.WALL_CLOCK_FIELDS}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc
