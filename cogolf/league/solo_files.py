"""Where a night's solo results live, and reading them back.

    replays/<night>/golf/<entrant>.<course>.<night>.json     a golf result document
    replays/<night>/commit0/<entrant>.<task>.json            a Commit-0 result
    replays/<night>/project/<entrant>.<task>.<attempt>.json  one project attempt
    replays/<night>/<game>/void/<same stem>.json             could not be played (twice)

Each file is the game's own result format, so `cogolf golf leaderboard`,
`cogolf commit0 table` and `cogolf project table` read these folders as they
are. A file's name must be the one its content implies: a copied or renamed
file is reported as a problem and not used, which also makes two results for
one entrant and item impossible, whatever order the files are read in.

Every file is read with size and nesting caps (`safejson`), and whatever is
wrong with one file (malformed, hostile, unsigned) makes it a listed problem,
never a crash. With the night's key, a result counts only when the runner
signed it (`proof`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from cogolf.games.commit0.results import Commit0Record
from cogolf.games.commit0.results import ResultError as Commit0ResultError
from cogolf.games.commit0.results import read_record as read_commit0_record
from cogolf.games.golf.results import ResultDoc, ResultError, file_name, read_result
from cogolf.games.project.results import AttemptRecord
from cogolf.games.project.results import ResultError as ProjectResultError
from cogolf.games.project.results import read_record as read_project_record
from cogolf.league import safejson
from cogolf.league.proof import unsigned_reason

VOID_DIR = "void"
VOID_FORMAT = "cogolf-solo-void"
MAX_RESULT_BYTES = 8 * 1024 * 1024


class SoloVoid(msgspec.Struct, kw_only=True):
    format: str = VOID_FORMAT
    game: str
    entrant: str
    item: str
    attempt: int = 0
    cause: str
    attempts: int  # how many times it was tried


@dataclass
class SoloRecords:
    golf: list[ResultDoc] = field(default_factory=list)
    commit0: list[Commit0Record] = field(default_factory=list)
    project: list[AttemptRecord] = field(default_factory=list)
    void: list[SoloVoid] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def stem(game: str, entrant: str, item: str, attempt: int = 0) -> str:
    return f"{entrant}.{item}.{attempt}" if game == "project" else f"{entrant}.{item}"


def result_path(night_dir: Path, night: str, game: str, entrant: str, item: str,
                attempt: int = 0) -> Path:
    if game == "golf":
        return night_dir / "golf" / f"{entrant}.{item}.{night}.json"
    return night_dir / game / f"{stem(game, entrant, item, attempt)}.json"


def void_path(night_dir: Path, game: str, entrant: str, item: str, attempt: int = 0) -> Path:
    return night_dir / game / VOID_DIR / f"{stem(game, entrant, item, attempt)}.json"


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(MAX_RESULT_BYTES + 1)


def _json(path: Path) -> Any:
    return safejson.loads(_read(path), max_bytes=MAX_RESULT_BYTES)


def read_golf(path: Path, night: str) -> ResultDoc:
    """A golf result of this night; ResultError (naming the field) otherwise."""
    try:
        safejson.check_bytes(_read(path), max_bytes=MAX_RESULT_BYTES)
    except OSError as exc:
        raise ResultError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise ResultError(f"{path}: {exc}") from None
    doc = read_result(path)
    if doc.run_id != night:
        raise ResultError(f"{path}: run_id: {doc.run_id!r} is not the night {night!r}")
    if path.name != file_name(doc):
        raise ResultError(f"{path}: the file name does not match its result "
                          f"(model {doc.model!r}, course {doc.course!r}: {file_name(doc)})")
    return doc


def read_commit0(path: Path, source: str = "") -> tuple[Commit0Record, dict[str, Any]]:
    """`source` names the file in the record (default: its path)."""
    try:
        data = _json(path)
    except (OSError, ValueError) as exc:
        raise Commit0ResultError(f"{path}: cannot read as JSON: {exc}") from None
    record = read_commit0_record(data, source or str(path))
    want = f"{stem('commit0', record.entrant, record.task)}.json"
    if path.name != want:
        raise Commit0ResultError(f"{path}: the file name does not match its result ({want})")
    return record, data


def read_project(path: Path, source: str = "") -> tuple[AttemptRecord, dict[str, Any]]:
    try:
        data = _json(path)
    except (OSError, ValueError) as exc:
        raise ProjectResultError(f"{path}: cannot read as JSON: {exc}") from None
    record = read_project_record(data, source or str(path))
    want = f"{stem('project', record.entrant, record.task, record.attempt)}.json"
    if path.name != want:
        raise ProjectResultError(f"{path}: the file name does not match its result ({want})")
    return record, data


def read_void(path: Path) -> SoloVoid:
    try:
        data = _read(path)
        safejson.check_bytes(data, max_bytes=MAX_RESULT_BYTES)
        marker = msgspec.json.decode(data, type=SoloVoid)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    except (msgspec.DecodeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if marker.format != VOID_FORMAT:
        raise ValueError(f"{path}: format {marker.format!r} is not {VOID_FORMAT!r}")
    if path.name != f"{stem(marker.game, marker.entrant, marker.item, marker.attempt)}.json":
        raise ValueError(f"{path}: the file name does not match its marker")
    return marker


def read_solo(night_dir: Path, night: str, *, key: bytes | None = None,
              signed: bool = False) -> SoloRecords:
    """Every solo result and void marker of a night's folder; bad files become problems.

    With `signed`, a result counts only when its signature checks with `key`."""
    out = SoloRecords()
    done: set[tuple[str, str, str, int]] = set()

    def rel(path: Path) -> str:
        # Files are named relative to the folder, so the standings do not depend on where it is.
        return path.relative_to(night_dir).as_posix()

    def problem(path: Path, exc: Exception) -> None:
        out.problems.append(str(exc).replace(str(path), rel(path)))

    def each(game: str, read: Callable[[Path], Any]) -> list[Any]:
        got = []
        for path in sorted((night_dir / game).glob("*.json")):
            if signed and (reason := unsigned_reason(key, night_dir, path)) is not None:
                out.problems.append(f"{rel(path)}: {reason}; not counted")
                continue
            try:
                got.append(read(path))
            except (ResultError, Commit0ResultError, ProjectResultError) as exc:
                problem(path, exc)
            except Exception as exc:  # a hostile file is a problem, never a crash
                out.problems.append(f"{rel(path)}: cannot read: {type(exc).__name__}")
        return got

    for doc in each("golf", lambda p: read_golf(p, night)):
        out.golf.append(doc)
        done.add(("golf", doc.model, doc.course, 0))
    for c0, _ in each("commit0", lambda p: read_commit0(p, rel(p))):
        out.commit0.append(c0)
        done.add(("commit0", c0.entrant, c0.task, 0))
    for pr, _ in each("project", lambda p: read_project(p, rel(p))):
        out.project.append(pr)
        done.add(("project", pr.entrant, pr.task, pr.attempt))
    for game in ("golf", "commit0", "project"):
        for path in sorted((night_dir / game / VOID_DIR).glob("*.json")):
            try:
                marker = read_void(path)
            except ValueError as exc:
                problem(path, exc)
                continue
            except Exception as exc:  # a hostile file is a problem, never a crash
                out.problems.append(f"{rel(path)}: cannot read: {type(exc).__name__}")
                continue
            if marker.game != game:
                problem(path, ValueError(f"{path}: a {marker.game} marker in {game}/"))
            # A result beats a marker left from an earlier, failed try.
            elif (game, marker.entrant, marker.item, marker.attempt) not in done:
                out.void.append(marker)
    out.problems.sort()
    return out
