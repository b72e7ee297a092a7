"""The rules of one hole: the legality gate, cross-fire, par and the zero-sum score.

Pure functions over submissions and sandbox results. Resolving a hole takes three
steps, and the caller runs the sandbox in between:

1. `reference_calls` lists, per seat, the tests that pass the static gates, to be
   run against the reference (`reference_batch`), judged per seat;
2. `judge` turns the reference's answers into a legality verdict per test, and
   `shot_calls` lists, per defender, the opponent's legal tests;
3. `score` takes the defenders' answers and the par answers and returns the
   outcome of the hole.

Every batch (reference, shot, par) follows one rule: a call is charged only for
what it did itself. When a call ends its batch (a timeout, a crash, a killed
child), the calls after it were not run; `rerun_from` says where, and the caller
runs them again in a fresh child and joins the answers with `join_rerun`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from cogolf import values
from cogolf.engine import rules
from cogolf.engine.intake import Accepted
from cogolf.engine.results import BatchResult, CallResult, CallStatus, Limits, LoadStatus
from cogolf.text import clean

LEGAL = "ok"
# The legality reasons, in the order the gate checks them.
REASONS = (
    "not_json",
    "arity",
    "oversize",
    "ref_error",
    "ref_timeout",
    "ref_mismatch",
    "duplicate",
)


@dataclass(frozen=True)
class Verdict:
    legal: bool
    reason: str  # LEGAL or one of REASONS
    detail: str = ""


def static_gate(args: Any, expect: Any, arity: int) -> Verdict | None:
    """The checks that need no code to run; None when the test may go to the reference."""
    if type(args) is not list:
        return Verdict(False, "not_json", "args must be a JSON array")
    for part, value in (("args", args), ("expect", expect)):
        try:
            values.canonical(value)
        except values.NotAValue as exc:
            return Verdict(False, "not_json", f"{part}: {exc}")
    if len(args) != arity:
        return Verdict(False, "arity", f"solve takes {arity} arguments, test gives {len(args)}")
    if len(values.compact_json(args)) > rules.MAX_ARGS_CHARS:
        return Verdict(False, "oversize", f"args exceed {rules.MAX_ARGS_CHARS} characters")
    if len(values.compact_json(expect)) > rules.MAX_EXPECT_CHARS:
        return Verdict(False, "oversize", f"expect exceeds {rules.MAX_EXPECT_CHARS} characters")
    return None


@dataclass(frozen=True)
class ReferencePlan:
    calls: list[list[list[Any]]]  # per seat: the args of its tests that go to the reference
    index: dict[tuple[int, int], int]  # (slot, test idx) -> call index in that seat's batch
    static: dict[tuple[int, int], Verdict]  # tests stopped by a static gate


def reference_calls(subs: Sequence[Accepted], arity: int) -> ReferencePlan:
    calls: list[list[list[Any]]] = [[] for _ in subs]
    index: dict[tuple[int, int], int] = {}
    static: dict[tuple[int, int], Verdict] = {}
    for slot, sub in enumerate(subs):
        for idx, test in enumerate(sub.tests):
            stopped = static_gate(test.args, test.expect, arity)
            if stopped is not None:
                static[(slot, idx)] = stopped
            else:
                index[(slot, idx)] = len(calls[slot])
                calls[slot].append(test.args)
    return ReferencePlan(calls, index, static)


def reference_batch(plan: ReferencePlan, limits: Limits) -> tuple[list[list[Any]], Limits]:
    """Both seats' planned calls as one batch, and the limits it runs under.

    Nothing one seat submits may change the legality of the other seat's tests. Each
    call has its own CPU budget and is charged only for itself (`rerun_from`), and the
    batch's shared budgets are sized so no call can find them spent by earlier calls:
    wall time for the load and every call's full CPU budget (a reference never waits,
    and time spent waiting for a CPU is not charged), output for every call's longest
    line.
    """
    calls = [args for seat in plan.calls for args in seat]
    n = len(calls)
    wall = limits.load_cpu_seconds + n * limits.cpu_seconds_per_call + 1.0
    sized = msgspec.structs.replace(
        limits,
        wall_seconds_per_batch=max(limits.wall_seconds_per_batch, wall),
        max_result_bytes=max(limits.max_result_bytes, (n + 1) * limits.max_result_line_bytes),
    )
    return calls, sized


def split_reference(plan: ReferencePlan, ref: BatchResult) -> list[BatchResult]:
    """The reference batch's answers, per seat, in the order `judge` takes them."""
    out, start = [], 0
    for seat in plan.calls:
        out.append(msgspec.structs.replace(ref, results=ref.results[start : start + len(seat)]))
        start += len(seat)
    return out


def rerun_from(batch: BatchResult) -> int | None:
    """The first call a loaded batch ended before running, or None when every call ran.

    Those calls did nothing, so nothing may be charged for them: they are run again,
    from that one on, in a fresh child.
    """
    if batch.load is not LoadStatus.OK:
        return None
    for i, result in enumerate(batch.results):
        if result.status is CallStatus.NOT_RUN:
            return i
    return None


def join_rerun(done: BatchResult, start: int, rerun: BatchResult) -> BatchResult:
    """`done`'s answers before `start`, then the re-run's answers for the calls from `start`.

    A re-run that does not load (a load that only fits its budget by luck) or that
    runs nothing charges each remaining call as a crash, so a re-run always ends.
    """
    results = list(done.results[:start])
    rest = len(done.results) - start
    if (
        rerun.load is LoadStatus.OK
        and rerun.results[:1]
        and rerun.results[0].status is not CallStatus.NOT_RUN
    ):
        results += rerun.results[:rest]
    else:
        why = rerun.load_detail or (rerun.results[0].detail if rerun.results else "")
        detail = f"running again in a fresh child failed: {rerun.load}" + (
            f" ({why})" if why else ""
        )
        results += [CallResult(status=CallStatus.CRASH, detail=detail[:300])] * rest
    return BatchResult(
        load=LoadStatus.OK, results=results, wall_seconds=done.wall_seconds + rerun.wall_seconds
    )


class ReferenceFault(RuntimeError):
    """The reference itself could not run: a deck or harness problem, never a seat's fault."""


def judge(
    subs: Sequence[Accepted], plan: ReferencePlan, refs: Sequence[BatchResult]
) -> list[list[Verdict]]:
    """Legality per test; `refs[s]` is the reference's batch on seat s's planned calls."""
    for calls, ref in zip(plan.calls, refs, strict=True):
        if calls and ref.load is not LoadStatus.OK:
            raise ReferenceFault(f"reference did not load: {ref.load} {ref.load_detail}")
    verdicts: list[list[Verdict]] = []
    for slot, sub in enumerate(subs):
        seen: set[str] = set()
        seat: list[Verdict] = []
        for idx, test in enumerate(sub.tests):
            verdict = plan.static.get((slot, idx))
            if verdict is None:
                verdict = _reference_verdict(
                    refs[slot].results[plan.index[(slot, idx)]], test.expect
                )
            if verdict.legal:
                fp = values.fingerprint(values.canonical(test.args))
                if fp in seen:
                    verdict = Verdict(False, "duplicate", "same args as an earlier legal test")
                seen.add(fp)
            seat.append(verdict)
        verdicts.append(seat)
    return verdicts


def _reference_verdict(result: CallResult, expect: Any) -> Verdict:
    if result.status is CallStatus.TIMEOUT:
        return Verdict(False, "ref_timeout", "the reference ran out of time on these args")
    if result.status is not CallStatus.OK:
        return Verdict(False, "ref_error", f"the reference failed on these args ({result.status})")
    if not values.values_equal(result.value, values.canonical(expect)):
        return Verdict(False, "ref_mismatch", "the reference disagrees with expect")
    return Verdict(True, LEGAL)


def shot_calls(subs: Sequence[Accepted], verdicts: list[list[Verdict]]) -> list[list[list[Any]]]:
    """Per defender slot, the argument lists of the opponent's legal tests, in order."""
    out: list[list[list[Any]]] = [[], []]
    for author in (0, 1):
        out[1 - author] = [
            t.args for t, v in zip(subs[author].tests, verdicts[author], strict=True) if v.legal
        ]
    return out


def observed_text(result: CallResult | None, batch: BatchResult) -> str:
    """What the defender did on a shot, as short, sanitised text for verdicts and history."""
    return clean(_observed(result, batch))


def _observed(result: CallResult | None, batch: BatchResult) -> str:
    if batch.load is not LoadStatus.OK:
        detail = f": {batch.load_detail}" if batch.load_detail else ""
        return f"not run ({batch.load}{detail})"[:120]
    if result is None:
        return "no result"
    if result.status is CallStatus.OK:
        return values.short_text(result.value)
    if result.status is CallStatus.ERROR:
        return f"raised {result.detail or 'an exception'}"[:120]
    return f"{result.status}{': ' + result.detail if result.detail else ''}"[:120]


def holds(result: CallResult | None, batch: BatchResult, expect: Any) -> bool:
    return (
        batch.load is LoadStatus.OK
        and result is not None
        and result.status is CallStatus.OK
        and values.values_equal(result.value, values.canonical(expect))
    )


@dataclass(frozen=True)
class ShotRecord:
    author: int
    idx: int
    verdict: Verdict
    outcome: str  # held | breach | illegal
    observed: str


@dataclass(frozen=True)
class HoleOutcome:
    shots: tuple[ShotRecord, ...]  # every test of both seats, author order then idx
    breaches: tuple[int, int]  # breaches made by each seat
    par_fails: tuple[int, int]
    illegal: tuple[int, int]
    fired: tuple[int, int]
    score: tuple[int, int]


def hole_score(breaches: Sequence[int], par_fails: Sequence[int]) -> tuple[int, int]:
    s0 = (breaches[0] + par_fails[1]) - (breaches[1] + par_fails[0])
    return (s0, -s0)


def count_par_fails(par: Sequence[values.Value], batch: BatchResult) -> int:
    fails = 0
    for i, expect in enumerate(par):
        result = batch.results[i] if i < len(batch.results) else None
        if not holds(result, batch, expect):
            fails += 1
    return fails


def score(
    subs: Sequence[Accepted],
    verdicts: list[list[Verdict]],
    defences: Sequence[BatchResult],
    par_expect: Sequence[values.Value],
    par_batches: Sequence[BatchResult],
) -> HoleOutcome:
    """`defences[d]` is defender d's batch on the opponent's legal tests; `par_batches[s]`
    is seat s's batch on the par cases."""
    shots: list[ShotRecord] = []
    breaches = [0, 0]
    illegal = [0, 0]
    fired = [0, 0]
    for author in (0, 1):
        defence = defences[1 - author]
        k = 0
        for idx, (test, verdict) in enumerate(
            zip(subs[author].tests, verdicts[author], strict=True)
        ):
            if not verdict.legal:
                illegal[author] += 1
                shots.append(ShotRecord(author, idx, verdict, "illegal", ""))
                continue
            result = defence.results[k] if k < len(defence.results) else None
            k += 1
            fired[author] += 1
            held = holds(result, defence, test.expect)
            if not held:
                breaches[author] += 1
            shots.append(
                ShotRecord(
                    author,
                    idx,
                    verdict,
                    "held" if held else "breach",
                    observed_text(result, defence),
                )
            )
    par_fails = (
        count_par_fails(par_expect, par_batches[0]),
        count_par_fails(par_expect, par_batches[1]),
    )
    return HoleOutcome(
        shots=tuple(shots),
        breaches=(breaches[0], breaches[1]),
        par_fails=par_fails,
        illegal=(illegal[0], illegal[1]),
        fired=(fired[0], fired[1]),
        score=hole_score(breaches, par_fails),
    )
