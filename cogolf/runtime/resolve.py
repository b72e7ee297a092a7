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


async def _once(
    sandbox: Sandbox,
    source: str,
    calls: Sequence[list[Any]],
    function: str,
    label: str,
    limits: Limits,
    hash_seed: int | None,
    trusted: bool,
) -> BatchResult:
    batch = await sandbox.run_batch(
        source, calls, function=function, limits=limits, label=label, hash_seed=hash_seed,
        trusted=trusted,
    )
    if batch.load is LoadStatus.HARNESS_ERROR:
        raise HarnessFault(f"sandbox could not run {label}: {batch.load_detail}")
    return batch


async def run_calls(
    sandbox: Sandbox,
    source: str,
    calls: Sequence[list[Any]],
    function: str,
    label: str,
    limits: Limits,
    hash_seed: int | None = None,
    *,
    trusted: bool = False,
) -> BatchResult:
    """One result per call, each charged only for what that call did: the calls a
    batch ended before running are run again in a fresh child (`hole.rerun_from`).
    `trusted`: our own pure code (see `Sandbox.run_batch`)."""
    if not calls:
        return EMPTY_BATCH
    batch = await _once(sandbox, source, calls, function, label, limits, hash_seed, trusted)
    while (start := rules_hole.rerun_from(batch)) is not None:
        rerun = await _once(
            sandbox, source, calls[start:], function, f"{label}@{start}", limits, hash_seed,
            trusted,
        )
        batch = rules_hole.join_rerun(batch, start, rerun)
    return batch


async def resolve_hole(
    sandbox: Sandbox,
    spec: Spec,
    hidden: HiddenSpec,
    subs: Sequence[Accepted],
    limits: Limits,
    hash_seed: int | None = None,
) -> rules_hole.HoleOutcome:
    """`hash_seed` fixes string hashing in every child of the hole (None: the sandbox's)."""
    fn = spec.signature.function
    plan = rules_hole.reference_calls(subs, len(spec.signature.params))
    ref_calls, ref_limits = rules_hole.reference_batch(plan, limits)
    par_args = [p.args for p in hidden.par]
    # Par cases need no verdict, so they run beside the reference, in batches of their
    # own: slow legal tests cannot eat their time.
    ref, p0, p1 = await asyncio.gather(
        run_calls(sandbox, hidden.reference, ref_calls, fn, "reference", ref_limits, hash_seed,
                  trusted=True),
        run_calls(sandbox, subs[0].impl, par_args, fn, "seat0-par", limits, hash_seed),
        run_calls(sandbox, subs[1].impl, par_args, fn, "seat1-par", limits, hash_seed),
    )
    try:
        verdicts = rules_hole.judge(subs, plan, rules_hole.split_reference(plan, ref))
    except rules_hole.ReferenceFault as exc:
        raise HarnessFault(str(exc)) from exc
    shots = rules_hole.shot_calls(subs, verdicts)
    d0, d1 = await asyncio.gather(
        run_calls(sandbox, subs[0].impl, shots[0], fn, "seat0", limits, hash_seed),
        run_calls(sandbox, subs[1].impl, shots[1], fn, "seat1", limits, hash_seed),
    )
    return rules_hole.score(subs, verdicts, (d0, d1), [p.expect for p in hidden.par], (p0, p1))
