"""Deadlines, one retry, and the fallback: every hole ends with a play for both seats."""

from __future__ import annotations

import json

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
