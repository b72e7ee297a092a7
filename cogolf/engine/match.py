"""The state of a match: what each seat may see, resolved holes, and the result.

A match is its configuration plus the replay records of every resolved hole;
nothing else. That is what lets a match resume from its journal: the same
records that were written are read back into the same state. Observations are
built from this state and contain only what a seat may know.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec

from cogolf import messages as m
from cogolf.deck import Spec
from cogolf.engine import rules
from cogolf.engine.hole import HoleOutcome
from cogolf.engine.intake import Accepted
from cogolf.engine.results import MATCH_HASH_SEEDS


class MatchConfig(msgspec.Struct, frozen=True, kw_only=True):
    seed: int = 0
    holes: int = rules.DEFAULT_HOLES
    hole_deadline_seconds: float = rules.HOLE_DEADLINE_SECONDS
    retry_deadline_seconds: float = rules.RETRY_DEADLINE_SECONDS
    match_deadline_seconds: float = 1800.0  # wall budget for the whole match
    names: tuple[str, str] = ("seat0", "seat1")
    # PYTHONHASHSEED of every program run for the match, so set and dict order are the
    # same when it is verified or played again; None (replays from before it was
    # recorded): the sandbox's own, which may differ from run to run.
    hash_seed: int | None = None


def hash_seed_for(seed: int) -> int:
    """The hash seed of a new match: one of `MATCH_HASH_SEEDS`, chosen by its seed, so the
    two seat orders of a pairing (one seed, two ids) run every program alike and get the
    same verdicts. A program can measure its own hash seed; that tells it two bits of a
    digest of the seed, less than its first hole's spec already says of the draw. The
    replay header records the seed used, so replays of older derivations (from the match
    id) verify as they were played."""
    digest = hashlib.sha256(b"cogolf-hash-seed\0" + str(seed).encode()).digest()
    return MATCH_HASH_SEEDS[digest[0] % len(MATCH_HASH_SEEDS)]


@dataclass(frozen=True)
class SeatPlay:
    """The final play of one seat in one hole, whoever made it."""

    accepted: Accepted
    source: str  # "seat", "fallback" or "seat_fallback" (see SubmissionRecord)
    fallback_cause: str | None
    attempts: int
    errors: tuple[str, ...] = ()
    wrong_hole: int = 0
    fallback_detail: str = ""


def seat_play(
    accepted: Accepted, attempts: int, errors: tuple[str, ...], wrong_hole: int
) -> SeatPlay:
    """What a seat sent and the intake accepted: its play, or its own marked fallback."""
    if accepted.fallback_cause is not None:
        return SeatPlay(
            accepted, "seat_fallback", accepted.fallback_cause, attempts, errors, wrong_hole,
            accepted.fallback_detail,
        )
    return SeatPlay(accepted, "seat", None, attempts, errors, wrong_hole)


@dataclass(frozen=True)
class ResolvedHole:
    hole: int
    spec_key: str
    submissions: tuple[m.SubmissionRecord, m.SubmissionRecord]
    verdicts: tuple[m.TestVerdict, ...]
    par: tuple[m.ParResult, m.ParResult]
    score: m.HoleScore

    def records(self) -> list[m.ReplayEvent]:
        return [*self.submissions, *self.verdicts, *self.par, self.score]


def build_resolved(
    hole: int,
    spec_key: str,
    plays: tuple[SeatPlay, SeatPlay],
    outcome: HoleOutcome,
    cumulative_before: tuple[int, int],
    ambiguity: str,
    at: float,
) -> ResolvedHole:
    subs = tuple(
        m.SubmissionRecord(
            hole=hole,
            slot=slot,
            source=play.source,  # type: ignore[arg-type]
            fallback_cause=play.fallback_cause,
            attempts=play.attempts,
            impl=play.accepted.impl,
            tests=[
                m.RecordedTest(name=t.name, args=t.args, expect=t.expect, why=t.why)
                for t in play.accepted.tests
            ],
            note=play.accepted.note,
            dropped_tests=play.accepted.dropped_tests,
            errors=list(play.errors),
            wrong_hole=play.wrong_hole,
            at=at,
            fallback_detail=play.fallback_detail,
        )
        for slot, play in enumerate(plays)
    )
    verdicts = tuple(
        m.TestVerdict(
            hole=hole,
            slot=shot.author,
            target_slot=1 - shot.author,
            idx=shot.idx,
            name=test.name,
            args=test.args,
            expect=test.expect,
            why=test.why,
            legal=shot.verdict.legal,
            legal_reason=shot.verdict.reason,
            outcome=shot.outcome,  # type: ignore[arg-type]
            observed=shot.observed,
        )
        for shot in outcome.shots
        for test in (plays[shot.author].accepted.tests[shot.idx],)
    )
    par = tuple(
        m.ParResult(
            hole=hole, slot=s, par_fails=outcome.par_fails[s], par_total=rules.PAR_TESTS_PER_HOLE
        )
        for s in (0, 1)
    )
    cumulative = [cumulative_before[0] + outcome.score[0], cumulative_before[1] + outcome.score[1]]
    score = m.HoleScore(
        hole=hole,
        spec_key=spec_key,
        score=list(outcome.score),
        cumulative=cumulative,
        breaches=list(outcome.breaches),
        par_fails=list(outcome.par_fails),
        illegal_tests=list(outcome.illegal),
        ambiguity=ambiguity,
    )
    return ResolvedHole(hole, spec_key, (subs[0], subs[1]), verdicts, (par[0], par[1]), score)


def resolved_from_records(records: list[m.ReplayEvent]) -> list[ResolvedHole]:
    """Rebuild resolved holes from journal events; a hole without its score is not resolved."""
    by_hole: dict[int, dict[str, Any]] = {}
    for rec in records:
        hole = getattr(rec, "hole", None)
        if hole is None:
            continue
        bucket = by_hole.setdefault(hole, {"subs": {}, "verdicts": [], "par": {}, "score": None})
        if isinstance(rec, m.SubmissionRecord):
            bucket["subs"][rec.slot] = rec
        elif isinstance(rec, m.TestVerdict):
            bucket["verdicts"].append(rec)
        elif isinstance(rec, m.ParResult):
            bucket["par"][rec.slot] = rec
        elif isinstance(rec, m.HoleScore):
            bucket["score"] = rec
    out = []
    for hole in sorted(by_hole):
        b = by_hole[hole]
        if b["score"] is None or len(b["subs"]) != 2 or len(b["par"]) != 2:
            break  # holes resolve in order; the first incomplete one ends the kept prefix
        out.append(
            ResolvedHole(
                hole,
                b["score"].spec_key,
                (b["subs"][0], b["subs"][1]),
                tuple(b["verdicts"]),
                (b["par"][0], b["par"][1]),
                b["score"],
            )
        )
    return out


@dataclass
class Match:
    match_id: str
    config: MatchConfig
    keys: list[str]  # the drawn specs, in play order
    specs: dict[str, Spec]
    resolved: list[ResolvedHole] = field(default_factory=list)

    @property
    def aliases(self) -> tuple[str, str]:
        return rules.ALIASES

    @property
    def scores(self) -> tuple[int, int]:
        if not self.resolved:
            return (0, 0)
        c = self.resolved[-1].score.cumulative
        return (c[0], c[1])

    @property
    def next_hole(self) -> int:
        """1-based number of the first unresolved hole."""
        return len(self.resolved) + 1

    @property
    def finished(self) -> bool:
        return len(self.resolved) >= len(self.keys)

    def spec_for(self, hole: int) -> Spec:
        return self.specs[self.keys[hole - 1]]

    def add(self, resolved: ResolvedHole) -> None:
        if resolved.hole != self.next_hole:
            raise ValueError(
                f"hole {resolved.hole} resolved out of order (next is {self.next_hole})"
            )
        self.resolved.append(resolved)

    # ------------------------------------------------------------ observations

    def observation(self, slot: int, retry: bool, deadline_seconds: float) -> m.Observation:
        hole = self.next_hole
        spec = self.spec_for(hole)
        scores = self.scores
        body = m.ObservationBody(
            hole=hole,
            holes=len(self.keys),
            spec=m.PublicSpecView(
                key=spec.key,
                title=spec.title,
                prompt=spec.prompt,
                signature=m.Signature(
                    function=spec.signature.function,
                    params=[m.Param(p.name, p.type) for p in spec.signature.params],
                    returns=spec.signature.returns,
                ),
                examples=[m.Example(e.args, e.expect) for e in spec.examples],
            ),
            you=m.SeatView(self.aliases[slot], slot, scores[slot]),
            opponent=m.SeatView(self.aliases[1 - slot], 1 - slot, scores[1 - slot]),
            history=[self._history(r, slot) for r in self.resolved[-rules.HISTORY_HOLES :]],
            rules=rules.RULES,
        )
        return m.Observation(
            hole=hole, deadline_seconds=deadline_seconds, retry=retry, observation=body
        )

    def _history(self, r: ResolvedHole, slot: int) -> m.HistoryEntry:
        other = 1 - slot
        mine = [v for v in r.verdicts if v.slot == slot]
        theirs = [v for v in r.verdicts if v.slot == other]
        return m.HistoryEntry(
            hole=r.hole,
            spec_key=r.spec_key,
            hole_score=r.score.score[slot],
            your_tests=[
                m.OwnTestView(v.name, v.args, v.expect, v.legal, v.legal_reason, v.outcome)
                for v in mine
            ],
            their_tests=[
                m.TheirTestView(v.name, v.args, v.expect, v.why, v.outcome, v.observed)
                for v in theirs
            ],
            their_note=r.submissions[other].note,
            your_par_fails=r.par[slot].par_fails,
            their_par_fails=r.par[other].par_fails,
            your_fallback=r.submissions[slot].source in m.FALLBACK_SOURCES,
        )

    # ------------------------------------------------------------ result

    def killer_test(self, winner: int | None) -> m.KillerTest | None:
        if winner is None:
            return None
        best: tuple[int, int, int] | None = None
        chosen: m.TestVerdict | None = None
        for r in self.resolved:
            swing = r.score.score[winner]
            for v in r.verdicts:
                if v.slot != winner or v.outcome != "breach":
                    continue
                key = (-swing, r.hole, v.idx)
                if best is None or key < best:
                    best, chosen = key, v
        if chosen is None or best is None:
            return None
        return m.KillerTest(
            hole=chosen.hole,
            slot=chosen.slot,
            idx=chosen.idx,
            name=chosen.name,
            args=chosen.args,
            expect=chosen.expect,
            why=chosen.why,
            swing=-best[0],
        )

    def result(
        self, reason: str, wall_clock_seconds: float, deck_version: str, deck_digest: str
    ) -> m.MatchResult:
        breaches = [0, 0]
        par_fails = [0, 0]
        fired = [0, 0]
        illegal = [0, 0]
        fallbacks = [0, 0]
        causes: list[Counter[str]] = [Counter(), Counter()]
        for r in self.resolved:
            for s in (0, 1):
                breaches[s] += r.score.breaches[s]
                par_fails[s] += r.score.par_fails[s]
                illegal[s] += r.score.illegal_tests[s]
                sub = r.submissions[s]
                if sub.source in m.FALLBACK_SOURCES:
                    fallbacks[s] += 1
                    causes[s][sub.fallback_cause or "unknown"] += 1
            for v in r.verdicts:
                if v.outcome != "illegal":
                    fired[v.slot] += 1
        scores = list(self.scores)
        winner = None if scores[0] == scores[1] else (0 if scores[0] > scores[1] else 1)
        return m.MatchResult(
            match_id=self.match_id,
            names=list(self.config.names),
            aliases=list(self.aliases),
            scores=scores,
            hole_scores=[list(r.score.score) for r in self.resolved],
            breaches=breaches,
            breaches_taken=[breaches[1], breaches[0]],
            par_fails=par_fails,
            tests_fired=fired,
            illegal_tests=illegal,
            holes_played=len(self.resolved),
            fallbacks=fallbacks,
            fallback_causes=[dict(sorted(c.items())) for c in causes],
            reason=reason,
            wall_clock_seconds=round(wall_clock_seconds, 3),
            seed=self.config.seed,
            deck_version=deck_version,
            deck_digest=deck_digest,
            winner=winner,
            killer_test=self.killer_test(winner),
        )
