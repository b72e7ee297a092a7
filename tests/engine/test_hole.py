"""The hole rules: the legality gate order, cross-fire, par and the zero-sum score."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogolf.engine import hole
from cogolf.engine.intake import Accepted, AcceptedTest
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus


def play(*tests: tuple) -> Accepted:
    return Accepted(
        hole=1,
        impl="",
        note="",
        tests=tuple(
            AcceptedTest(name=f"t{i}", args=a, expect=e, why="") for i, (a, e) in enumerate(tests)
        ),
    )


def ok(*vals) -> BatchResult:
    return BatchResult(
        load=LoadStatus.OK, results=[CallResult(status=CallStatus.OK, value=v) for v in vals]
    )


def test_gate_order_and_reasons():
    s0 = play(
        ({"x": 1}, 1),  # not_json: args not a list
        ([float("nan")], 1),  # not_json
        ([1, 2], 1),  # arity
        (["x" * 500], 1),  # oversize
        ([2], 4),  # legal
        ([2.0], 4),  # duplicate of the previous legal one (2 == 2.0)
        ([3], 0),  # ref_mismatch
    )
    s1 = play(([5], "boom"), ([6], 0))
    plan = hole.reference_calls([s0, s1], arity=1)
    assert plan.calls == [[[2], [2.0], [3]], [[5], [6]]]
    ref_results = {
        (0, 4): CallResult(status=CallStatus.OK, value=4),
        (0, 5): CallResult(status=CallStatus.OK, value=4.0),
        (0, 6): CallResult(status=CallStatus.OK, value=9),
        (1, 0): CallResult(status=CallStatus.ERROR, detail="ValueError"),
        (1, 1): CallResult(status=CallStatus.TIMEOUT),
    }
    refs = [
        BatchResult(
            load=LoadStatus.OK,
            results=[ref_results[k] for k in sorted(plan.index) if k[0] == slot],
        )
        for slot in (0, 1)
    ]
    verdicts = hole.judge([s0, s1], plan, refs)
    assert [v.reason for v in verdicts[0]] == [
        "not_json",
        "not_json",
        "arity",
        "oversize",
        "ok",
        "duplicate",
        "ref_mismatch",
    ]
    assert [v.reason for v in verdicts[1]] == ["ref_error", "ref_timeout"]


def test_crossfire_par_and_score():
    s0 = play(([1], 2), ([2], 4))
    s1 = play(([3], 6))
    plan = hole.reference_calls([s0, s1], 1)
    verdicts = hole.judge([s0, s1], plan, [ok(2, 4), ok(6)])
    shots = hole.shot_calls([s0, s1], verdicts)
    assert shots == [[[3]], [[1], [2]]]
    defence0 = ok(6)  # seat 0 holds seat 1's shot
    defence1 = BatchResult(
        load=LoadStatus.OK,
        results=[
            CallResult(status=CallStatus.OK, value=2),
            CallResult(status=CallStatus.ERROR, detail="KeyError"),
        ],
    )
    par = [1, 2, 3, 4]
    out = hole.score(
        [s0, s1], verdicts, (defence0, defence1), par, (ok(1, 2, 3, 4), ok(1, 2, 3, 0))
    )
    assert out.breaches == (1, 0)
    assert out.par_fails == (0, 1)
    assert out.score == (2, -2)
    assert [s.outcome for s in out.shots] == ["held", "breach", "held"]
    assert out.shots[1].observed == "raised KeyError"


def test_broken_implementation_fails_every_shot_and_par_case():
    s0 = play(([1], 2))
    s1 = play()
    verdicts = hole.judge([s0, s1], hole.reference_calls([s0, s1], 1), [ok(2), ok()])
    broken = BatchResult(
        load=LoadStatus.SYNTAX_ERROR,
        load_detail="line 1",
        results=[CallResult(status=CallStatus.NOT_RUN)],
    )
    broken_par = BatchResult(
        load=LoadStatus.SYNTAX_ERROR, results=[CallResult(status=CallStatus.NOT_RUN)] * 4
    )
    out = hole.score([s0, s1], verdicts, (ok(), broken), [1, 2, 3, 4], (ok(1, 2, 3, 4), broken_par))
    assert out.breaches == (1, 0) and out.par_fails == (0, 4)
    assert out.shots[0].observed.startswith("not run (syntax_error")


@given(
    st.lists(st.booleans(), max_size=5),
    st.lists(st.booleans(), max_size=5),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_antisymmetry_over_random_verdict_matrices(hits0, hits1, par0, par1):
    s0 = play(*[([i], i) for i in range(len(hits0))])
    s1 = play(*[([i], i) for i in range(len(hits1))])
    plan = hole.reference_calls([s0, s1], 1)
    verdicts = hole.judge([s0, s1], plan, [ok(*range(len(hits0))), ok(*range(len(hits1)))])
    # defender d answers the opponent's test i correctly unless hits say the shot lands
    d0 = ok(*[(-1 if h else i) for i, h in enumerate(hits1)])
    d1 = ok(*[(-1 if h else i) for i, h in enumerate(hits0)])
    par = [0, 1, 2, 3]
    p0 = ok(*[(-1 if f else i) for i, f in enumerate(par0)])
    p1 = ok(*[(-1 if f else i) for i, f in enumerate(par1)])
    out = hole.score([s0, s1], verdicts, (d0, d1), par, (p0, p1))
    assert out.score[0] == -out.score[1]
    assert out.breaches == (sum(hits0), sum(hits1))
    assert out.par_fails == (sum(par0), sum(par1))
    assert out.score[0] == (sum(hits0) + sum(par1)) - (sum(hits1) + sum(par0))
    swapped = hole.score([s1, s0], [verdicts[1], verdicts[0]], (d1, d0), par, (p1, p0))
    assert swapped.score == (out.score[1], out.score[0])


def batch(*statuses: CallStatus, load: LoadStatus = LoadStatus.OK) -> BatchResult:
    return BatchResult(load=load, results=[CallResult(status=st) for st in statuses])


def test_calls_after_the_one_that_ended_a_batch_are_run_again_and_joined():
    T, N, K = CallStatus.TIMEOUT, CallStatus.NOT_RUN, CallStatus.OK
    first = batch(K, T, N, N)
    assert hole.rerun_from(first) == 2
    joined = hole.join_rerun(first, 2, batch(K, K))
    assert [r.status for r in joined.results] == [K, T, K, K]
    assert hole.rerun_from(joined) is None
    # a program that never loaded ran nothing: there is nothing to run again
    assert hole.rerun_from(batch(N, N, load=LoadStatus.SYNTAX_ERROR)) is None
    # a re-run that no longer loads, or runs nothing, charges the rest as crashes and ends
    for rerun in (batch(N, N, load=LoadStatus.LOAD_TIMEOUT), batch(N, N)):
        joined = hole.join_rerun(first, 2, rerun)
        assert [r.status for r in joined.results] == [K, T, CallStatus.CRASH, CallStatus.CRASH]
        assert hole.rerun_from(joined) is None
