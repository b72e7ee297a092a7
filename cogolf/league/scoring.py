"""Playing a night's games scored from files: every job through its game's session.

Like the matches, every job ends as a file in the night's folder and a run is
resumable: a job whose result file exists, is signed by this runner and reads
back as a result of this night's task (the game's `kept`) is not recomputed. A
job that fails for a reason that is not the entrant's (an environment that
cannot be built, a harness error) is tried once more and then recorded as void,
never scored as a loss. Changing a submission after it was scored means deleting
its result file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import msgspec
import structlog

from cogolf.agents.runs import AgentRunner, LocalAgents
from cogolf.game import AgentSession, JobFault, NightJob, NightSession
from cogolf.league.night import Night
from cogolf.league.plan import NightPlan
from cogolf.league.proof import night_key, sign_file, unsigned_reason
from cogolf.league.results import JobVoid, result_path, void_path
from cogolf.league.sections import night_game
from cogolf.nightfiles import write_bytes

log = structlog.get_logger("cogolf.league")

TRIES = 2  # an infrastructure failure is retried once


@dataclass
class JobsRun:
    played: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    void: list[str] = field(default_factory=list)


class Jobs:
    """One session per game of the night, and the checks every game's jobs share."""

    def __init__(self, night: Night, plan: NightPlan, night_dir: Path, key: bytes,
                 agents: AgentRunner | None = None) -> None:
        self.night, self.night_dir, self.key = night, night_dir, key
        self.agents = agents or LocalAgents()
        self.sessions: dict[str, NightSession] = {
            name: night_game(name).session(p, night_dir, night.name)
            for name, p in plan.games.items()
        }

    async def prepare(self) -> None:
        for session in self.sessions.values():
            await session.prepare()

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        self.agents.close()

    def path(self, job: NightJob) -> Path:
        return result_path(self.night_dir, self.night.name, job.game, job.entrant, job.item,
                           job.attempt)

    def kept(self, job: NightJob) -> bool:
        """True when the job's result file is already a valid result of this night's task."""
        path = self.path(job)
        if not path.is_file():
            return False
        if (reason := unsigned_reason(self.key, self.night_dir, path)) is not None:
            log.warning("solo_result_rescored", job=job.label, reason=reason)
            return False  # edited, or not the runner's: scored again
        try:
            return self.sessions[job.game].kept(job, path)
        except Exception:  # unreadable or hostile: scored again, never a crash
            return False

    async def play(self, job: NightJob) -> str:
        """Play one job, write its result file and sign it; returns a one-line summary."""
        session = self.sessions[job.game]
        if job.agent is not None:
            task = cast(AgentSession, session).agent_task(job)
            summary = await self.agents(task, job.agent, self.path(job), entrant=job.entrant,
                                        attempt=job.attempt)
        else:
            summary = await session.play(job, self.path(job))
        sign_file(self.key, self.night_dir, self.path(job))
        return summary


async def _try(jobs: Jobs, job: NightJob) -> tuple[str | None, str, int]:
    """(summary, void cause, tries): summary is None when the job ended void."""
    cause = ""
    for n in range(1, TRIES + 1):
        try:
            return await jobs.play(job), "", n
        except JobFault as exc:
            cause = exc.cause
            if not exc.retry:
                return None, cause, n
        except Exception as exc:  # whatever breaks a job's harness voids it, never the night
            cause = f"{type(exc).__name__}: {exc}"
        log.warning("solo_job_failed", job=job.label, try_=n, cause=cause)
    return None, cause, TRIES


async def score_jobs(
    night: Night,
    plan: NightPlan,
    night_dir: Path,
    *,
    parallel: int,
    report: Callable[[str], None] = lambda line: None,
    key: bytes | None = None,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
    agents: AgentRunner | None = None,
) -> JobsRun:
    """Play every job of the night not already done, at most `parallel` at a time.
    Results are signed with the night's `key`; one whose signature does not check is
    played again. Agents' attempts run through `agents` (default: this machine, within
    `parallel`; a runner that bounds its own, as Ray's workers do, is not held to it);
    the runner is closed with the night's sessions."""
    out = JobsRun()
    if not plan.jobs:
        return out
    if key is None:
        key = night_key(night_dir, create=True)
        assert key is not None
    jobs = Jobs(night, plan, night_dir, key, agents)
    try:
        await jobs.prepare()
        todo = []
        for job in plan.jobs:
            if jobs.kept(job):
                out.skipped.append(job.label)
            else:
                todo.append(job)
        report(f"solo games: {len(plan.jobs)} results, {len(out.skipped)} already done")
        on_progress(len(out.skipped), len(plan.jobs))  # results done, of all (for the page)
        gate = asyncio.Semaphore(max(1, parallel))

        async def one(job: NightJob) -> None:
            # Ray bounds its attempts by its workers; the rest run here, `parallel` at once.
            async with contextlib.nullcontext() if job.agent and jobs.agents.bounded else gate:
                summary, cause, tries = await _try(jobs, job)
            marker = void_path(night_dir, job.game, job.entrant, job.item, job.attempt)
            if summary is None:
                write_bytes(marker, msgspec.json.format(msgspec.json.encode(JobVoid(
                    game=job.game, entrant=job.entrant, item=job.item, attempt=job.attempt,
                    cause=cause, attempts=tries)), indent=2) + b"\n")
                out.void.append(job.label)
                report(f"  {job.label}: void ({cause})")
            else:
                marker.unlink(missing_ok=True)
                out.played.append(job.label)
                report(f"  {job.label}: {summary}")
            on_progress(len(out.skipped) + len(out.played) + len(out.void), len(plan.jobs))

        await asyncio.gather(*(one(job) for job in todo))
    finally:
        jobs.close()
    for lst in (out.played, out.skipped, out.void):
        lst.sort()
    return out
