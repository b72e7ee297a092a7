"""Scoring a course: every attempt at every hole run once, one attempt chosen per hole.

Each attempt runs on the whole scoring set in one process, but only its public
results take part in choosing (see `attempts`), so private tests never choose.
At most `jobs` holes run at a time (Rust compiles are heavy on two cores).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from cogolf.golf import scoring
from cogolf.golf.attempts import PublicRun, choose_attempt
from cogolf.golf.courses import Course
from cogolf.golf.holes import Hole, HoleSet
from cogolf.golf.runners.base import Runner
from cogolf.golf.scoring import HoleResult
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

MAX_SUBMISSION_BYTES = 64 * 1024
MAX_ATTEMPTS = 16


class SubmissionError(ValueError):
    """A submissions folder that cannot be read as a course; names the file."""


def _unreadable(n_calls: int, detail: str) -> BatchResult:
    return BatchResult(
        load=LoadStatus.SYNTAX_ERROR,
        load_detail=detail,
        results=[CallResult(status=CallStatus.NOT_RUN) for _ in range(n_calls)],
    )


async def run_attempt(runner: Runner, hole: Hole, source: bytes) -> BatchResult:
    """Run one file on the scoring set; files that are not UTF-8 or too large never start."""
    tests = hole.scoring
    if len(source) > MAX_SUBMISSION_BYTES:
        return _unreadable(len(tests), f"file larger than {MAX_SUBMISSION_BYTES} bytes")
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(len(tests), f"file is not valid UTF-8 (byte {exc.start})")
    return await runner.run(source, hole, tests)


def judge_attempts(
    hole: Hole, sources: Sequence[bytes], batches: Sequence[BatchResult]
) -> HoleResult:
    if not sources:
        return scoring.missing_hole(hole, hole.scoring)
    n_public = len(hole.public)
    runs = []
    for i, (src, batch) in enumerate(zip(sources, batches, strict=True)):
        public = scoring.judge_tests(hole.public, _prefix(batch, n_public))
        runs.append(PublicRun(i, len(src), sum(t.passed for t in public), n_public, hole.penalty))
    best = choose_attempt(runs)
    return scoring.judge_hole(
        hole, hole.scoring, len(sources[best.index]), batches[best.index],
        attempt=best.index, attempts=len(sources),
    )


def _prefix(batch: BatchResult, n: int) -> BatchResult:
    return BatchResult(load=batch.load, load_detail=batch.load_detail, results=batch.results[:n])


async def score_course(
    holes: HoleSet,
    runner: Runner,
    submissions: Mapping[str, Sequence[bytes]],
    *,
    jobs: int = 2,
) -> list[HoleResult]:
    """One HoleResult per hole in course order; holes without files score the full penalty."""
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(hole: Hole, source: bytes) -> BatchResult:
        async with gate:
            return await run_attempt(runner, hole, source)

    async def hole_result(hole: Hole) -> HoleResult:
        sources = list(submissions.get(hole.key, ()))
        batches = await asyncio.gather(*(one(hole, s) for s in sources))
        return judge_attempts(hole, sources, batches)

    return list(await asyncio.gather(*(hole_result(h) for h in holes.holes)))


def read_submissions(folder: Path, course: Course, holes: HoleSet) -> dict[str, list[bytes]]:
    """`<hole>.<ext>` is one attempt; a folder `<hole>/` holds attempts in name order."""
    if not folder.is_dir():
        raise SubmissionError(f"{folder}: not a directory")
    out: dict[str, list[bytes]] = {}
    for hole in holes.holes:
        attempts: list[Path] = []
        single = folder / course.file_name(hole.key)
        if single.is_file():
            attempts.append(single)
        many = folder / hole.key
        if many.is_dir():
            attempts += sorted(p for p in many.iterdir() if p.suffix == f".{course.extension}")
        if len(attempts) > MAX_ATTEMPTS:
            raise SubmissionError(f"{many}: {len(attempts)} attempts, at most {MAX_ATTEMPTS}")
        data = []
        for p in attempts:
            try:
                data.append(p.read_bytes())
            except OSError as exc:
                raise SubmissionError(f"{p}: cannot read ({exc.strerror})") from exc
        if data:
            out[hole.key] = data
    return out
