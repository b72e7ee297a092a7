"""The benchmark's "lite" split, prepared and checked here (`cogolf commit0 lite`).

For each of its 16 libraries whose source can be had (a PyPI sdist by default,
or the benchmark's pinned fork given as a local git repository at a commit),
prepare a task, score the original (it must score 1.0) and the skeleton (near 0),
and put the reference ids beside the number of ids the benchmark lists.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from cogolf.evaluation.pyenv import EnvBuildError
from cogolf.games.commit0.layout import SourceError, fetch_source
from cogolf.games.commit0.official import IdFileError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import DEFAULT_TIME_LIMIT_SECONDS

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class LiteLibrary:
    name: str  # the benchmark's name (its id file is `<name>.bz2`)
    requirement: str  # the PyPI release closest to the benchmark's pinned commit ("": none)
    benchmark_ids: int  # ids the benchmark lists for it
    # test requirements the sdist does not declare (the repository's requirement files
    # are not shipped in it); the task file's additions
    requirements: tuple[str, ...] = ()


LITE = (
    LiteLibrary("tinydb", "tinydb==4.8.0", 201),
    LiteLibrary("simpy", "simpy==4.1.1", 140),
    LiteLibrary("deprecated", "deprecated==1.2.14", 171),
    LiteLibrary("wcwidth", "wcwidth==0.2.13", 38),
    LiteLibrary("voluptuous", "voluptuous==0.15.2", 149),
    LiteLibrary("cachetools", "cachetools==5.5.0", 215),
    LiteLibrary("imapclient", "imapclient==3.0.1", 267),
    LiteLibrary("marshmallow", "marshmallow==3.22.0", 1229),
    LiteLibrary("jinja", "jinja2==3.1.4", 851),
    LiteLibrary("cookiecutter", "cookiecutter==2.6.0", 367, ("freezegun", "pytest-mock")),
    LiteLibrary("portalocker", "portalocker==2.10.1", 38),
    LiteLibrary("parsel", "parsel==1.9.1", 343),
    LiteLibrary("pyjwt", "pyjwt==2.8.0", 259),
    LiteLibrary("chardet", "chardet==5.2.0", 376),
    LiteLibrary("babel", "babel==2.16.0", 5663),
    # the PyPI project of that name is another library: only a git source will do
    LiteLibrary("minitorch", "", 230),
)
BY_NAME = {lib.name: lib for lib in LITE}


@dataclass
class LiteRow:
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
    original: float | None = None
    skeleton: float | None = None
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


async def run_lite(out: Path, *, names: list[str] | None = None,
                   git: dict[str, GitSource] | None = None, ids_dir: Path | None = None,
                   time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
                   accept_partial_reference: bool = False) -> list[LiteRow]:
    """Prepare and check each library into `out/<name>/`; writes `out/lite.json`."""
    unknown = sorted(set(names or []) - set(BY_NAME))
    if unknown:
        raise SourceError(f"not in the lite split: {', '.join(unknown)} "
                          f"(it holds {', '.join(BY_NAME)})")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for lib in [BY_NAME[n] for n in names] if names else LITE:
        row = await check_library(lib, out / lib.name, (git or {}).get(lib.name), ids_dir,
                                  time_limit_seconds, accept_partial_reference)
        rows.append(row)
        log.info("commit0_lite_library", **row.to_json())
        (out / "lite.json").write_text(json.dumps([r.to_json() for r in rows], indent=2) + "\n",
                                       encoding="utf-8")
    return rows


async def check_library(lib: LiteLibrary, folder: Path, git: GitSource | None,
                        ids_dir: Path | None, time_limit_seconds: float,
                        accept_partial_reference: bool) -> LiteRow:
    source = f"{git.repo}@{git.commit}" if git else lib.requirement
    row = LiteRow(lib.name, source, "failed", benchmark_ids=lib.benchmark_ids)
    ids = ids_dir / f"{lib.name}.bz2" if ids_dir else None
    if not lib.requirement and git is None:
        row.status = "unavailable"
        row.reason = (f"no PyPI release of the benchmark's {lib.name}; give its pinned source "
                      f"with --git {lib.name}=REPO@SHA")
        return row
    start = time.monotonic()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        original = fetch_source(lib.requirement or lib.name, folder / "fetch",
                                git=git.repo if git else None, commit=git.commit if git else None)
        task = await prepare(str(original), folder / "task", name=lib.name,
                             time_limit_seconds=time_limit_seconds,
                             official_ids=ids if ids and ids.is_file() else None,
                             requirements=lib.requirements,
                             accept_partial_reference=accept_partial_reference)
    except (SourceError, IdFileError, EnvBuildError, OSError) as exc:
        row.reason = f"prepare: {exc}"[:600]
        row.prepare_seconds = round(time.monotonic() - start, 1)
        return row
    row.prepare_seconds = round(time.monotonic() - start, 1)
    found = task.prepare
    row.reference_ids = len(task.reference_ids)
    row.collected = found.get("collected", 0)
    row.skipped, row.xfailed = found.get("skipped", 0), found.get("xfailed", 0)
    row.collect_errors = len(found.get("collect_errors", []))
    row.flaky = found.get("flaky", [])
    start = time.monotonic()
    full = await score_submission(task, original, entrant="original", quality=False)
    empty = await score_submission(task, task.skeleton, entrant="skeleton", quality=False)
    row.score_seconds = round(time.monotonic() - start, 1)
    row.original, row.skeleton = round(full.pass_rate, 4), round(empty.pass_rate, 4)
    if full.official:
        row.official_original = full.official["rate"]
    if empty.official:
        row.official_skeleton = empty.official["rate"]
    for result in (full, empty):
        (folder / f"{result.entrant}.json").write_text(
            json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
    if full.status != "ok" or full.pass_rate < 1.0:
        row.reason = f"original scored {full.pass_rate:.3f} ({full.status}): " + "; ".join(
            full.notes[:3])
    elif empty.status != "ok":
        row.reason = f"skeleton: {empty.status}: " + "; ".join(empty.notes[:3])
    else:
        row.status = "ok"
    return row


def format_table(rows: list[LiteRow]) -> str:
    """A plain-text table: one line per library, reasons below."""
    head = ["library", "status", "ref ids", "bench ids", "collected", "skip", "xfail",
            "coll.err", "flaky", "original", "skeleton", "prepare s", "score s"]
    lines = ["\t".join(head)]

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    official = any(r.official_original is not None for r in rows)
    if official:  # the benchmark's rate over its own id list, beside ours
        lines[0] += "\tofficial original\tofficial skeleton"
    for r in rows:
        cells = [r.name, r.status, r.reference_ids, r.benchmark_ids, r.collected, r.skipped,
                 r.xfailed, r.collect_errors, len(r.flaky), rate(r.original), rate(r.skeleton),
                 r.prepare_seconds, r.score_seconds]
        if official:
            cells += [rate(r.official_original), rate(r.official_skeleton)]
        lines.append("\t".join(map(str, cells)))
    for r in rows:
        if r.reason:
            lines.append(f"{r.name}: {r.reason}")
        if r.flaky:
            lines.append(f"{r.name}: flaky (left out of the reference): {', '.join(r.flaky[:5])}")
    return "\n".join(lines)
