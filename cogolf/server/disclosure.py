"""What the public endpoints may serve about a match, and from when.

Seats and spectators reach the same public endpoints (`GET /matches`,
`GET /matches/{id}`, `replay.ndjson`, `watch`), so whatever is served while a
match is live is known to both seats. The journal on disk stays complete (resume
and `--verify` need it); this module decides what of it may leave the server,
one policy for every endpoint:

- While a match is live, each record is cut to an allow-list of what both seats
  may know: aliases, the holes started so far, resolved holes, scores. The seed,
  the draw of later holes, hidden notes, par cases, real names and the sandbox
  description are not on it; a field or record kind nobody listed is not served.
- A hole's records other than its start are held back until the hole's score is
  written, so neither seat's submission for an open hole is ever served.
- After the end, or for the admin, everything is served, except that private
  golf tests never show more than their name and whether they passed (their
  inputs, outputs and messages stay on the server).

Records are handled as plain JSON values (dicts), as they are on the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

Record = dict[str, Any]
# An allow-list: True keeps a value whole, a mapping keeps only the keys it lists (applied
# to each item of a list), a function rewrites the value (None drops it).
Allow = bool | Mapping[str, "Allow"] | Callable[[Any], Any]

ENDED = frozenset({"finished", "failed"})


def _keys(*names: str, **nested: Allow) -> dict[str, Allow]:
    return {"kind": True, **dict.fromkeys(names, True), **nested}


def pick(value: Any, allow: Allow) -> Any:
    """`value` cut down to what `allow` lists."""
    if allow is True:
        return value
    if callable(allow):
        return allow(value)
    if not allow:
        return None
    if isinstance(value, list):
        return [pick(item, allow) for item in value]
    if isinstance(value, dict):
        return {k: pick(v, allow[k]) for k, v in value.items() if k in allow}
    return None  # a scalar where a document was expected: nothing listed applies


# ---------------------------------------------------------------- Cogolf

_COGOLF_CONFIG_LIVE = dict.fromkeys(
    ("holes", "hole_deadline_seconds", "retry_deadline_seconds", "match_deadline_seconds"), True
)
_HOLE_SCORE_LIVE = _keys(
    "hole", "spec_key", "score", "cumulative", "breaches", "par_fails", "illegal_tests"
)  # not the ambiguity note
COGOLF_LIVE: dict[str, Allow] = {
    # not the seed, the real names, the drawn keys of later holes, nor the sandbox
    "header": _keys(
        "format",
        "format_version",
        "game_version",
        "protocol",
        "match_id",
        "deck_name",
        "deck_version",
        "deck_digest",
        "aliases",
        "started_at",
        config=_COGOLF_CONFIG_LIVE,
    ),
    "hole_start": _keys("hole", "spec_key", "at"),
    "submission": _keys(
        "hole",
        "slot",
        "source",
        "fallback_cause",
        "attempts",
        "impl",
        "note",
        "dropped_tests",
        "errors",
        "wrong_hole",
        "at",
        "fallback_detail",
        tests=dict.fromkeys(("name", "args", "expect", "why"), True),
    ),
    "test_verdict": _keys(
        "hole",
        "slot",
        "target_slot",
        "idx",
        "name",
        "args",
        "expect",
        "why",
        "legal",
        "legal_reason",
        "outcome",
        "observed",
    ),
    "par_result": _keys("hole", "slot", "par_fails", "par_total"),  # counts, never the cases
    "hole_score": _HOLE_SCORE_LIVE,
    # Written only when the match ends, when nothing is hidden any more.
    "episode_end": True,
    "result": True,
}
COGOLF_STATUS_LIVE = dict.fromkeys(
    (
        "match_id",
        "status",
        "hole",
        "holes",
        "scores",
        "aliases",
        "seats_connected",
        "reason",
        "created_at",
    ),
    True,
)
COGOLF_SNAPSHOT_LIVE: dict[str, Allow] = {
    "type": True,
    **dict.fromkeys(("match_id", "status", "hole", "holes", "scores", "aliases"), True),
    "resolved": _HOLE_SCORE_LIVE,
}


# ---------------------------------------------------------------- golf

_PUBLIC_OUTCOME = dict.fromkeys(("name", "passed", "status", "detail", "got"), True)
_PRIVATE_OUTCOME = dict.fromkeys(("name", "passed", "status"), True)


def _golf_tests(tests: Any) -> Any:
    """Per-test outcomes: a private test shows its name and pass/fail, never what it
    was called with, what came back or the error text (any may carry its input)."""
    if not isinstance(tests, list):
        return []
    out = []
    for t in tests:
        public = isinstance(t, dict) and str(t.get("name", "")).startswith("public-")
        out.append(pick(t, _PUBLIC_OUTCOME if public else _PRIVATE_OUTCOME))
    return out


_HOLE_RESULT: dict[str, Allow] = {
    **dict.fromkeys(
        (
            "hole",
            "title",
            "difficulty",
            "bytes",
            "tests_passed",
            "tests_total",
            "private_passed",
            "private_total",
            "penalty",
            "score",
            "status",
            "reason",
            "detail",
            "attempt",
            "attempts",
        ),
        True,
    ),
    "tests": _golf_tests,
}
_GOLF_CONFIG_LIVE = dict.fromkeys(
    (
        "course",
        "hole_deadline_seconds",
        "retry_deadline_seconds",
        "per_test_seconds",
        "per_hole_seconds",
    ),
    True,
)
_GOLF_RESULT = _keys(
    "game",
    "match_id",
    "reason",
    "course",
    "model",
    "holes_played",
    "score",
    "result_file",
    "wall_clock_seconds",
    document={
        **dict.fromkeys(
            ("format", "model", "course", "run_id", "created", "holes_version", "totals"), True
        ),
        "holes": _HOLE_RESULT,
    },
)
_GOLF_HEADER = (
    "format",
    "format_version",
    "game",
    "match_id",
    "holes_version",
    "holes",
    "started_at",
)
GOLF_LIVE: dict[str, Allow] = {
    # the course's holes are public; the model name is the seat's real name
    "header": _keys(*_GOLF_HEADER, config=_GOLF_CONFIG_LIVE),
    "hole_start": _keys(
        "hole", "key", "at", "title", "description", "signature",
        public_tests=dict.fromkeys(("args", "expect"), True),
    ),
    "submission": _keys(
        "hole", "key", "source", "origin", "fallback_cause", "attempts_used", "errors",
        "wrong_hole", "fallback_detail",
    ),
    "hole_score": _keys("hole", "key", "total", "at", result=_HOLE_RESULT),
    "episode_end": True,
    "result": _GOLF_RESULT,
}
GOLF_FULL: dict[str, Allow] = {
    **GOLF_LIVE,
    "header": _keys(*_GOLF_HEADER, config={**_GOLF_CONFIG_LIVE, "model": True}),
}
GOLF_STATUS_LIVE = {**COGOLF_STATUS_LIVE, "game": True, "course": True}
GOLF_SNAPSHOT_LIVE: dict[str, Allow] = {
    "type": True,
    **dict.fromkeys(("match_id", "game", "status", "course", "hole", "holes", "score"), True),
    "resolved": _HOLE_RESULT,
}


# ---------------------------------------------------------------- the policy


class Hosted(Protocol):
    """What the policy reads of a hosted match (Cogolf or golf)."""

    status: str


def game_of(hosted: object) -> str:
    return getattr(hosted, "game", "cogolf")


@dataclass(frozen=True)
class View:
    """What one request may see of one match."""

    game: str  # "cogolf" or "golf"
    full: bool  # the match has ended, or the admin asks

    @classmethod
    def of(cls, hosted: Hosted, *, admin: bool) -> View:
        return cls(game_of(hosted), admin or hosted.status in ENDED)

    @property
    def raw_journal(self) -> bool:
        """Whether the journal may be served byte for byte."""
        return self.full and self.game == "cogolf"

    def record(self, rec: Any) -> Record | None:
        """One journal record as it may be served; None when it may not be served at all.
        Holding back a hole's records until it resolves is `JournalStream`'s job."""
        if not isinstance(rec, dict):
            return None
        if self.game == "golf":
            table = GOLF_FULL if self.full else GOLF_LIVE
        elif self.full:
            return rec
        else:
            table = COGOLF_LIVE
        allow = table.get(rec.get("kind"))  # type: ignore[arg-type]
        return pick(rec, allow) if allow is not None else None

    def status(self, doc: Record) -> Record:
        """A `GET /matches` entry or `GET /matches/{id}` document."""
        if self.full:
            return doc
        return pick(doc, GOLF_STATUS_LIVE if self.game == "golf" else COGOLF_STATUS_LIVE)

    def snapshot(self, snap: msgspec.Struct) -> Record:
        """The snapshot a spectator gets first."""
        doc = msgspec.to_builtins(snap)
        if self.game == "golf":
            if self.full:
                return {**doc, "resolved": pick(doc.get("resolved", []), _HOLE_RESULT)}
            return pick(doc, GOLF_SNAPSHOT_LIVE)
        return doc if self.full else pick(doc, COGOLF_SNAPSHOT_LIVE)

    def result(self, result: msgspec.Struct | None) -> Record | None:
        """A match result (the spectators' `done`); the end, so only golf's private
        tests are cut from it."""
        if result is None:
            return None
        doc = msgspec.to_builtins(result)
        return pick(doc, _GOLF_RESULT) if self.game == "golf" else doc


@dataclass
class JournalStream:
    """Journal records in order, as one viewer may see them.

    While the view is live, every record of a hole except its start waits until
    that hole's score arrives, so nothing of an open hole (a submission already
    made, say) is served; records of a hole that never resolves are never served.
    """

    view: View
    # by hole, so a hole's score releases its records without scanning every other
    # hole's (a crafted journal of many held records and many scores stays linear)
    _held: dict[Any, list[Record]] = field(default_factory=dict)

    def feed(self, rec: Record) -> list[Record]:
        if self.view.full:
            served = self.view.record(rec)
            return [served] if served is not None else []
        hole = rec.get("hole")
        kind = rec.get("kind")
        if hole is None or kind == "hole_start":
            batch = [rec]
        elif not isinstance(hole, int | float | str):
            return []  # not a hole number: nothing can ever release it
        elif kind == "hole_score":
            batch = [*self._held.pop(hole, []), rec]
        else:
            self._held.setdefault(hole, []).append(rec)
            return []
        return [s for r in batch if (s := self.view.record(r)) is not None]


_encoder = msgspec.json.Encoder()


def served_journal(data: bytes, view: View) -> bytes:
    """A journal file as `view` may see it, one JSON record per line.

    A torn last line (the match is writing it) is left out, as is a line that does
    not decode: nothing is served that the policy has not read.
    """
    stream = JournalStream(view)
    out = bytearray()
    lines = data.split(b"\n")
    for line in lines[:-1]:  # the part after the last newline is incomplete
        try:
            rec = msgspec.json.decode(line)
        except msgspec.DecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        for served in stream.feed(rec):
            out += _encoder.encode(served) + b"\n"
    return bytes(out)
