"""Timing a full 18-hole course per language with the reference solutions.

Used by `cogolf bench golf` / `cogolf golf bench`: prints seconds per course so
the runners' start-up and compile costs stay visible. A runner's one-time start
(the Python course's fork sandbox) is timed apart, as `start_seconds`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import HoleSet
from cogolf.games.golf.play import Attempt, read_submissions, score_course
from cogolf.games.golf.runners.base import RunLimits, Runner
from cogolf.games.golf.scoring import HoleResult


async def _timed(holes: HoleSet, runner: Runner, subs: dict[str, list[Attempt]],
                 jobs: int) -> tuple[float, float, list[HoleResult]]:
    t0 = time.perf_counter()
    await runner.start()
    t1 = time.perf_counter()
    results = await score_course(holes, runner, subs, jobs=jobs)
    return t1 - t0, time.perf_counter() - t1, results


def bench_course(
    holes: HoleSet, course_name: str, solutions: Path, limits: RunLimits, jobs: int
) -> dict[str, float | int | str]:
    course = get_course(course_name)
    subs = read_submissions(solutions / course.name, course, holes)
    runner = course.runner(limits)  # toolchain discovery and caches are not timed
    try:
        start, seconds, results = asyncio.run(_timed(holes, runner, subs, jobs))
    finally:
        runner.close()
    return {
        "course": course.name,
        "seconds": round(seconds, 3),
        "start_seconds": round(start, 3),
        "holes_passed": sum(r.status == "passed" for r in results),
        "holes": len(results),
        "bytes": sum(r.bytes for r in results),
    }


def bench(
    holes: HoleSet, courses: Sequence[str], solutions: Path, limits: RunLimits, jobs: int
) -> list[dict[str, float | int | str]]:
    return [bench_course(holes, c, solutions, limits, jobs) for c in courses]
