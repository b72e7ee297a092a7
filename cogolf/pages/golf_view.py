"""The view model of a live golf match, folded from its journal records.

Like Cogolf's (`cogolf_view`), it reads plain JSON records as the replay file and
the `watch` feed carry them. A private test never shows more than a count of
passes: the journal's public tests carry their results, private ones only a total.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cogolf.pages.fields import (
    as_dict,
    as_float,
    as_int,
    as_list,
    as_str,
    holes_count,
    str_list,
    value_text,
    visible,
)

MAX_PUBLIC = 50  # public tests shown per hole (real holes have 3)


@dataclass
class GolfTest:
    name: str
    passed: bool
    status: str
    detail: str
    got: str


@dataclass
class PublicCase:
    """A public test as the seat was told it: arguments and expected value, as text."""

    args: str
    expect: str


@dataclass
class GolfHole:
    number: int
    key: str
    title: str = ""
    difficulty: str = ""
    description: str = ""  # what the seat was told (journals from before: empty)
    signature: str = ""
    public: list[PublicCase] = field(default_factory=list)
    source: str | None = None  # None: nothing submitted (passed, or the fallback)
    fallback: bool = False  # nothing of the seat's own: the server's fallback or the seat's
    fallback_cause: str = ""
    own_fallback: bool = False  # the seat sent its own fallback, marked
    fallback_detail: str = ""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    bytes: int | None = None
    tests: list[GolfTest] = field(default_factory=list)  # public tests only
    public_passed: int = 0
    public_total: int = 0
    private_passed: int = 0
    private_total: int = 0
    score: float | None = None  # None while the hole is open
    status: str = ""  # passed | failed | missing
    reason: str = ""
    detail: str = ""
    total: float | None = None  # the course score after this hole
    deadline_at: float | None = None  # wall clock of the first deadline, while it is open

    @property
    def resolved(self) -> bool:
        return self.score is not None


@dataclass
class GolfMatch:
    match_id: str
    course: str
    model: str | None  # the seat's real name, only once the match has ended
    holes_total: int
    holes: list[GolfHole] = field(default_factory=list)
    status: str = "playing"
    reason: str = ""
    final: float | None = None
    game: str = "golf"
    hole_deadline: float = 0.0  # seconds the seat has per hole (0: not known)
    files: bool = False  # scored from an entrant's files (`golf_result`), not played live

    @property
    def ended(self) -> bool:
        return self.final is not None

    @property
    def total(self) -> float:
        if self.final is not None:
            return self.final
        done = [h.total for h in self.holes if h.total is not None]
        return done[-1] if done else 0.0

    @property
    def resolved(self) -> int:
        return sum(1 for h in self.holes if h.resolved)


class GolfBuilder:
    def __init__(self) -> None:
        self.match: GolfMatch | None = None
        self._model: str | None = None

    def header(self, rec: dict[str, Any]) -> None:
        config = as_dict(rec, "config")
        self.match = GolfMatch(
            match_id=as_str(rec, "match_id", limit=200),
            course=as_str(config, "course", limit=100) or as_str(rec, "course", limit=100),
            model=None,
            holes_total=holes_count(len(as_list(rec, "holes")) or as_int(rec, "holes")),
            hole_deadline=as_float(config, "hole_deadline_seconds"),
        )
        self._model = as_str(config, "model", limit=200) or None

    def snapshot(self, snap: dict[str, Any]) -> None:
        names = as_list(snap, "names")
        self.header(
            {
                "match_id": snap.get("match_id"),
                "course": snap.get("course"),
                "holes": snap.get("holes"),
                "config": {"model": names[0] if names else None},
            }
        )

    def _hole(self, rec: dict[str, Any]) -> GolfHole | None:
        m = self.match
        n = as_int(rec, "hole")
        if m is None or not 1 <= n <= len(m.holes):
            return None
        return m.holes[n - 1]

    def feed(self, rec: Any) -> None:
        if not isinstance(rec, dict):
            return
        kind = rec.get("kind")
        if kind == "header":
            self.header(rec)
            return
        m = self.match
        if m is None:
            return
        if kind == "hole_start":
            if as_int(rec, "hole") == len(m.holes) + 1:
                at = as_float(rec, "at")
                m.holes.append(GolfHole(
                    number=len(m.holes) + 1, key=as_str(rec, "key", limit=200),
                    deadline_at=at + m.hole_deadline if at and m.hole_deadline else None,
                    title=as_str(rec, "title", limit=200),
                    description=as_str(rec, "description", limit=4000),
                    signature=as_str(rec, "signature", limit=1000),
                    public=[
                        PublicCase(value_text(as_list(t, "args")),
                                   value_text(t.get("expect") if isinstance(t, dict) else None))
                        for t in as_list(rec, "public_tests")[:MAX_PUBLIC]
                    ],
                ))  # fmt: skip
        elif kind == "submission":
            hole = self._hole(rec)
            if hole is not None:
                src = rec.get("source")
                hole.source = as_str(rec, "source") if isinstance(src, str) else None
                hole.fallback = rec.get("origin") in ("fallback", "seat_fallback")
                hole.own_fallback = rec.get("origin") == "seat_fallback"
                hole.fallback_cause = as_str(rec, "fallback_cause", limit=200)
                hole.fallback_detail = as_str(rec, "fallback_detail", limit=1000)
                hole.attempts = as_int(rec, "attempts_used")
                hole.errors = str_list(rec, "errors", limit=500)
        elif kind == "hole_score":
            hole = self._hole(rec)
            if hole is not None:
                self._score(hole, as_dict(rec, "result"))
                hole.total = as_float(rec, "total")
        elif kind == "episode_end":
            m.status = "ended"
        elif kind == "result":
            m.final = as_float(rec, "score")
            m.reason = as_str(rec, "reason", limit=100)
            m.model = as_str(rec, "model", limit=200) or self._model
            m.status = "finished"

    @staticmethod
    def _score(hole: GolfHole, res: dict[str, Any]) -> None:
        hole.title = as_str(res, "title", limit=200) or hole.title
        hole.difficulty = as_str(res, "difficulty", limit=40)
        hole.bytes = as_int(res, "bytes")
        hole.tests = [
            GolfTest(
                name=as_str(t, "name", limit=200),
                passed=t.get("passed") is True,
                status=as_str(t, "status", limit=60),
                detail=as_str(t, "detail", limit=2000),
                got=visible(as_str(t, "got", limit=2000)),
            )
            for t in as_list(res, "tests")
            if isinstance(t, dict) and as_str(t, "name").startswith("public-")
        ]
        hole.private_passed = as_int(res, "private_passed")
        hole.private_total = as_int(res, "private_total")
        hole.public_passed = sum(1 for t in hole.tests if t.passed)
        hole.public_total = len(hole.tests)  # every public test is listed, with its result
        hole.score = as_float(res, "score")
        hole.status = as_str(res, "status", limit=40)
        hole.reason = as_str(res, "reason", limit=200)
        hole.detail = as_str(res, "detail", limit=4000)

    def build(self) -> GolfMatch | None:
        return self.match
