"""NDJSON replays: the match journal.

A header line, then one line per event written and flushed as it happens, then a
result line. The same file serves to re-resolve every hole without the bots, to
resume a match after a crash, and to drive a viewer.

A replay file is input like any other, so every reader goes through `read_replay`:
each line is measured for nesting before it is decoded (no reader can recurse
out of stack), decoded strictly (no unknown field, exact types), and the records
must follow the journal's grammar (below), so whatever reads a `Replay` can index
slots and holes without checking. Any problem is one `ReplayError` naming the
file, the line and what is wrong. A torn last line (the writer was killed
mid-write) is reported through `torn_tail`, not raised: resume needs it.

Grammar, hole k counting from 1:
    header ( hole_start(k) submission(k,0) submission(k,1) test_verdict(k)*
             par_result(k,0) par_result(k,1) hole_score(k) )*
    [ hole_start(k) ]  [ episode_end result ]
A journal may stop anywhere (a match under way or killed); only a hole that
never resolved may stand open, and only just before `episode_end` or the end.

A journal has one writer: `ReplayWriter` creates it exclusively (never over
another match's file) and holds an exclusive lock on it while it writes, so a
second writer, in this process or another, is refused instead of appending.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgspec

from cogolf import messages as m
from cogolf.jsondepth import MAX_JSON_DEPTH, too_deep
from cogolf.matchid import is_match_id

MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_HOLES = 1000  # far above any deck; bounds what a header may claim
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(m.ReplayRecord)


class ReplayError(ValueError):
    """A replay that cannot be read or written; the message names the file and the line."""

    def __init__(self, message: str, *, line: int | None = None, problem: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.problem = problem or message

    @classmethod
    def at(cls, path: Path, line: int, problem: str) -> ReplayError:
        return cls(f"{path}:{line}: {problem}", line=line, problem=problem)


class JournalBusy(ReplayError):
    """The journal exists already, or another writer holds it."""


class ReplayWriter:
    """Appends records to a replay file, one flushed line per record.

    Without `append` the file is created and must not exist; with it an existing file
    is continued after its last whole line (a missing one is created). Either way
    the writer holds an exclusive lock until it is closed.
    """

    def __init__(self, path: Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._file: IO[bytes] = open(self.path, "ab" if append else "xb")  # noqa: SIM115
        except FileExistsError:
            raise JournalBusy(
                f"{self.path}: a journal of that name exists; a match never writes "
                "into another match's journal"
            ) from None
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            raise JournalBusy(f"{self.path}: another writer holds this journal") from None
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
            self._file.close()  # releases the lock

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
    lines: list[bytes] = field(default_factory=list)  # every complete line, header first

    @property
    def complete(self) -> bool:
        return self.result is not None


def encode_record(record: m.ReplayRecord) -> bytes:
    """The canonical line of a record (without its newline), as the writer writes it."""
    return _encoder.encode(record)


def decode_record(line: bytes) -> m.ReplayRecord:
    """One journal line, depth-capped and strict; raises ValueError saying why not."""
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"line of {len(line)} bytes exceeds {MAX_LINE_BYTES}")
    if too_deep(line):
        raise ValueError(f"nesting deeper than {MAX_JSON_DEPTH}")
    try:
        return _decoder.decode(line)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


_PAIRS: dict[type, tuple[str, ...]] = {
    m.ReplayHeader: ("names", "aliases"),
    m.HoleScore: ("score", "cumulative", "breaches", "par_fails", "illegal_tests"),
    m.MatchResult: (
        "names",
        "aliases",
        "scores",
        "breaches",
        "breaches_taken",
        "par_fails",
        "tests_fired",
        "illegal_tests",
        "fallbacks",
        "fallback_causes",
    ),
}


def _shape_problem(rec: m.ReplayRecord, holes: int) -> str:
    """What makes a record unusable for a reader that indexes by slot and hole, or ''."""
    for name in _PAIRS.get(type(rec), ()):
        if len(getattr(rec, name)) != 2:
            return f"{name} must hold one entry per seat (2)"
    if isinstance(rec, m.ReplayHeader):
        if not is_match_id(rec.match_id):
            return f"match_id {rec.match_id[:100]!r} is not a match id"
        if not 1 <= len(rec.holes) <= MAX_HOLES:
            return f"holes must list 1 to {MAX_HOLES} spec keys"
        config = rec.config
        if config.get("holes") != len(rec.holes) or config.get("seed") != rec.seed:
            return "config: holes and seed must agree with the header's draw and seed"
        if not isinstance(config.get("names"), list) or len(config["names"]) != 2:
            return "config: names must hold one entry per seat (2)"
        return ""
    hole = getattr(rec, "hole", None)
    if hole is not None and not 1 <= hole <= holes:
        return f"hole {hole} is outside 1..{holes}"
    for name in ("slot", "target_slot"):
        if getattr(rec, name, 0) not in (0, 1):
            return f"{name} {getattr(rec, name)} is not 0 or 1"
    if isinstance(rec, m.TestVerdict) and rec.target_slot != 1 - rec.slot:
        return "target_slot must be the other seat"
    if isinstance(rec, m.MatchResult):
        if rec.winner not in (None, 0, 1):
            return f"winner {rec.winner} is not 0, 1 or null"
        if rec.killer_test is not None and rec.killer_test.slot not in (0, 1):
            return f"killer_test.slot {rec.killer_test.slot} is not 0 or 1"
        if any(len(s) != 2 for s in rec.hole_scores):
            return "hole_scores must hold one pair per hole"
    if isinstance(rec, m.EpisodeEnd | m.MatchResult) and not 0 <= rec.holes_played <= holes:
        return f"holes_played {rec.holes_played} is outside 0..{holes}"
    return ""


class _Grammar:
    """The order of a journal's records (see the module docstring), one record at a time."""

    def __init__(self, holes: int) -> None:
        self.holes = holes
        self.hole = 0  # the hole whose group is open, or the last resolved one
        self.step = "between"  # between | started | sub0 | sub1 | verdicts | par0 | ended | result

    def take(self, rec: m.ReplayEvent | m.MatchResult) -> str:
        """Advance over `rec`; the reason it cannot stand here, or ''."""
        step, hole = self.step, self.hole
        if step == "result":
            return "a record after the result"
        if isinstance(rec, m.MatchResult):
            if step != "ended":
                return "the result must follow episode_end"
            self.step = "result"
            return ""
        if step == "ended":
            return f"{_kind(rec)} after episode_end (only the result may follow)"
        if isinstance(rec, m.EpisodeEnd):
            if step not in ("between", "started"):
                return f"episode_end inside hole {hole}, which is not resolved"
            self.step = "ended"
            return ""
        if isinstance(rec, m.HoleStart):
            if step != "between":
                return f"hole_start inside hole {hole}"
            if rec.hole != hole + 1:
                return f"hole_start for hole {rec.hole}; the next hole is {hole + 1}"
            self.hole, self.step = rec.hole, "started"
            return ""
        if step == "between":
            return f"{_kind(rec)} outside any hole (no hole_start before it)"
        if rec.hole != hole:
            return f"{_kind(rec)} for hole {rec.hole} inside hole {hole}"
        if isinstance(rec, m.SubmissionRecord):
            want = {"started": 0, "sub0": 1}.get(step)
            if want is None or rec.slot != want:
                return f"submission of slot {rec.slot} out of order"
            self.step = "sub0" if want == 0 else "sub1"
            return ""
        if isinstance(rec, m.TestVerdict):
            if step not in ("sub1", "verdicts"):
                return "test_verdict out of order"
            self.step = "verdicts"
            return ""
        if isinstance(rec, m.ParResult):
            want = {"sub1": 0, "verdicts": 0, "par0": 1}.get(step)
            if want is None or rec.slot != want:
                return f"par_result of slot {rec.slot} out of order"
            self.step = "par0" if want == 0 else "par1"
            return ""
        assert isinstance(rec, m.HoleScore)
        if step != "par1":
            return "hole_score before both par results"
        self.step = "between"
        return ""


def _kind(rec: Any) -> str:
    return str(type(rec).__struct_config__.tag)


def read_replay(path: Path) -> Replay:
    """A journal, checked line by line; ReplayError names the first line that is wrong."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read ({exc.strerror})") from None
    lines = data.split(b"\n")
    torn = bool(lines and lines[-1])
    if not torn:
        lines = lines[:-1]
    replay: Replay | None = None
    grammar: _Grammar | None = None
    for n, line in enumerate(lines, start=1):
        try:
            rec = decode_record(line)
        except ValueError as exc:
            if n == len(lines) and torn and replay is not None:
                replay.torn_tail = True
                break
            raise ReplayError.at(path, n, str(exc)) from None
        if replay is None:
            if not isinstance(rec, m.ReplayHeader):
                raise ReplayError.at(path, 1, "the first line must be the header")
            problem = _shape_problem(rec, 0)
            if problem:
                raise ReplayError.at(path, 1, problem)
            replay, grammar = Replay(path, rec), _Grammar(len(rec.holes))
            replay.lines.append(line)
            continue
        assert grammar is not None
        if isinstance(rec, m.ReplayHeader):
            raise ReplayError.at(path, n, "a second header")
        problem = _shape_problem(rec, grammar.holes) or grammar.take(rec)
        if problem:
            raise ReplayError.at(path, n, problem)
        if n == len(lines) and torn:
            replay.torn_tail = True  # it decoded, yet the newline never made it
            break
        replay.lines.append(line)
        if isinstance(rec, m.MatchResult):
            replay.result = rec
        else:
            replay.events.append(rec)
    if replay is None:
        raise ReplayError.at(path, 1, "empty replay (no header)")
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
