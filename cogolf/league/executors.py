"""Executors: play a list of jobs with bounded parallelism, retrying infrastructure failures.

An executor is just a way to make one attempt at a job (`Attempt`): locally, the
attempt is `play_match` in this process's event loop; with Ray it is a Ray task
(see `cogolf.league.ray_executor`). Everything else is shared: at most
`parallel` attempts in flight, one retry after a failure of the infrastructure
(an exception, or a replay that is incomplete or ended in a harness fault), then
the match is void. Outcomes are returned keyed and sorted by match id, so the
order in which matches finish never matters.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from cogolf import messages as m
from cogolf.league.jobs import MatchJob
from cogolf.league.play import play_match
from cogolf.league.records import harness_fault
from cogolf.league.resume import mismatch
from cogolf.replay import ReplayError, read_replay

ATTEMPTS = 2  # the first try and one retry

Attempt = Callable[[MatchJob, Path], Awaitable[Path]]
log = structlog.get_logger("cogolf.league")


@dataclass(frozen=True)
class Outcome:
    job: MatchJob
    result: m.MatchResult | None  # set when the match was played
    void_cause: str | None  # set when it was not, after every attempt failed
    attempts: int

    @property
    def match_id(self) -> str:
        return self.job.match_id


def judge(job: MatchJob, path: Path) -> m.MatchResult | str:
    """The result of a finished attempt, or why the attempt counts as an infrastructure failure."""
    try:
        replay = read_replay(path)
    except ReplayError as exc:
        return f"unreadable replay: {exc}"
    problem = mismatch(job, replay)
    if problem is not None:
        if replay.result is not None and replay.result.reason == "harness_fault":
            return harness_fault(replay)
        return f"replay {problem}"
    assert replay.result is not None
    return replay.result


async def play_with_retry(
    job: MatchJob,
    replays_dir: Path,
    attempt: Attempt,
    on_retry: Callable[[MatchJob], None] | None = None,
) -> Outcome:
    causes: list[str] = []
    for n in range(1, ATTEMPTS + 1):
        try:
            path = await attempt(job, replays_dir)
        except Exception as exc:  # any failure around the match is the infrastructure's
            verdict: m.MatchResult | str = f"{type(exc).__name__}: {exc}"
        else:
            verdict = judge(job, path)
        if isinstance(verdict, m.MatchResult):
            return Outcome(job, verdict, None, n)
        # info: the progress says it in one line; the void marker and bot log keep the rest
        log.info("match_attempt_failed", match_id=job.match_id, attempt=n, cause=verdict)
        causes.append(f"attempt {n}: {verdict}")
        if n < ATTEMPTS and on_retry is not None:
            on_retry(job)
    return Outcome(job, None, "; ".join(causes), ATTEMPTS)


async def run_jobs(
    jobs: Sequence[MatchJob],
    replays_dir: Path,
    *,
    attempt: Attempt = play_match,
    parallel: int,
    on_done: Callable[[Outcome], None] | None = None,
    on_retry: Callable[[MatchJob], None] | None = None,
    on_start: Callable[[MatchJob], None] | None = None,
) -> dict[str, Outcome]:
    """Play every job, at most `parallel` at a time; outcomes by match id."""
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    gate = asyncio.Semaphore(parallel)

    async def one(job: MatchJob) -> Outcome:
        async with gate:
            if on_start is not None:
                on_start(job)
            outcome = await play_with_retry(job, replays_dir, attempt, on_retry)
        if on_done is not None:
            on_done(outcome)
        return outcome

    outcomes = await asyncio.gather(*(one(job) for job in jobs))
    return {o.match_id: o for o in sorted(outcomes, key=lambda o: o.match_id)}
