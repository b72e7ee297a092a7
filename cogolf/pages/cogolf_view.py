"""The view model of a Cogolf match, folded from its journal records.

Records arrive as plain JSON (a replay file's lines or the `watch` feed's events,
both already cut by `server.disclosure`), so a live page, a finished page and the
terminal's `--explain` read the same model. What the rules keep hidden stays
hidden here too: real names and the ambiguity note only once the match has ended
(`result` seen), par cases only as counts (the journal never holds them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cogolf.pages.chart import Chart, cumulative_chart
from cogolf.pages.fields import (
    as_dict,
    as_float,
    as_int,
    as_list,
    as_str,
    as_text,
    holes_count,
    pair,
    str_list,
    value_text,
    visible,
)

SpecLookup = Callable[[str], dict[str, Any] | None]  # a spec key -> its public spec document

DRAWN = "NO BREACH — DRAWN MATCH"


@dataclass
class Spec:
    key: str
    title: str = ""
    prompt: str = ""
    signature: str = ""
    examples: list[tuple[str, str]] = field(default_factory=list)  # (args, expect) as text


@dataclass
class Shot:
    """One test a seat fired at the other seat's implementation."""

    idx: int
    name: str
    args: str
    expect: str
    why: str
    legal: bool
    legal_reason: str  # "ok" or the first gate it failed (ref_mismatch, arity, ...)
    outcome: str  # held | breach | illegal
    observed: str  # what the defender returned, as short text

    @property
    def chip(self) -> str:
        return "legal" if self.legal else self.legal_reason or "illegal"


@dataclass
class Play:
    """One seat's submission in one hole, its shots and what par caught."""

    slot: int
    fallback: bool = False  # not the seat's own play: the server's fallback or the seat's
    fallback_cause: str = ""
    own_fallback: bool = False  # the seat sent a stand-in, marked (its bot's own fallback)
    fallback_detail: str = ""  # the seat's words on why
    attempts: int = 0
    impl: str = ""
    note: str = ""
    dropped_tests: int = 0
    errors: list[str] = field(default_factory=list)
    shots: list[Shot] = field(default_factory=list)
    par_fails: int | None = None
    par_total: int | None = None

    @property
    def breaches(self) -> int:
        return sum(1 for s in self.shots if s.outcome == "breach")

    @property
    def held(self) -> int:
        return sum(1 for s in self.shots if s.outcome == "held")

    @property
    def illegal(self) -> int:
        return sum(1 for s in self.shots if s.outcome == "illegal")


@dataclass
class Hole:
    number: int
    spec: Spec
    plays: list[Play | None] = field(default_factory=lambda: [None, None])
    score: list[int] | None = None  # None while the hole is open
    cumulative: list[int] | None = None
    ambiguity: str = ""  # shown only once the match has ended
    deadline_at: float | None = None  # wall clock of the first deadline, while it is open

    @property
    def resolved(self) -> bool:
        return self.score is not None


@dataclass
class Killer:
    hole: int
    slot: int
    idx: int
    name: str
    args: str
    expect: str
    why: str
    swing: int


@dataclass
class Endcard:
    reason: str
    winner: int | None
    scores: list[int]
    killer: Killer | None
    detail: str = ""

    @property
    def drawn_without_breach(self) -> bool:
        return self.winner is None and self.killer is None


@dataclass
class CogolfMatch:
    match_id: str
    aliases: list[str]
    names: list[str] | None  # real names, only once the match has ended
    holes_total: int
    deck: str
    holes: list[Hole] = field(default_factory=list)
    status: str = "playing"
    endcard: Endcard | None = None
    fallbacks: list[dict[str, int]] = field(default_factory=lambda: [{}, {}])
    game: str = "cogolf"
    hole_deadline: float = 0.0  # seconds a seat has per hole (0: not known)

    @property
    def ended(self) -> bool:
        return self.endcard is not None

    @property
    def scores(self) -> list[int]:
        if self.endcard is not None:
            return self.endcard.scores
        done = [h for h in self.holes if h.cumulative is not None]
        return list(done[-1].cumulative) if done and done[-1].cumulative else [0, 0]

    @property
    def resolved(self) -> int:
        return sum(1 for h in self.holes if h.resolved)

    def none_of_its_own(self, slot: int) -> bool:
        """Every resolved hole of this seat was a fallback (a 0:0 draw is then no draw)."""
        plays = [h.plays[slot] for h in self.holes if h.resolved]
        return bool(plays) and all(p is not None and p.fallback for p in plays)

    def seat(self, slot: int) -> str:
        """A seat as a spectator knows it: its alias, and its real name after the end."""
        alias = self.aliases[slot]
        if self.names:
            return f"{alias} ({self.names[slot]})"
        return alias

    @property
    def chart(self) -> Chart:
        points = [h.cumulative for h in self.holes if h.cumulative is not None]
        return cumulative_chart(points, self.holes_total, self.aliases)


def _spec(key: str, lookup: SpecLookup | None) -> Spec:
    doc = lookup(key) if lookup is not None else None
    if not isinstance(doc, dict):
        return Spec(key=key)
    sig = as_dict(doc, "signature")
    params = ", ".join(f"{as_str(p, 'name')}: {as_str(p, 'type')}" for p in as_list(sig, "params"))
    return Spec(
        key=key,
        title=as_str(doc, "title"),
        prompt=as_str(doc, "prompt"),
        signature=f"{as_str(sig, 'function')}({params}) -> {as_str(sig, 'returns')}",
        examples=[
            (
                value_text(as_list(e, "args")),
                value_text(e.get("expect") if isinstance(e, dict) else None),
            )
            for e in as_list(doc, "examples")
        ],
    )


def _shot(rec: dict[str, Any]) -> Shot:
    outcome = as_str(rec, "outcome")
    return Shot(
        idx=as_int(rec, "idx"),
        name=as_str(rec, "name", limit=200),
        args=value_text(rec.get("args")),
        expect=value_text(rec.get("expect")),
        why=as_str(rec, "why", limit=2000),
        legal=rec.get("legal") is True,
        legal_reason=as_str(rec, "legal_reason", limit=60),
        outcome=outcome if outcome in ("held", "breach", "illegal") else "illegal",
        observed=visible(as_str(rec, "observed", limit=2000)),
    )


class CogolfBuilder:
    """Folds records into a `CogolfMatch`, one at a time (a file's lines or a live feed)."""

    def __init__(self, specs: SpecLookup | None = None) -> None:
        self.specs = specs
        self.match: CogolfMatch | None = None
        self._names: list[str] | None = None  # kept aside: shown only once the match has ended

    def header(self, rec: dict[str, Any]) -> None:
        aliases = as_list(rec, "aliases")
        config = as_dict(rec, "config")
        self.match = CogolfMatch(
            match_id=as_str(rec, "match_id", limit=200),
            aliases=[clean_alias(a, i) for i, a in enumerate(([*aliases, "", ""])[:2])],
            names=None,
            holes_total=holes_count(as_int(config, "holes") or len(as_list(rec, "holes"))),
            deck=f"{as_str(rec, 'deck_name', limit=100)} {as_str(rec, 'deck_version', limit=40)}",
            hole_deadline=as_float(config, "hole_deadline_seconds"),
        )
        names = as_list(rec, "names")
        self._names = (
            [clean_alias(n, i) for i, n in enumerate(([*names, "", ""])[:2])] if names else None
        )

    def snapshot(self, snap: dict[str, Any]) -> None:
        """A spectator's first message, standing in for the header it never gets."""
        self.header(
            {
                "match_id": snap.get("match_id"),
                "aliases": snap.get("aliases"),
                "config": {"holes": snap.get("holes")},
                "names": snap.get("names"),
            }
        )

    def _hole(self, rec: dict[str, Any]) -> Hole | None:
        m = self.match
        n = as_int(rec, "hole")
        if m is None or not 1 <= n <= len(m.holes):
            return None
        return m.holes[n - 1]

    def _play(self, rec: dict[str, Any]) -> Play | None:
        hole = self._hole(rec)
        slot = as_int(rec, "slot", -1)
        if hole is None or slot not in (0, 1):
            return None
        if hole.plays[slot] is None:
            hole.plays[slot] = Play(slot=slot)
        return hole.plays[slot]

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
            n = as_int(rec, "hole")
            if n == len(m.holes) + 1:
                at = as_float(rec, "at")
                m.holes.append(
                    Hole(
                        number=n,
                        spec=_spec(as_str(rec, "spec_key", limit=200), self.specs),
                        deadline_at=at + m.hole_deadline if at and m.hole_deadline else None,
                    )
                )
        elif kind == "submission":
            play = self._play(rec)
            if play is not None:
                play.fallback = rec.get("source") in ("fallback", "seat_fallback")
                play.own_fallback = rec.get("source") == "seat_fallback"
                play.fallback_cause = as_str(rec, "fallback_cause", limit=200)
                play.fallback_detail = as_str(rec, "fallback_detail", limit=1000)
                play.attempts = as_int(rec, "attempts")
                play.impl = as_str(rec, "impl")
                play.note = as_str(rec, "note", limit=4000)
                play.dropped_tests = as_int(rec, "dropped_tests")
                play.errors = str_list(rec, "errors", limit=500)
        elif kind == "test_verdict":
            play = self._play(rec)
            if play is not None:
                play.shots.append(_shot(rec))
        elif kind == "par_result":
            play = self._play(rec)
            if play is not None:
                play.par_fails = as_int(rec, "par_fails")
                play.par_total = as_int(rec, "par_total")
        elif kind == "hole_score":
            hole = self._hole(rec)
            if hole is not None:
                hole.score = pair(rec, "score")
                hole.cumulative = pair(rec, "cumulative")
                hole.ambiguity = as_str(rec, "ambiguity", limit=4000)
        elif kind == "episode_end":
            m.status = "ended"
        elif kind == "result":
            self._result(rec)

    def _result(self, rec: dict[str, Any]) -> None:
        m = self.match
        assert m is not None
        winner = rec.get("winner")
        k = rec.get("killer_test")
        killer = None
        if isinstance(k, dict) and as_int(k, "slot", -1) in (0, 1):
            killer = Killer(
                hole=as_int(k, "hole"),
                slot=as_int(k, "slot"),
                idx=as_int(k, "idx"),
                name=as_str(k, "name", limit=200),
                args=value_text(k.get("args")),
                expect=value_text(k.get("expect")),
                why=as_str(k, "why", limit=2000),
                swing=as_int(k, "swing"),
            )
        m.endcard = Endcard(
            reason=as_str(rec, "reason", limit=100),
            winner=winner if winner in (0, 1) else None,
            scores=pair(rec, "scores"),
            killer=killer,
        )
        names = as_list(rec, "names")
        if len(names) == 2:
            m.names = [clean_alias(n, i) for i, n in enumerate(names)]
        elif self._names:
            m.names = self._names
        m.fallbacks = [
            {clean_alias(cause, 0)[:100]: n for cause, n in c.items() if isinstance(n, int)}
            if isinstance(c, dict)
            else {}
            for c in ([*as_list(rec, "fallback_causes"), {}, {}])[:2]
        ]
        m.status = "finished"

    def build(self) -> CogolfMatch | None:
        m = self.match
        if m is not None and not m.ended:
            for hole in m.holes:
                hole.ambiguity = ""  # never before the end, whatever the records held
        return m


def clean_alias(value: Any, slot: int) -> str:
    text = as_text(value, limit=120)
    return text or f"seat {slot}"
