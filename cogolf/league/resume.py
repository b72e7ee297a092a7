"""Deciding whether a scheduled match is already done.

A match is done when its replay is complete, did not end in a harness fault, its
header describes exactly this job (same id, seed, seats, holes, deadlines and
pack), and it verifies: every hole re-resolved from the recorded submissions
gives the recorded verdicts and scores (`cogolf.verify`). Anything else (no file,
a torn journal, a replay from a different night file, an edited replay) is
played again, overwriting what was there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import structlog

from cogolf import messages as m
from cogolf.deck import Deck
from cogolf.league.jobs import MatchJob
from cogolf.league.planfile import PlannedMatch, first_difference, header_fields
from cogolf.league.proof import VerifyUnavailable
from cogolf.replay import Replay, ReplayError, read_replay
from cogolf.verify import verify_replay

log = structlog.get_logger("cogolf.league")


def mismatch(job: MatchJob, replay: Replay) -> str | None:
    """Why `replay` is not a finished play of `job`, or None when it is."""
    h = replay.header
    if replay.result is None:
        return "incomplete: no result line"
    if replay.result.reason == "harness_fault":
        return "ended in a harness fault"
    # The pack's name is part of its digest, which is what the job knows of the pack.
    diff = first_difference(header_fields(h), PlannedMatch.of(job, h.deck_name).fields())
    if diff is not None:
        name, got, want = diff
        return f"header {name} is {got!r}, the night wants {want!r}"
    return None


def finished_result(job: MatchJob, replays_dir: Path) -> m.MatchResult | None:
    """The result of `job` when its replay is already a finished play of it."""
    path = Path(replays_dir) / job.replay_name
    if not path.is_file():
        return None
    try:
        replay = read_replay(path)
    except ReplayError:
        return None
    return replay.result if mismatch(job, replay) is None else None


async def verified_results(
    jobs: Sequence[MatchJob],
    replays_dir: Path,
    deck: Deck,
    *,
    sandbox_mode: str,
    accept_weak_sandbox: bool,
    parallel: int,
    verify: bool = True,
) -> dict[str, m.MatchResult]:
    """Results of the jobs already done: header checked, then (unless `verify` is off) every
    hole re-resolved in the sandbox, so a replay edited after the fact is played again."""
    candidates = [
        (job, result) for job in jobs if (result := finished_result(job, replays_dir)) is not None
    ]
    if not verify or not candidates:
        return {job.match_id: result for job, result in candidates}
    # Imported here so that ranking replays never needs the sandbox package.
    from cogolf.sandbox import make_sandbox

    sandbox = make_sandbox(sandbox_mode, accept_weak=accept_weak_sandbox)
    gate = asyncio.Semaphore(max(1, parallel))
    try:
        await sandbox.start()
    except Exception as exc:  # whatever stops the sandbox stops the resume
        raise VerifyUnavailable(
            f"cannot verify the finished replays: the sandbox cannot start: {exc} "
            "(--no-verify keeps them on a header check)"
        ) from exc
    try:

        async def check(job: MatchJob) -> list[str]:
            async with gate:
                return await verify_replay(Path(replays_dir) / job.replay_name, deck, sandbox)

        verdicts = await asyncio.gather(*(check(job) for job, _ in candidates))
    finally:
        await sandbox.close()
    done = {}
    for (job, result), divergences in zip(candidates, verdicts, strict=True):
        if divergences:
            log.warning("replay_does_not_verify", match_id=job.match_id, first=divergences[0])
        else:
            done[job.match_id] = result
    return done
