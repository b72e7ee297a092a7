"""The hole rules to the last detail: each gate's bound and words, the batches' sizes and
joins, every observed text, and a whole outcome compared field by field."""

from __future__ import annotations

import msgspec
import pytest

from cogolf.engine import hole, rules
from cogolf.engine.hole import HoleOutcome, ShotRecord, Verdict
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, Limits, LoadStatus
from tests.engine.test_hole import play

OK, ERROR, TIMEOUT, CRASH, NOT_RUN = (
    CallStatus.OK,
    CallStatus.ERROR,
    CallStatus.TIMEOUT,
    CallStatus.CRASH,
    CallStatus.NOT_RUN,
)
LEGAL = Verdict(True, "ok")


def ok(*vals) -> BatchResult:
    return BatchResult(load=LoadStatus.OK, results=[CallResult(status=OK, value=v) for v in vals])


def test_static_gate_words_order_and_bounds():
    assert hole.static_gate((1,), 1, 1) == Verdict(False, "not_json", "args must be a JSON array")
    assert hole.static_gate([float("nan")], 1, 1) == Verdict(
        False, "not_json", "args: non-finite float at $[0]"
    )
    assert hole.static_gate([1], float("inf"), 1) == Verdict(
        False, "not_json", "expect: non-finite float at $"
    )
    # arity is checked before size, args' size before expect's
    assert hole.static_gate(["x" * 500], "y" * 500, 2) == Verdict(
        False, "arity", "solve takes 2 arguments, test gives 1"
    )
    assert rules.MAX_ARGS_CHARS == rules.MAX_EXPECT_CHARS == 400
    # ["x...x"] is its string and four characters; "y...y" its string and two
    assert hole.static_gate(["x" * 396], "y" * 398, 1) is None
    assert hole.static_gate(["x" * 397], "y" * 500, 1) == Verdict(
        False, "oversize", "args exceed 400 characters"
    )
    assert hole.static_gate(["x" * 396], "y" * 399, 1) == Verdict(
        False, "oversize", "expect exceeds 400 characters"
    )


def test_reference_plan_indexes_each_seats_gated_tests():
    s0 = play(([1, 2], 0), ([1], 1), ({}, 0), ([2], 2))
    s1 = play(([3], 3), ([4], "y" * 399), ([5], float("nan")))
    plan = hole.reference_calls([s0, s1], 1)
    assert plan.calls == [[[1], [2]], [[3]]]
    assert plan.index == {(0, 1): 0, (0, 3): 1, (1, 0): 0}
    assert plan.static == {
        (0, 0): Verdict(False, "arity", "solve takes 1 arguments, test gives 2"),
        (0, 2): Verdict(False, "not_json", "args must be a JSON array"),
        # expect is gated too
        (1, 1): Verdict(False, "oversize", "expect exceeds 400 characters"),
        (1, 2): Verdict(False, "not_json", "expect: non-finite float at $"),
    }


def test_reference_batch_budgets_every_call_in_full():
    plan = hole.reference_calls([play(([1], 1), ([2], 2)), play(([3], 3))], 1)
    small = Limits(
        cpu_seconds_per_call=0.5,
        load_cpu_seconds=2.0,
        wall_seconds_per_batch=1.0,
        memory_bytes=1234,
        max_result_bytes=10,
        max_result_line_bytes=100,
    )
    calls, sized = hole.reference_batch(plan, small)
    assert calls == [[1], [2], [3]]
    # wall: the load, three calls' CPU and a second; output: four lines
    assert sized == msgspec.structs.replace(small, wall_seconds_per_batch=4.5, max_result_bytes=400)
    big = msgspec.structs.replace(small, wall_seconds_per_batch=9.0, max_result_bytes=401)
    assert hole.reference_batch(plan, big) == (calls, big)


def test_split_reference_gives_each_seat_its_slice():
    plan = hole.reference_calls([play(([1], 1), ([2], 2)), play(([3], 3))], 1)
    ref = BatchResult(
        load=LoadStatus.OK, load_detail="d", results=ok(1, 2, 3).results, wall_seconds=1.5
    )
    # the plan has a list per submission: with three, the third's slice starts after both
    three = hole.reference_calls([play(([1], 1)), play(([2], 2), ([3], 3)), play(([4], 4))], 1)
    assert [b.results for b in hole.split_reference(three, ok(1, 2, 3, 4))] == [
        ok(1).results,
        ok(2, 3).results,
        ok(4).results,
    ]
    assert hole.split_reference(plan, ref) == [
        BatchResult(
            load=LoadStatus.OK, load_detail="d", results=ok(1, 2).results, wall_seconds=1.5
        ),
        BatchResult(load=LoadStatus.OK, load_detail="d", results=ok(3).results, wall_seconds=1.5),
    ]


def test_rerun_from_is_the_first_call_not_run():
    assert (
        hole.rerun_from(BatchResult(load=LoadStatus.OK, results=[CallResult(status=NOT_RUN)])) == 0
    )
    mixed = [CallResult(status=s) for s in (OK, NOT_RUN, OK, NOT_RUN)]
    assert hole.rerun_from(BatchResult(load=LoadStatus.OK, results=mixed)) == 1
    assert hole.rerun_from(ok(1, 2)) is None


def test_join_rerun_keeps_the_answers_and_adds_the_walls():
    done = BatchResult(
        load=LoadStatus.OK,
        results=[CallResult(status=OK, value=1), CallResult(status=TIMEOUT)]
        + [CallResult(status=NOT_RUN)] * 2,
        wall_seconds=1.25,
    )
    rerun = BatchResult(load=LoadStatus.OK, results=ok(3, 4, 5).results, wall_seconds=0.5)
    assert hole.join_rerun(done, 2, rerun) == BatchResult(
        load=LoadStatus.OK, results=[*done.results[:2], *ok(3, 4).results], wall_seconds=1.75
    )


@pytest.mark.parametrize(
    ("rerun", "detail"),
    [
        (
            BatchResult(load=LoadStatus.LOAD_TIMEOUT, load_detail="cpu", wall_seconds=0.5),
            "running again in a fresh child failed: load_timeout (cpu)",
        ),
        (
            BatchResult(
                load=LoadStatus.OK,
                results=[CallResult(status=NOT_RUN, detail="gone")],
                wall_seconds=0.5,
            ),
            "running again in a fresh child failed: ok (gone)",
        ),
        (
            BatchResult(load=LoadStatus.OK, results=[], wall_seconds=0.5),
            "running again in a fresh child failed: ok",
        ),
        (
            BatchResult(load=LoadStatus.CRASH, load_detail="z" * 400, wall_seconds=0.5),
            ("running again in a fresh child failed: crash (" + "z" * 400)[:300],
        ),
    ],
    ids=["no_load", "nothing_run", "no_results", "long"],
)
def test_a_failed_rerun_charges_each_remaining_call_as_a_crash(rerun, detail):
    done = BatchResult(
        load=LoadStatus.OK,
        results=[CallResult(status=OK, value=1)] + [CallResult(status=NOT_RUN)] * 2,
        wall_seconds=1.25,
    )
    crash = CallResult(status=CRASH, detail=detail)
    assert hole.join_rerun(done, 1, rerun) == BatchResult(
        load=LoadStatus.OK, results=[done.results[0], crash, crash], wall_seconds=1.75
    )


def test_judge_reference_faults_and_duplicates():
    s0 = play(([2], 5), ([2], 4), ([2.0], 4), ([2], 4), ([3], 9))
    s1 = play(([2], 4), ({}, 1))
    plan = hole.reference_calls([s0, s1], 1)
    refs = [ok(4, 4, 4, 4, 9), ok(4)]
    assert hole.judge([s0, s1], plan, refs) == [
        [
            Verdict(False, "ref_mismatch", "the reference disagrees with expect"),
            LEGAL,  # an illegal test with the same args came first: it does not count
            Verdict(False, "duplicate", "same args as an earlier legal test"),
            Verdict(False, "duplicate", "same args as an earlier legal test"),
            LEGAL,
        ],
        [LEGAL, Verdict(False, "not_json", "args must be a JSON array")],  # per seat
    ]
    with pytest.raises(ValueError):  # one reference batch per seat
        hole.judge([s0, s1], plan, refs[:1])
    broken = BatchResult(load=LoadStatus.SYNTAX_ERROR, load_detail="line 1")
    with pytest.raises(hole.ReferenceFault, match=r"^reference did not load: syntax_error line 1$"):
        hole.judge([s0, s1], plan, [ok(4, 4, 4, 4, 9), broken])
    # a seat with nothing for the reference needs no loaded reference
    gated = play(({}, 1))
    plan = hole.reference_calls([s1, gated], 1)
    assert hole.judge([s1, gated], plan, [ok(4), broken])[1] == [
        Verdict(False, "not_json", "args must be a JSON array")
    ]


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        (CallResult(status=OK, value=[1, 2]), LEGAL),
        (
            CallResult(status=OK, value=[1, 3]),
            Verdict(False, "ref_mismatch", "the reference disagrees with expect"),
        ),
        (
            CallResult(status=TIMEOUT),
            Verdict(False, "ref_timeout", "the reference ran out of time on these args"),
        ),
        (
            CallResult(status=ERROR, value=[1, 2]),
            Verdict(False, "ref_error", "the reference failed on these args (error)"),
        ),
        (
            CallResult(status=CRASH),
            Verdict(False, "ref_error", "the reference failed on these args (crash)"),
        ),
    ],
)
def test_reference_verdicts(result, verdict):
    s0 = play(([1], [1, 2]))
    plan = hole.reference_calls([s0, play()], 1)
    ref = BatchResult(load=LoadStatus.OK, results=[result])
    assert hole.judge([s0, play()], plan, [ref, ok()]) == [[verdict], []]


def test_shot_calls_need_a_verdict_per_test():
    s0, s1 = play(([1], 1), ([2], 2)), play(([3], 3))
    bad = Verdict(False, "arity", "")
    assert hole.shot_calls([s0, s1], [[bad, LEGAL], [LEGAL]]) == [[[3]], [[2]]]
    with pytest.raises(ValueError):
        hole.shot_calls([s0, s1], [[LEGAL], [LEGAL]])


LONG = "d" * 200


@pytest.mark.parametrize(
    ("result", "batch", "text"),
    [
        (
            None,
            BatchResult(load=LoadStatus.LOAD_ERROR, load_detail="boom"),
            "not run (load_error: boom)",
        ),
        (None, BatchResult(load=LoadStatus.LOAD_ERROR), "not run (load_error)"),
        (
            None,
            BatchResult(load=LoadStatus.LOAD_ERROR, load_detail=LONG),
            ("not run (load_error: " + LONG)[:120],
        ),
        (None, ok(), "no result"),
        (CallResult(status=OK, value=[1, "a"]), ok(), '[1,"a"]'),
        (CallResult(status=ERROR, detail="Key\x1bError"), ok(), "raised KeyError"),
        (CallResult(status=ERROR), ok(), "raised an exception"),
        (CallResult(status=ERROR, detail=LONG), ok(), ("raised " + LONG)[:120]),
        (CallResult(status=TIMEOUT), ok(), "timeout"),
        (CallResult(status=CRASH, detail="killed"), ok(), "crash: killed"),
        (CallResult(status=CRASH, detail=LONG), ok(), ("crash: " + LONG)[:120]),
    ],
)
def test_observed_text(result, batch, text):
    assert hole.observed_text(result, batch) == text


def test_holds_only_a_loaded_ok_equal_answer():
    two = CallResult(status=OK, value=[2])
    assert hole.holds(two, ok(), (2,))  # expect is read as a value: a tuple is a list
    assert not hole.holds(two, BatchResult(load=LoadStatus.LOAD_ERROR), [2])
    assert not hole.holds(None, ok(), [2])
    assert not hole.holds(CallResult(status=ERROR, value=[2]), ok(), [2])
    assert not hole.holds(two, ok(), [3])


def test_par_fails_count_missing_answers():
    assert hole.count_par_fails([1, 2, 3], ok(1)) == 2
    assert hole.count_par_fails([1, 2], ok(1, 2, 0)) == 0
    assert hole.count_par_fails([1, 2, 3], ok(0, 2, 0)) == 2


def test_hole_score_each_term_in_its_place():
    assert hole.hole_score([5, 1], [2, 7]) == (9, -9)
    assert hole.hole_score([0, 3], [4, 0]) == (-7, 7)


def test_a_whole_outcome_field_by_field():
    s0 = play(({}, 0), ([1], 2), ([2], 4), ([3], 6), ([1, 2], 0))
    s1 = play(([5], 10), ([6], 12), ([7], 0))
    plan = hole.reference_calls([s0, s1], 1)
    verdicts = hole.judge([s0, s1], plan, [ok(2, 4, 6), ok(10, 12, 14)])
    mismatch = Verdict(False, "ref_mismatch", "the reference disagrees with expect")
    not_json = Verdict(False, "not_json", "args must be a JSON array")
    arity = Verdict(False, "arity", "solve takes 1 arguments, test gives 2")
    # seat 0 defends seat 1's two legal shots; seat 1 answers only two of seat 0's three
    d0 = ok(10, 0)
    d1 = ok(2, 5)
    out = hole.score([s0, s1], verdicts, (d0, d1), [1, 2], (ok(1, 2), ok(0)))
    assert out == HoleOutcome(
        shots=(
            ShotRecord(0, 0, not_json, "illegal", ""),
            ShotRecord(0, 1, LEGAL, "held", "2"),
            ShotRecord(0, 2, LEGAL, "breach", "5"),
            ShotRecord(0, 3, LEGAL, "breach", "no result"),
            ShotRecord(0, 4, arity, "illegal", ""),
            ShotRecord(1, 0, LEGAL, "held", "10"),
            ShotRecord(1, 1, LEGAL, "breach", "0"),
            ShotRecord(1, 2, mismatch, "illegal", ""),
        ),
        breaches=(2, 1),
        par_fails=(0, 2),
        illegal=(2, 1),
        fired=(3, 2),
        score=(3, -3),
    )
    with pytest.raises(ValueError):  # a verdict for every test
        hole.score([s0, s1], [verdicts[0][:4], verdicts[1]], (d0, d1), [1, 2], (ok(1, 2), ok(0)))
