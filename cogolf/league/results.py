"""Where a night's result files live, and reading them back, the same way for every game.

    replays/<night>/<game>/<result name>          the game's own result document
    replays/<night>/<game>/void/<stem>.json       could not be played (twice)

The result name is the game's (`NightGame.result_name`), e.g. golf's
`<entrant>.<course>.<night>.json`, Commit-0's `<entrant>.<task>.json`, a project
attempt's `<entrant>.<task>.<attempt>.json`, so each game's own tools read these
folders as they are. A file's name must be the one its content implies: a copied
or renamed file is reported as a problem and not used, which also makes two
results for one entrant and item impossible, whatever order the files are read in.

Whatever is wrong with one file (malformed, hostile, unsigned) makes it a listed
problem, never a crash. With the night's key, a result counts only when the
runner signed it (`proof`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from cogolf import safejson
from cogolf.game import NightGame, ResultFileError
from cogolf.games.registry import NIGHT
from cogolf.league.proof import unsigned_reason

VOID_DIR = "void"
VOID_FORMAT = "cogolf-solo-void"  # the marker's format name, kept for older nights
MAX_RESULT_BYTES = 8 * 1024 * 1024


class JobVoid(msgspec.Struct, kw_only=True):
    format: str = VOID_FORMAT
    game: str
    entrant: str
    item: str
    attempt: int = 0
    cause: str
    attempts: int  # how many times it was tried


@dataclass
class ResultRecords:
    """Every usable result of a night's games, by game; void markers; problems."""

    results: dict[str, list[Any]] = field(default_factory=dict)
    void: list[JobVoid] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def of(self, game: str) -> list[Any]:
        return self.results.get(game, [])


def stem(game: str, entrant: str, item: str, attempt: int = 0) -> str:
    with_attempts = game in NIGHT and NIGHT[game].with_attempts
    return f"{entrant}.{item}.{attempt}" if with_attempts else f"{entrant}.{item}"


def result_path(night_dir: Path, night: str, game: str, entrant: str, item: str,
                attempt: int = 0) -> Path:
    return night_dir / game / NIGHT[game].result_name(entrant, item, attempt, night)


def void_path(night_dir: Path, game: str, entrant: str, item: str, attempt: int = 0) -> Path:
    return night_dir / game / VOID_DIR / f"{stem(game, entrant, item, attempt)}.json"


def read_void(path: Path) -> JobVoid:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RESULT_BYTES + 1)
        safejson.check_bytes(data, max_bytes=MAX_RESULT_BYTES)
        marker = msgspec.json.decode(data, type=JobVoid)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    except (msgspec.DecodeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if marker.format != VOID_FORMAT:
        raise ValueError(f"{path}: format {marker.format!r} is not {VOID_FORMAT!r}")
    if path.name != f"{stem(marker.game, marker.entrant, marker.item, marker.attempt)}.json":
        raise ValueError(f"{path}: the file name does not match its marker")
    return marker


def read_results(night_dir: Path, night: str, *, key: bytes | None = None,
                 signed: bool = False) -> ResultRecords:
    """Every result and void marker of a night's folder; bad files become problems.

    With `signed`, a result counts only when its signature checks with `key`."""
    out = ResultRecords()
    done: set[tuple[str, str, str, int]] = set()

    def rel(path: Path) -> str:
        # Files are named relative to the folder, so the standings do not depend on where it is.
        return path.relative_to(night_dir).as_posix()

    def problem(path: Path, exc: Exception) -> None:
        out.problems.append(str(exc).replace(str(path), rel(path)))

    def each(game: NightGame) -> list[Any]:
        got = []
        for path in sorted((night_dir / game.name).glob("*.json")):
            if signed and (reason := unsigned_reason(key, night_dir, path)) is not None:
                out.problems.append(f"{rel(path)}: {reason}; not counted")
                continue
            try:
                got.append(game.read_result(path, night, rel(path)))
            except ResultFileError as exc:
                problem(path, exc)
            except Exception as exc:  # a hostile file is a problem, never a crash
                out.problems.append(f"{rel(path)}: cannot read: {type(exc).__name__}")
        return got

    for name, game in NIGHT.items():
        records = each(game)
        out.results[name] = records
        done.update((name, *game.result_key(r)) for r in records)
    for name in NIGHT:
        for path in sorted((night_dir / name / VOID_DIR).glob("*.json")):
            try:
                marker = read_void(path)
            except ValueError as exc:
                problem(path, exc)
                continue
            except Exception as exc:  # a hostile file is a problem, never a crash
                out.problems.append(f"{rel(path)}: cannot read: {type(exc).__name__}")
                continue
            if marker.game != name:
                problem(path, ValueError(f"{path}: a {marker.game} marker in {name}/"))
            # A result beats a marker left from an earlier, failed try.
            elif (name, marker.entrant, marker.item, marker.attempt) not in done:
                out.void.append(marker)
    out.problems.sort()
    return out
