"""Scoring a course: every attempt at every hole run once, one attempt chosen per hole.

Each attempt runs on the whole scoring set in one process, but only its public
results take part in choosing (see `attempts`), so private tests never choose.
At most `jobs` holes run at a time (Rust compiles are heavy on two cores).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from cogolf import safeio
from cogolf.games.golf import scoring
from cogolf.games.golf.attempts import PublicRun, choose_attempt
from cogolf.games.golf.courses import Course
from cogolf.games.golf.holes import Hole, HoleSet
from cogolf.games.golf.runners.base import Runner
from cogolf.games.golf.scoring import HoleResult
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

MAX_SUBMISSION_BYTES = 64 * 1024
MAX_ATTEMPTS = 16


class SubmissionError(ValueError):
    """A submissions folder that cannot be read as a course; names the file."""


@dataclass(frozen=True)
class Refused:
    """A submission file that is never run (a link, a special file, over the size cap).

    It counts as an attempt that fails every test, with the size of a file over the
    cap, so it can never score better than an honest file."""

    reason: str

    def __len__(self) -> int:
        return MAX_SUBMISSION_BYTES + 1


Attempt = bytes | Refused


def _unreadable(n_calls: int, detail: str) -> BatchResult:
    return BatchResult(
        load=LoadStatus.SYNTAX_ERROR,
        load_detail=detail,
        results=[CallResult(status=CallStatus.NOT_RUN) for _ in range(n_calls)],
    )


async def run_attempt(runner: Runner, hole: Hole, source: Attempt) -> BatchResult:
    """Run one file on the scoring set; files that are not UTF-8 or too large never start."""
    tests = hole.scoring
    if isinstance(source, Refused):
        return _unreadable(len(tests), source.reason)
    if len(source) > MAX_SUBMISSION_BYTES:
        return _unreadable(len(tests), f"file larger than {MAX_SUBMISSION_BYTES} bytes")
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(len(tests), f"file is not valid UTF-8 (byte {exc.start})")
    return await runner.run(source, hole, tests)


def judge_attempts(
    hole: Hole, sources: Sequence[Attempt], batches: Sequence[BatchResult]
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
    submissions: Mapping[str, Sequence[Attempt]],
    *,
    jobs: int = 2,
) -> list[HoleResult]:
    """One HoleResult per hole in course order; holes without files score the full penalty."""
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(hole: Hole, source: Attempt) -> BatchResult:
        async with gate:
            return await run_attempt(runner, hole, source)

    async def hole_result(hole: Hole) -> HoleResult:
        sources = list(submissions.get(hole.key, ()))
        batches = await asyncio.gather(*(one(hole, s) for s in sources))
        return judge_attempts(hole, sources, batches)

    return list(await asyncio.gather(*(hole_result(h) for h in holes.holes)))


def read_submissions(folder: Path, course: Course, holes: HoleSet) -> dict[str, list[Attempt]]:
    """`<hole>.<ext>` is one attempt; a folder `<hole>/` holds attempts in name order.

    No link is followed: the folder itself must not be one, and a link (or a special
    file, or a file over the size cap) in it is a `Refused` attempt naming the path.
    Sizes are checked before reading and at most cap + 1 bytes are ever read."""
    try:
        safeio.open_dir_check(folder)
    except (safeio.UnsafeFile, OSError) as exc:
        raise SubmissionError(_why(folder, exc)) from exc
    out: dict[str, list[Attempt]] = {}
    for hole in holes.holes:
        data: list[Attempt] = []
        single = course.file_name(hole.key)
        if safeio.entry_kind(folder, single) is not None:
            data.append(_read(folder, single))
        kind = safeio.entry_kind(folder, hole.key)
        if kind == "dir":
            names = sorted(n for n in safeio.list_dir(folder, hole.key)
                           if n.endswith(f".{course.extension}"))
            if len(names) > MAX_ATTEMPTS:
                raise SubmissionError(
                    f"{folder / hole.key}: {len(names)} attempts, at most {MAX_ATTEMPTS}")
            data += [_read(folder, f"{hole.key}/{n}") for n in names]
        elif kind is not None:
            data.append(Refused(f"{folder / hole.key}: a {kind}, not a folder of attempts; "
                                "links are never followed"))
        if data:
            out[hole.key] = data
    return out


FALLBACKS_FILE = ".fallbacks.json"  # in a folder written from a live play: {hole key: cause}
MAX_FALLBACKS_BYTES = 16 * 1024


def read_fallbacks(folder: Path, holes: HoleSet) -> dict[str, str]:
    """The holes of a folder written from a live play that were fallbacks, with the cause.

    The file is the entrant's own word about its own holes (it can only mark them as
    not played), so anything unreadable in it is ignored rather than refused."""
    try:
        data = safeio.read_file(FALLBACKS_FILE, MAX_FALLBACKS_BYTES, top=folder)
        doc = json.loads(data)
    except (safeio.UnsafeFile, safeio.TooLarge, OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    keys = {h.key for h in holes.holes}
    return {k: v[:40] for k, v in doc.items() if k in keys and isinstance(v, str) and v}


def mark_fallbacks(results: Sequence[HoleResult], fallbacks: Mapping[str, str]) -> list[HoleResult]:
    return [
        msgspec.structs.replace(r, fallback=fallbacks[r.hole]) if r.hole in fallbacks else r
        for r in results
    ]


def _read(folder: Path, rel: str) -> Attempt:
    try:
        return safeio.read_file(rel, MAX_SUBMISSION_BYTES, top=folder)
    except safeio.TooLarge as exc:
        return Refused(f"{rel}: file larger than {MAX_SUBMISSION_BYTES} bytes ({exc.size} bytes)")
    except (safeio.UnsafeFile, OSError) as exc:
        return Refused(_why(Path(rel), exc))


def _why(path: Path, exc: Exception) -> str:
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return f"{path}: not a directory"
    if isinstance(exc, OSError):
        return f"{path}: cannot read ({exc.strerror})"
    return str(exc)
