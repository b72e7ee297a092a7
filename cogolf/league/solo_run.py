"""Playing a night's solo games: golf courses scored, Commit-0 tasks scored, project attempts run.

Like the matches, every job ends as a file in the night's folder and a run is
resumable: a job whose result file exists, reads back and belongs to this
night's task (same entrant and item, same hole set, same reference ids, same
scale) is kept and not recomputed. A job that fails for a reason that is not the
entrant's (an environment that cannot be built, a harness error) is tried once
more and then recorded as void, never scored as a loss. Changing a submission
after it was scored means deleting its result file.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import structlog

from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.results import ResultError as Commit0ResultError
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import Commit0Task
from cogolf.games.commit0.task import TaskError as Commit0TaskError
from cogolf.games.commit0.task import load_task as load_commit0_task
from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import HoleSet, load_holes
from cogolf.games.golf.play import SubmissionError, read_submissions, score_course
from cogolf.games.golf.results import ResultError, new_result, write_result
from cogolf.games.golf.runners.base import Runner
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.results import ResultError as ProjectResultError
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import ProjectTask
from cogolf.league.night import Night
from cogolf.league.proof import night_key, sign_file, unsigned_reason
from cogolf.league.solo_files import (
    SoloVoid,
    read_commit0,
    read_golf,
    read_project,
    result_path,
    void_path,
)
from cogolf.league.solo_plan import TASKS_DIR, SoloJob, SoloPlan

log = structlog.get_logger("cogolf.league")

TRIES = 2  # an infrastructure failure is retried once


class JobFault(Exception):
    """A job that could not be played; `retry` is False when trying again cannot help."""

    def __init__(self, cause: str, *, retry: bool = True) -> None:
        super().__init__(cause)
        self.cause, self.retry = cause, retry


@dataclass
class SoloRun:
    played: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    void: list[str] = field(default_factory=list)


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _write_json(path: Path, value: dict[str, Any]) -> None:
    _write_bytes(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode())


class SoloContext:
    """What the jobs of one night share: the hole set, one runner per course, loaded tasks."""

    def __init__(self, night: Night, plan: SoloPlan, night_dir: Path, key: bytes) -> None:
        self.night, self.plan, self.night_dir, self.key = night, plan, night_dir, key
        self.holes: HoleSet | None = load_holes() if plan.golf_courses else None
        self.runners: dict[str, Runner] = {
            c: get_course(c).runner(plan.golf_limits) for c in plan.golf_courses
        }
        self.commit0: dict[str, Commit0Task | str] = {}  # task, or why it could not be prepared
        self.project: dict[str, ProjectTask] = {t.name: t for t in plan.project}

    def close(self) -> None:
        """Stop what the runners started (the Python course keeps a fork sandbox)."""
        for runner in self.runners.values():
            runner.close()

    def path(self, job: SoloJob) -> Path:
        return result_path(self.night_dir, self.night.name, job.game, job.entrant, job.item,
                           job.attempt)

    async def prepare_commit0(self) -> None:
        """Prepared tasks are used as they are; sources are prepared once into the night's
        folder (`tasks/commit0/<name>/`) and reused by later runs."""
        for source in self.plan.commit0:
            if source.task is not None:
                self.commit0[source.name] = source.task
                continue
            dest = self.night_dir / TASKS_DIR / "commit0" / source.name
            try:
                self.commit0[source.name] = load_commit0_task(dest)
                continue
            except Commit0TaskError:
                shutil.rmtree(dest, ignore_errors=True)
            try:
                task = await prepare(str(source.path), dest, name=source.name)
            except (SourceError, Commit0TaskError, OSError) as exc:
                log.warning("commit0_prepare_failed", task=source.name, error=str(exc))
                self.commit0[source.name] = f"cannot prepare the task: {exc}"
                shutil.rmtree(dest, ignore_errors=True)
                continue
            self.commit0[source.name] = task

    def kept(self, job: SoloJob) -> bool:
        """True when the job's result file is already a valid result of this night's task."""
        path = self.path(job)
        if not path.is_file():
            return False
        if (reason := unsigned_reason(self.key, self.night_dir, path)) is not None:
            log.warning("solo_result_rescored", job=job.label, reason=reason)
            return False  # edited, or not the runner's: scored again
        try:
            if job.game == "golf":
                doc = read_golf(path, self.night.name)
                assert self.holes is not None
                return (doc.model, doc.course, doc.holes_version, len(doc.holes)) == (
                    job.entrant, job.item, self.holes.version, len(self.holes.holes))
            if job.game == "commit0":
                record, data = read_commit0(path)
                task = self.commit0.get(job.item)
                return (isinstance(task, Commit0Task) and record.entrant == job.entrant
                        and data.get("total") == len(task.reference_ids))
            precord, pdata = read_project(path)
            ptask = self.project[job.item]
            return (precord.entrant == job.entrant and precord.attempt == job.attempt
                    and pdata.get("scale") == ptask.scale.name
                    and pdata.get("status") != AttemptStatus.HARNESS_ERROR)
        except (ResultError, Commit0ResultError, ProjectResultError):
            return False
        except Exception:  # a hostile file is scored again, never a crash
            return False

    async def play(self, job: SoloJob) -> str:
        """Play one job, write its result file and sign it; returns a one-line summary."""
        summary = await self._play(job)
        sign_file(self.key, self.night_dir, self.path(job))
        return summary

    async def _play(self, job: SoloJob) -> str:
        path = self.path(job)
        if job.game == "golf":
            assert self.holes is not None
            course = get_course(job.item)
            try:
                subs = read_submissions(job.submission, course, self.holes)
            except SubmissionError as exc:
                raise JobFault(f"bad submission: {exc}", retry=False) from None
            results = await score_course(self.holes, self.runners[job.item], subs)
            doc = new_result(job.entrant, job.item, self.holes.version, results,
                             run_id=self.night.name)
            written = write_result(path.parent, doc)
            assert written == path, (written, path)
            t = doc.totals
            return f"score {t.score:.2f}, holes passed {t.holes_passed}/{t.holes_total}"
        if job.game == "commit0":
            task = self.commit0[job.item]
            if isinstance(task, str):
                raise JobFault(task, retry=False)
            c0 = await score_submission(task, job.submission, entrant=job.entrant,
                                        quality=self.plan.commit0_quality)
            _write_json(path, c0.to_json())
            return f"{c0.status}, pass rate {c0.pass_rate:.3f} ({c0.passed}/{c0.total})"
        result = await _project_attempt(self.project[job.item], job)
        if result["status"] == AttemptStatus.HARNESS_ERROR:
            raise JobFault(f"harness error: {'; '.join(result.get('notes', []))[:300]}")
        _write_json(path, result)
        return f"{result['status']}, {result['points']:g} point(s)"


async def _project_attempt(task: ProjectTask, job: SoloJob) -> dict[str, Any]:
    result = await run_attempt(task, job.submission, entrant=job.entrant, attempt=job.attempt)
    return result.to_json()


async def _try(ctx: SoloContext, job: SoloJob) -> tuple[str | None, str, int]:
    """(summary, void cause, tries): summary is None when the job ended void."""
    cause = ""
    for n in range(1, TRIES + 1):
        try:
            return await ctx.play(job), "", n
        except JobFault as exc:
            cause = exc.cause
            if not exc.retry:
                return None, cause, n
        except Exception as exc:  # whatever breaks a job's harness voids it, never the night
            cause = f"{type(exc).__name__}: {exc}"
        log.warning("solo_job_failed", job=job.label, try_=n, cause=cause)
    return None, cause, TRIES


async def run_solo(
    night: Night,
    plan: SoloPlan,
    night_dir: Path,
    *,
    parallel: int,
    report: Callable[[str], None] = lambda line: None,
    key: bytes | None = None,
) -> SoloRun:
    """Play every solo job of the night not already done, at most `parallel` at a time.
    Results are signed with the night's `key`; one whose signature does not check is
    played again."""
    out = SoloRun()
    if not plan.jobs:
        return out
    if key is None:
        key = night_key(night_dir, create=True)
        assert key is not None
    ctx = SoloContext(night, plan, night_dir, key)
    await ctx.prepare_commit0()
    todo = []
    for job in plan.jobs:
        if ctx.kept(job):
            out.skipped.append(job.label)
        else:
            todo.append(job)
    report(f"solo games: {len(plan.jobs)} results, {len(out.skipped)} already done")
    gate = asyncio.Semaphore(max(1, parallel))

    async def one(job: SoloJob) -> None:
        async with gate:
            summary, cause, tries = await _try(ctx, job)
        marker = void_path(night_dir, job.game, job.entrant, job.item, job.attempt)
        if summary is None:
            marker.parent.mkdir(parents=True, exist_ok=True)
            _write_bytes(marker, msgspec.json.format(msgspec.json.encode(SoloVoid(
                game=job.game, entrant=job.entrant, item=job.item, attempt=job.attempt,
                cause=cause, attempts=tries)), indent=2) + b"\n")
            out.void.append(job.label)
            report(f"  {job.label}: void ({cause})")
        else:
            marker.unlink(missing_ok=True)
            out.played.append(job.label)
            report(f"  {job.label}: {summary}")

    try:
        await asyncio.gather(*(one(job) for job in todo))
    finally:
        ctx.close()
    for lst in (out.played, out.skipped, out.void):
        lst.sort()
    return out
