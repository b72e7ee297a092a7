"""Resolving one hole through the sandbox: the I/O around the pure hole rules."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from cogolf.deck import HiddenSpec, Spec
from cogolf.engine import hole as rules_hole
from cogolf.engine.intake import Accepted
from cogolf.sandbox.api import BatchResult, Limits, LoadStatus, Sandbox

EMPTY_BATCH = BatchResult(load=LoadStatus.OK, results=[])


class HarnessFault(RuntimeError):
    """The sandbox or the deck failed; the match ends with reason harness_fault."""


async def _run(
    sandbox: Sandbox,
    source: str,
    calls: Sequence[list[Any]],
    function: str,
    label: str,
    limits: Limits,
) -> BatchResult:
    if not calls:
        return EMPTY_BATCH
    batch = await sandbox.run_batch(source, calls, function=function, limits=limits, label=label)
    if batch.load is LoadStatus.HARNESS_ERROR:
        raise HarnessFault(f"sandbox could not run {label}: {batch.load_detail}")
    return batch


async def resolve_hole(
    sandbox: Sandbox,
    spec: Spec,
    hidden: HiddenSpec,
    subs: Sequence[Accepted],
    limits: Limits,
) -> rules_hole.HoleOutcome:
    fn = spec.signature.function
    plan = rules_hole.reference_calls(subs, len(spec.signature.params))
    ref = await _run(sandbox, hidden.reference, plan.calls, fn, "reference", limits)
    try:
        verdicts = rules_hole.judge(subs, plan, ref)
    except rules_hole.ReferenceFault as exc:
        raise HarnessFault(str(exc)) from exc
    shots = rules_hole.shot_calls(subs, verdicts)
    par_args = [p.args for p in hidden.par]
    # Par cases run in their own batches, so slow legal tests cannot eat their time.
    d0, d1, p0, p1 = await asyncio.gather(
        _run(sandbox, subs[0].impl, shots[0], fn, "seat0", limits),
        _run(sandbox, subs[1].impl, shots[1], fn, "seat1", limits),
        _run(sandbox, subs[0].impl, par_args, fn, "seat0-par", limits),
        _run(sandbox, subs[1].impl, par_args, fn, "seat1-par", limits),
    )
    return rules_hole.score(subs, verdicts, (d0, d1), [p.expect for p in hidden.par], (p0, p1))
