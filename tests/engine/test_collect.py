"""Deadlines, one retry, and the fallback: every hole ends with a play for both seats."""

from __future__ import annotations

import json

import pytest

from cogolf.engine.collect import Acknowledge, HoleCollector, Observe, PlayFallback, Refuse
from cogolf.engine.intake import Rejected

GOOD = json.dumps({"type": "submission", "hole": 1, "impl": "def solve(x): return x", "tests": []})


def kinds(effects):
    return [type(e).__name__ for e in effects]


def test_both_answer_in_time():
    c = HoleCollector(1, now=0.0, hole_deadline=40, retry_deadline=15)
    assert c.open() == [Observe(0, False, 40), Observe(1, False, 40)]
    assert kinds(c.receive(0, GOOD, 1.0)) == ["Acknowledge"]
    assert not c.done
    assert isinstance(c.receive(1, GOOD, 2.0)[0], Acknowledge)
    assert c.done


def test_timeout_then_retry_then_fallback():
    c = HoleCollector(1, 0.0, 40, 15)
    c.receive(1, GOOD, 1.0)
    assert c.next_deadline() == 40
    assert c.tick(39.9) == []
    assert c.tick(40.0) == [Observe(0, True, 15)]
    assert c.next_deadline() == 55
    assert c.tick(55.0) == [PlayFallback(0, "timeout")]
    assert c.done and c.seats[0].fallback_cause == "timeout"


def test_malformed_uses_an_attempt_and_the_cause_is_kept():
    c = HoleCollector(1, 0.0, 40, 15)
    effects = c.receive(0, "{", 1.0)
    assert isinstance(effects[0], Refuse) and effects[0].retry
    assert effects[1] == Observe(0, True, 15)
    effects = c.receive(0, json.dumps({"type": "submission", "hole": 1, "impl": "x" * 5000}), 2.0)
    assert isinstance(effects[0], Refuse) and not effects[0].retry
    assert effects[1] == PlayFallback(0, "malformed")


def test_oversize_from_the_transport():
    c = HoleCollector(1, 0.0, 40, 15)
    c.reject(0, Rejected("oversize", "frame too big"), 1.0)
    assert c.reject(0, Rejected("oversize", "frame too big"), 2.0)[-1] == PlayFallback(
        0, "oversize"
    )


def test_wrong_hole_is_counted_and_ignored():
    c = HoleCollector(2, 0.0, 40, 15)
    effects = c.receive(0, GOOD, 1.0)  # GOOD names hole 1
    assert isinstance(effects[0], Refuse) and effects[0].rejected.cause == "wrong_hole"
    assert c.seats[0].wrong_hole == 1 and c.seats[0].attempt == 1


def test_late_reply_after_fallback_is_ignored():
    c = HoleCollector(1, 0.0, 40, 15)
    c.tick(40.0)
    c.tick(55.0)
    effects = c.receive(0, GOOD, 56.0)
    assert isinstance(effects[0], Refuse) and effects[0].rejected.cause == "late"
    assert c.seats[0].accepted is None


def test_disconnected_seat_gets_no_retry():
    c = HoleCollector(1, 0.0, 40, 15, connected=(True, False))
    assert c.tick(40.0) == [Observe(0, True, 15), PlayFallback(1, "disconnected")]


def test_reconnect_gets_the_remaining_time():
    c = HoleCollector(1, 0.0, 40, 15)
    c.set_connected(0, False)
    c.set_connected(0, True)
    assert c.pending(0, 30.0) == Observe(0, False, 10.0)


def test_absent_seat_is_played_by_the_fallback_at_once():
    c = HoleCollector(1, 0.0, 40, 15, connected=(True, False), absent=(False, True))
    assert c.open() == [Observe(0, False, 40), PlayFallback(1, "disconnected")]
    c.receive(0, GOOD, 1.0)
    assert c.done


def test_a_seat_count_that_absent_does_not_match_is_refused():
    with pytest.raises(ValueError, match=r"^absent must have one entry per seat$"):
        HoleCollector(1, 0.0, 40, 15, connected=(True, True), absent=(False,))


def test_every_effect_names_its_seat_and_what_it_carries():
    c = HoleCollector(1, 0.0, 40, 15)
    (ack,) = c.receive(1, GOOD, 1.0)
    assert ack == Acknowledge(1, c.seats[1].accepted) and ack.accepted.hole == 1
    bad = Rejected("oversize", "frame too big")
    assert c.reject(0, bad, 2.0) == [Refuse(0, bad, True), Observe(0, True, 15)]
    # the retry is the second and last attempt: a replay records it as attempts 2
    assert c.seats[0].attempt == 2 and c.seats[0].deadline == 17.0
    assert c.pending(0, 3.0) == Observe(0, True, 14.0)
    assert c.reject(0, bad, 4.0) == [Refuse(0, bad, False), PlayFallback(0, "oversize")]
    assert c.seats[0].attempt == 2
    assert c.seats[0].errors == ["oversize: frame too big", "oversize: frame too big"]
    assert c.done and c.next_deadline() is None and c.pending(0, 5.0) is None


def test_wrong_hole_refusals_are_each_counted_and_never_offer_a_retry():
    c = HoleCollector(2, 0.0, 40, 15)
    (first,) = c.receive(1, GOOD, 1.0)  # GOOD names hole 1
    assert first == Refuse(
        1, Rejected("wrong_hole", "submission is for hole 1; hole 2 is open", 1), False
    )
    assert c.receive(1, GOOD, 2.0) == [first]
    assert c.seats[1].wrong_hole == 2 and c.seats[1].errors == [] and c.seats[1].attempt == 1


def test_late_messages_are_refused_with_why_and_counted():
    c = HoleCollector(1, 0.0, 40, 15, absent=(False, True))
    c.open()
    c.receive(0, GOOD, 1.0)
    accepted = c.seats[0].accepted
    assert c.receive(0, GOOD, 2.0) == [
        Refuse(0, Rejected("late", "hole 1: a submission was already accepted; ignored"), False)
    ]
    # what was wrong with a late message is still said, with the hole it named
    wrong = GOOD.replace('"hole": 1', '"hole": 3')
    assert c.receive(0, wrong, 3.0) == [
        Refuse(
            0,
            Rejected(
                "wrong_hole",
                "submission is for hole 3; hole 1 is open"
                " (ignored: a submission was already accepted)",
                3,
            ),
            False,
        )
    ]
    assert c.seats[0].late == 2 and c.seats[0].accepted is accepted
    assert c.seats[0].wrong_hole == 0 and c.seats[0].errors == []
    assert c.receive(1, GOOD, 4.0) == [
        Refuse(1, Rejected("late", "hole 1: the fallback was played; ignored"), False)
    ]
    assert c.reject(1, Rejected("oversize", "frame too big"), 5.0) == [
        Refuse(1, Rejected("oversize", "frame too big (ignored: the fallback was played)"), False)
    ]
    assert c.seats[1].late == 2 and c.seats[1].accepted is None


def test_a_seat_that_never_connected_is_recorded_as_disconnected():
    c = HoleCollector(1, 0.0, 40, 15, absent=(True, False))
    c.open()
    assert c.seats[0].fallback_cause == "disconnected"
    assert c.seats[0].errors == ["disconnected: the seat never connected"]
    assert c.next_deadline() == 40.0


def test_a_missed_deadline_is_recorded_and_a_reconnected_seat_gets_its_retry():
    c = HoleCollector(1, 0.0, 40, 15)
    c.set_connected(1, False)
    c.set_connected(1, True)
    assert c.seats[1].connected is True
    assert c.tick(40.0) == [Observe(0, True, 15), Observe(1, True, 15)]
    assert c.seats[0].errors == ["timeout: no submission by the deadline"]
    # past the deadline, a seat that reconnects is told no time remains
    assert c.pending(0, 60.0) == Observe(0, True, 0.0)
    assert c.tick(55.0) == [PlayFallback(0, "timeout"), PlayFallback(1, "timeout")]
    assert c.next_deadline() is None
