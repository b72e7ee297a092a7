"""A match's state to the last field: its records, their reading back, what each seat is
shown, the killer test and the result, on hand-made holes with no sandbox."""

from __future__ import annotations

import hashlib

import pytest

from cogolf import messages as m
from cogolf.deck import Example, Param, Signature, Spec
from cogolf.engine import rules
from cogolf.engine.hole import HoleOutcome, ShotRecord, Verdict
from cogolf.engine.intake import Accepted, AcceptedTest
from cogolf.engine.match import (
    Match,
    MatchConfig,
    ResolvedHole,
    SeatPlay,
    build_resolved,
    hash_seed_for,
    resolved_from_records,
    seat_play,
)
from cogolf.engine.results import MATCH_HASH_SEEDS

LEGAL = Verdict(True, "ok")
ARITY = Verdict(False, "arity", "solve takes 1 arguments, test gives 2")


def spec(key: str) -> Spec:
    return Spec(
        key=key,
        title=f"Title {key}",
        prompt=f"Prompt {key}",
        signature=Signature(function="solve", params=[Param("n", "int")], returns="int"),
        examples=[Example([1], 2), Example([3], 6)],
    )


def accepted(tag: str, n: int, **kw) -> Accepted:
    tests = tuple(AcceptedTest(f"{tag}{i}", [i], 2 * i, f"why {tag}{i}") for i in range(n))
    return Accepted(hole=1, impl=f"impl {tag}", tests=tests, note=f"note {tag}", **kw)


def test_hash_seeds_are_drawn_by_the_seeds_digest():
    assert [MATCH_HASH_SEEDS.index(hash_seed_for(s)) for s in range(12)] == [
        1, 3, 1, 1, 0, 0, 3, 2, 1, 1, 2, 2,
    ]  # fmt: skip
    digest = hashlib.sha256(b"cogolf-hash-seed\x0012").digest()
    assert hash_seed_for(12) == MATCH_HASH_SEEDS[digest[0] % 4]


def test_seat_play_marks_a_seats_own_fallback():
    own = accepted("a", 1)
    assert seat_play(own, 2, ("malformed: x",), 3) == SeatPlay(
        own, "seat", None, 2, ("malformed: x",), 3, ""
    )
    marked = accepted("b", 1, fallback_cause="gave_up", fallback_detail="too hard")
    assert seat_play(marked, 1, (), 0) == SeatPlay(
        marked, "seat_fallback", "gave_up", 1, (), 0, "too hard"
    )


def hole_of(
    n: int,
    before: tuple[int, int],
    score0: int,
    *,
    fallback: str | None = None,
    breaches: tuple[int, ...] = (1,),
) -> ResolvedHole:
    """Hole n: seat 0's tests 0-2 are legal (those in `breaches` breach, the rest hold) and
    its test 3 is illegal; seat 1 has one legal test that holds, and is played by the
    fallback when `fallback` names a cause."""
    p0 = SeatPlay(accepted(f"h{n}s0t", 4), "seat", None, 1, ("timeout: late",), 2)
    p1 = SeatPlay(accepted(f"h{n}s1t", 1), "fallback" if fallback else "seat", fallback, 2)
    if fallback == "gave_up":  # the seat's own marked fallback, in its words
        own = accepted(
            f"h{n}s1t", 1, fallback_cause="gave_up", fallback_detail="too hard", dropped_tests=2
        )
        p1 = seat_play(own, 2, (), 0)
    shots = [
        ShotRecord(0, i, LEGAL, "breach", "raised KeyError")
        if i in breaches
        else ShotRecord(0, i, LEGAL, "held", "0")
        for i in range(3)
    ]
    shots += [ShotRecord(0, 3, ARITY, "illegal", ""), ShotRecord(1, 0, LEGAL, "held", "0")]
    outcome = HoleOutcome(
        shots=tuple(shots),
        breaches=(len(breaches), 0),
        par_fails=(0, 3),
        illegal=(1, 0),
        fired=(3, 1),
        score=(score0, -score0),
    )
    return build_resolved(n, f"k{n}", (p0, p1), outcome, before, f"amb {n}", 10.0 + n)


def test_build_resolved_writes_every_record_field():
    r = hole_of(2, (5, -5), 4, fallback="timeout")
    sub0, sub1 = r.submissions
    assert sub0 == m.SubmissionRecord(
        hole=2,
        slot=0,
        source="seat",
        fallback_cause=None,
        attempts=1,
        impl="impl h2s0t",
        tests=[
            m.RecordedTest(name=f"h2s0t{i}", args=[i], expect=2 * i, why=f"why h2s0t{i}")
            for i in range(4)
        ],
        note="note h2s0t",
        dropped_tests=0,
        errors=["timeout: late"],
        wrong_hole=2,
        at=12.0,
        fallback_detail="",
    )
    assert (sub1.slot, sub1.source, sub1.fallback_cause, sub1.attempts) == (
        1,
        "fallback",
        "timeout",
        2,
    )
    assert (sub1.dropped_tests, sub1.fallback_detail) == (0, "")
    own = hole_of(2, (5, -5), 4, fallback="gave_up").submissions[1]
    assert (own.source, own.fallback_cause, own.fallback_detail) == (
        "seat_fallback",
        "gave_up",
        "too hard",
    )
    assert own.dropped_tests == 2
    assert r.verdicts[1] == m.TestVerdict(
        hole=2, slot=0, target_slot=1, idx=1, name="h2s0t1", args=[1], expect=2, why="why h2s0t1",
        legal=True, legal_reason="ok", outcome="breach", observed="raised KeyError",
    )  # fmt: skip
    assert r.verdicts[3].legal is False and r.verdicts[3].legal_reason == "arity"
    assert (r.verdicts[4].slot, r.verdicts[4].target_slot, r.verdicts[4].name) == (1, 0, "h2s1t0")
    assert r.par == (
        m.ParResult(hole=2, slot=0, par_fails=0, par_total=4),
        m.ParResult(hole=2, slot=1, par_fails=3, par_total=4),
    )
    assert r.score == m.HoleScore(
        hole=2, spec_key="k2", score=[4, -4], cumulative=[9, -9], breaches=[1, 0],
        par_fails=[0, 3], illegal_tests=[1, 0], ambiguity="amb 2",
    )  # fmt: skip
    assert r.records() == [sub0, sub1, *r.verdicts, *r.par, r.score]
    assert (r.hole, r.spec_key) == (2, "k2")


def test_records_read_back_to_the_same_holes_up_to_the_first_incomplete_one():
    h1, h2 = hole_of(1, (0, 0), 2), hole_of(2, (2, -2), -1)
    h3 = hole_of(3, (1, -1), 1)
    events: list[m.ReplayEvent] = [
        m.EpisodeEnd(reason="complete", holes_played=2),  # no hole: passed over
        m.HoleStart(hole=1, spec_key="k1", at=0.0),
        # hole 2's records first, the score before the rest, the seats in reverse order
        h2.score,
        h2.par[1],
        h2.submissions[1],
        *h2.verdicts,
        h2.par[0],
        h2.submissions[0],
        *h1.records(),
        m.EpisodeEnd(reason="complete", holes_played=2),
    ]
    assert resolved_from_records(events) == [h1, h2]
    without_score = [*h1.records(), *h2.records()[:-1], *h3.records()]
    assert resolved_from_records(without_score) == [h1]
    one_sub = [*h1.records(), *h2.records()[1:], *h3.records()]
    assert resolved_from_records(one_sub) == [h1]
    one_par = [e for e in [*h1.records(), *h2.records()] if e is not h2.par[1]]
    assert resolved_from_records(one_par) == [h1]
    assert resolved_from_records([]) == []


def a_match(n_keys: int = 6) -> Match:
    keys = [f"k{i}" for i in range(1, n_keys + 1)]
    return Match("mid", MatchConfig(seed=7, names=("alpha", "beta")), keys,
                 {k: spec(k) for k in keys})  # fmt: skip


def test_match_state_and_its_order():
    match = a_match(2)
    assert match.scores == (0, 0) and match.next_hole == 1 and not match.finished
    assert match.spec_for(2) == spec("k2") and match.aliases == ("Ash", "Basil")
    with pytest.raises(ValueError, match=r"^hole 2 resolved out of order \(next is 1\)$"):
        match.add(hole_of(2, (0, 0), 1))
    match.add(hole_of(1, (0, 0), 3))
    assert match.scores == (3, -3) and match.next_hole == 2 and not match.finished
    match.add(hole_of(2, (3, -3), -1))
    assert match.scores == (2, -2) and match.next_hole == 3 and match.finished


def test_an_observation_shows_each_seat_its_own_side_of_the_last_holes():
    match = a_match()
    before = (0, 0)
    for n, s in zip(range(1, 6), (1, 2, -3, 4, 5), strict=True):
        match.add(hole_of(n, before, s, fallback="crash" if n == 5 else None))
        before = (before[0] + s, before[1] - s)
    assert rules.HISTORY_HOLES == 4
    obs = match.observation(1, True, 12.5)
    assert (obs.hole, obs.deadline_seconds, obs.retry) == (6, 12.5, True)
    body = obs.observation
    assert body.hole == 6 and body.holes == 6 and body.rules == rules.RULES
    assert body.spec == m.PublicSpecView(
        key="k6", title="Title k6", prompt="Prompt k6",
        signature=m.Signature(function="solve", params=[m.Param("n", "int")], returns="int"),
        examples=[m.Example([1], 2), m.Example([3], 6)],
    )  # fmt: skip
    assert body.you == m.SeatView("Basil", 1, -9)
    assert body.opponent == m.SeatView("Ash", 0, 9)
    assert [h.hole for h in body.history] == [2, 3, 4, 5]
    last = body.history[-1]
    assert last == m.HistoryEntry(
        hole=5,
        spec_key="k5",
        hole_score=-5,
        your_tests=[m.OwnTestView("h5s1t0", [0], 0, True, "ok", "held")],
        their_tests=[
            m.TheirTestView("h5s0t0", [0], 0, "why h5s0t0", "held", "0"),
            m.TheirTestView("h5s0t1", [1], 2, "why h5s0t1", "breach", "raised KeyError"),
            m.TheirTestView("h5s0t2", [2], 4, "why h5s0t2", "held", "0"),
            m.TheirTestView("h5s0t3", [3], 6, "why h5s0t3", "illegal", ""),
        ],
        their_note="note h5s0t",
        your_par_fails=3,
        their_par_fails=0,
        your_fallback=True,
    )
    mine = match.observation(0, False, 40.0).observation
    assert mine.you == m.SeatView("Ash", 0, 9) and mine.opponent == m.SeatView("Basil", 1, -9)
    first = mine.history[0]
    assert (first.hole, first.hole_score, first.your_par_fails, first.their_par_fails) == (
        2,
        2,
        0,
        3,
    )
    assert [t.name for t in first.your_tests] == ["h2s0t0", "h2s0t1", "h2s0t2", "h2s0t3"]
    assert first.your_tests[3] == m.OwnTestView("h2s0t3", [3], 6, False, "arity", "illegal")
    assert first.their_tests == [m.TheirTestView("h2s1t0", [0], 0, "why h2s1t0", "held", "0")]
    assert first.their_note == "note h2s1t" and first.your_fallback is False


def test_the_killer_test_is_the_winners_breach_in_its_best_hole_then_earliest():
    match = a_match()
    match.add(hole_of(1, (0, 0), 2))
    match.add(hole_of(2, (2, -2), 5, breaches=(2, 0)))
    match.add(hole_of(3, (7, -7), 5))  # as good a swing, but later
    assert match.killer_test(None) is None
    assert match.killer_test(1) is None  # seat 1 breached nothing
    assert match.killer_test(0) == m.KillerTest(
        hole=2, slot=0, idx=0, name="h2s0t0", args=[0], expect=0, why="why h2s0t0", swing=5
    )
    # a breach in a hole lost still counts, at its (negative) swing
    lost = a_match()
    lost.add(hole_of(1, (0, 0), -2))
    lost.add(hole_of(2, (-2, 2), -1))
    killer = lost.killer_test(0)
    assert killer is not None and (killer.hole, killer.idx, killer.swing) == (2, 1, -1)


def test_the_result_sums_every_hole():
    match = a_match()
    match.add(hole_of(1, (0, 0), 3, fallback="timeout"))
    match.add(hole_of(2, (3, -3), -1, fallback=None))
    match.add(hole_of(3, (2, -2), 4, fallback="timeout"))
    r4 = hole_of(4, (6, -6), 1)
    # a fallback recorded without its cause (an older file) is counted as unknown
    sub = r4.submissions[1]
    unknown = m.SubmissionRecord(**{**{f: getattr(sub, f) for f in sub.__struct_fields__},
                                    "source": "seat_fallback", "fallback_cause": None})  # fmt: skip
    match.add(ResolvedHole(4, "k4", (r4.submissions[0], unknown), r4.verdicts, r4.par, r4.score))
    result = match.result("deadline", 12.34567, "v1", "dig")
    assert result == m.MatchResult(
        match_id="mid",
        names=["alpha", "beta"],
        aliases=["Ash", "Basil"],
        scores=[7, -7],
        hole_scores=[[3, -3], [-1, 1], [4, -4], [1, -1]],
        breaches=[4, 0],
        breaches_taken=[0, 4],
        par_fails=[0, 12],
        tests_fired=[12, 4],
        illegal_tests=[4, 0],
        holes_played=4,
        fallbacks=[0, 3],
        fallback_causes=[{}, {"timeout": 2, "unknown": 1}],
        reason="deadline",
        wall_clock_seconds=12.346,
        seed=7,
        deck_version="v1",
        deck_digest="dig",
        winner=0,
        killer_test=match.killer_test(0),
    )
    assert result.killer_test is not None and result.killer_test.hole == 3


def test_the_result_names_the_winner_or_none():
    tied = a_match()
    assert tied.result("complete", 0.0, "v", "d").winner is None
    tied.add(hole_of(1, (0, 0), 0))
    assert tied.result("complete", 0.0, "v", "d").winner is None
    lost = a_match()
    lost.add(hole_of(1, (0, 0), -2))
    result = lost.result("complete", 1.0, "v", "d")
    assert result.winner == 1 and result.killer_test is None and result.scores == [-2, 2]
