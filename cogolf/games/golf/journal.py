"""Reading a golf match journal: for resuming after a crash, for tests and viewers.

The journal is written with the project's `ReplayWriter` (one flushed line per
record). Reading is defensive: a torn last line is reported, not fatal, and
every other problem names the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from cogolf.games.golf.scoring import HoleResult
from cogolf.games.golf.wire import GolfHoleScore, GolfMatchResult, GolfRecord, GolfReplayHeader
from cogolf.jsondepth import MAX_JSON_DEPTH, too_deep

_decoder = msgspec.json.Decoder(GolfRecord)


class GolfReplayError(ValueError):
    """A golf journal that cannot be read; the message names the line."""


@dataclass
class GolfReplay:
    header: GolfReplayHeader
    events: list[msgspec.Struct] = field(default_factory=list)
    result: GolfMatchResult | None = None
    torn_tail: bool = False
    resolved_end: int = 0  # byte offset just after the last hole_score line (or the header)

    @property
    def scored(self) -> list[HoleResult]:
        return [e.result for e in self.events if isinstance(e, GolfHoleScore)]


def read_golf_replay(path: Path) -> GolfReplay:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GolfReplayError(f"{path}: cannot read ({exc.strerror})") from None
    lines = data.split(b"\n")
    torn = not data.endswith(b"\n") and bool(data)
    complete = lines[:-1]
    if not complete:
        raise GolfReplayError(f"{path}:1: no header line")
    replay: GolfReplay | None = None
    offset = 0
    for number, line in enumerate(complete, start=1):
        offset += len(line) + 1
        if too_deep(line):  # before any decoder can recurse on it
            raise GolfReplayError(f"{path}:{number}: nesting deeper than {MAX_JSON_DEPTH}")
        try:
            record = _decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise GolfReplayError(f"{path}:{number}: {exc}") from None
        if replay is None:
            if not isinstance(record, GolfReplayHeader):
                raise GolfReplayError(f"{path}:1: the first line must be the golf header")
            replay = GolfReplay(record, resolved_end=offset)
            continue
        if isinstance(record, GolfReplayHeader):
            raise GolfReplayError(f"{path}:{number}: a second header")
        if isinstance(record, GolfMatchResult):
            replay.result = record
            continue
        if isinstance(record, GolfHoleScore):
            if record.hole != len(replay.scored) + 1:
                raise GolfReplayError(
                    f"{path}:{number}: hole_score for hole {record.hole}, "
                    f"expected hole {len(replay.scored) + 1}"
                )
            replay.resolved_end = offset
        replay.events.append(record)
    assert replay is not None
    replay.torn_tail = torn
    return replay
