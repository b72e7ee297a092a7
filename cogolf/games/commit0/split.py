"""A split of the benchmark, prepared and checked here (`cogolf commit0 lite`, `full`).

For each library whose source can be had (a PyPI sdist by default, or the
benchmark's pinned fork given as a local git repository at a commit), prepare a
task, score the original (it must score 1.0) and the skeleton (near 0, status
`ok`), and put the reference ids beside the number of ids the benchmark lists.
Every library that does not come through says exactly why in its row.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from cogolf.evaluation.pyenv import EnvBuildError
from cogolf.games.commit0.layout import SourceError, fetch_source
from cogolf.games.commit0.official import IdFileError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import (
    DEFAULT_TEST_TIME_LIMIT_SECONDS,
    DEFAULT_TIME_LIMIT_SECONDS,
)
from cogolf.logs import configure

log = structlog.get_logger(__name__)

ORIGINAL_AT_LEAST = 0.99  # what counts as the original coming through


@dataclass(frozen=True)
class Library:
    name: str  # the benchmark's name (its id file is `<name>.bz2`, see `id_file`)
    requirement: str  # the PyPI release closest to the benchmark's pinned commit ("": none)
    benchmark_ids: int  # ids the benchmark lists for it
    # test requirements the sdist does not declare (the repository's requirement files
    # are not shipped in it): the task file's additions
    requirements: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()  # extras the benchmark installs for the tests
    why: str = ""  # when there is no requirement: where the source is

    @property
    def id_file(self) -> str:
        """The benchmark's id file name (its `get_pytest_ids`: lower case, '.' as '-')."""
        return self.name.lower().replace(".", "-") + ".bz2"


@dataclass
class Row:
    name: str
    source: str
    status: str  # ok | failed (reason says where) | unavailable (no source here)
    reason: str = ""
    benchmark_ids: int = 0
    reference_ids: int = 0
    collected: int = 0
    skipped: int = 0
    xfailed: int = 0
    collect_errors: int = 0
    flaky: list[str] = field(default_factory=list)
    over_test_time_limit: int = 0
    pytest: str = ""  # the wheelhouse's pytest, "" for the runner's
    original: float | None = None
    skeleton: float | None = None
    original_status: str = ""
    skeleton_status: str = ""
    official_original: float | None = None
    official_skeleton: float | None = None
    prepare_seconds: float = 0.0
    score_seconds: float = 0.0  # original and skeleton together

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GitSource:
    repo: Path
    commit: str


MAX_JOBS = 4  # libraries at once: each keeps about one core busy


async def run_split(split: str, libraries: Sequence[Library], out: Path, *,
                    names: list[str] | None = None, git: dict[str, GitSource] | None = None,
                    ids_dir: Path | None = None,
                    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
                    test_time_limit_seconds: float = DEFAULT_TEST_TIME_LIMIT_SECONDS,
                    accept_partial_reference: bool = False, jobs: int = 1,
                    log_level: str = "info") -> list[Row]:
    """Prepare and check each library into `out/<name>/`, `jobs` of them at once;
    writes `out/<split>.json` (rows in the split's order) after each one, so a long run
    can be read while it goes on. A library whose check fails in our own code gets a
    failed row saying so; the others go on."""
    by_name = {lib.name: lib for lib in libraries}
    unknown = sorted(set(names or []) - set(by_name))
    if unknown:
        raise SourceError(f"not in the {split} split: {', '.join(unknown)} "
                          f"(it holds {', '.join(by_name)})")
    unknown = sorted(set(git or {}) - set(by_name))
    if unknown:
        raise SourceError(f"--git names a library not in the {split} split: "
                          f"{', '.join(unknown)}")
    if not 1 <= jobs <= MAX_JOBS:
        raise SourceError(f"--jobs {jobs}: must be 1 to {MAX_JOBS}")
    out.mkdir(parents=True, exist_ok=True)
    chosen = [by_name[n] for n in dict.fromkeys(names)] if names else list(libraries)
    done: dict[str, Row] = {}
    # Beside others, each library is checked in a fresh process of its own: prepare
    # blocks its loop for minutes (pip, venvs, copies), and CPython 3.11's ast module
    # is not safe to use from two threads at once (twins and stubs parse sources).
    pool = (ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                max_tasks_per_child=1) if jobs > 1 else None)
    gate = asyncio.Semaphore(jobs)

    async def one(lib: Library) -> None:
        args = (lib, out / lib.name, (git or {}).get(lib.name), ids_dir, time_limit_seconds,
                test_time_limit_seconds, accept_partial_reference)
        try:
            async with gate:
                row = await (check_library(*args) if pool is None else
                             asyncio.get_running_loop().run_in_executor(
                                 pool, _check_in_process, log_level, args))
        except Exception as exc:  # a bug of ours in one library must not end the rest
            log.exception("commit0_split_library_crashed", split=split, name=lib.name)
            row = Row(lib.name, lib.requirement, "failed",
                      reason=f"internal error while checking it: {type(exc).__name__}: {exc}",
                      benchmark_ids=lib.benchmark_ids)
        done[lib.name] = row
        log.info("commit0_split_library", split=split, **row.to_json())
        rows = [done[lib.name] for lib in chosen if lib.name in done]
        (out / f"{split}.json").write_text(
            json.dumps([r.to_json() for r in rows], indent=2) + "\n", encoding="utf-8")

    try:
        await asyncio.gather(*(one(lib) for lib in chosen))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return [done[lib.name] for lib in chosen]


def _check_in_process(log_level: str, args: tuple[Any, ...]) -> Row:
    configure(log_level)
    return asyncio.run(check_library(*args))


async def check_library(lib: Library, folder: Path, git: GitSource | None,
                        ids_dir: Path | None, time_limit_seconds: float,
                        test_time_limit_seconds: float,
                        accept_partial_reference: bool) -> Row:
    source = f"{git.repo}@{git.commit}" if git else lib.requirement
    row = Row(lib.name, source, "failed", benchmark_ids=lib.benchmark_ids)
    ids = ids_dir / lib.id_file if ids_dir else None
    if not lib.requirement and git is None:
        row.status = "unavailable"
        why = lib.why or f"no PyPI release of the benchmark's {lib.name}"
        row.reason = f"{why}; give its pinned source with --git {lib.name}=REPO@SHA"
        return row
    start = time.monotonic()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        original = fetch_source(lib.requirement or lib.name, folder / "fetch",
                                git=git.repo if git else None, commit=git.commit if git else None)
        task = await prepare(str(original), folder / "task", name=lib.name,
                             time_limit_seconds=time_limit_seconds,
                             test_time_limit_seconds=test_time_limit_seconds,
                             official_ids=ids if ids and ids.is_file() else None,
                             requirements=lib.requirements, extras=lib.extras,
                             accept_partial_reference=accept_partial_reference)
    except (SourceError, IdFileError, EnvBuildError, OSError) as exc:
        row.reason = f"prepare: {exc}"[:1500]
        row.prepare_seconds = round(time.monotonic() - start, 1)
        return row
    row.prepare_seconds = round(time.monotonic() - start, 1)
    found = task.prepare
    row.reference_ids = len(task.reference_ids)
    row.collected = found.get("collected", 0)
    row.skipped, row.xfailed = found.get("skipped", 0), found.get("xfailed", 0)
    row.collect_errors = len(found.get("collect_errors", []))
    row.flaky = found.get("flaky", [])
    row.over_test_time_limit = len(found.get("over_test_time_limit", []))
    row.pytest = found.get("dependencies", {}).get("pytest", "")
    start = time.monotonic()
    # two walled runs side by side: each is one pytest process, so a second core halves this;
    # one that raises leaves the other to end on its own (cancelled, it would stop mid-run)
    full, empty = await asyncio.gather(
        score_submission(task, original, entrant="original", quality=False),
        score_submission(task, task.skeleton, entrant="skeleton", quality=False),
        return_exceptions=True)
    for failed in (full, empty):
        if isinstance(failed, BaseException):
            raise failed
    row.score_seconds = round(time.monotonic() - start, 1)
    row.original, row.skeleton = round(full.pass_rate, 4), round(empty.pass_rate, 4)
    row.original_status, row.skeleton_status = full.status, empty.status
    if full.official:
        row.official_original = full.official["rate"]
    if empty.official:
        row.official_skeleton = empty.official["rate"]
    for result in (full, empty):
        (folder / f"{result.entrant}.json").write_text(
            json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
    if full.status != "ok" or full.pass_rate < 1.0:
        lost = ", ".join(f"{t} ({o})" for t, o in list(full.not_passed.items())[:3])
        row.reason = (f"original scored {full.pass_rate:.3f} ({full.status}): "
                      + "; ".join([*full.notes[:3], *([f"not passed: {lost}"] if lost else [])]))
    elif empty.status != "ok":
        row.reason = f"skeleton: {empty.status}: " + "; ".join(empty.notes[:3])
    else:
        row.status = "ok"
        official = full.official or {}
        if official and official["rate"] < ORIGINAL_AT_LEAST:
            # ours is over what passed here; the benchmark's list may hold more
            first = ", ".join(official["failed"][:3])
            row.reason = (f"the original passes {official['passed']} of the benchmark's "
                          f"{official['listed']} ids ({official['missing']} without a result "
                          f"here); first not passed: {first}")
    return row


def came_through(row: Row) -> bool:
    """The issue's bar: the original at least 0.99 and the skeleton scored `ok`."""
    return (row.original or 0.0) >= ORIGINAL_AT_LEAST and row.skeleton_status == "ok"


def format_table(rows: list[Row]) -> str:
    """A plain-text table: one line per library, reasons below."""
    head = ["library", "status", "ref ids", "bench ids", "collected", "skip", "xfail",
            "coll.err", "flaky", "over limit", "original", "skeleton", "prepare s", "score s"]
    lines = ["\t".join(head)]

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    official = any(r.official_original is not None for r in rows)
    if official:  # the benchmark's rate over its own id list, beside ours
        lines[0] += "\tofficial original\tofficial skeleton"
    for r in rows:
        cells = [r.name, r.status, r.reference_ids, r.benchmark_ids, r.collected, r.skipped,
                 r.xfailed, r.collect_errors, len(r.flaky), r.over_test_time_limit,
                 rate(r.original), rate(r.skeleton), r.prepare_seconds, r.score_seconds]
        if official:
            cells += [rate(r.official_original), rate(r.official_skeleton)]
        lines.append("\t".join(map(str, cells)))
    for r in rows:
        if r.reason:
            lines.append(f"{r.name}: {r.reason}")
        if r.flaky:
            lines.append(f"{r.name}: flaky (left out of the reference): {', '.join(r.flaky[:5])}")
        if r.pytest:
            lines.append(f"{r.name}: runs on {r.pytest}")
    lines.append(f"{sum(came_through(r) for r in rows)} of {len(rows)} with the original at "
                 f"least {ORIGINAL_AT_LEAST} and the skeleton scored ok")
    return "\n".join(lines)
