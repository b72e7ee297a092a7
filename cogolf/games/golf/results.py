"""Result documents: one JSON file per model, course and run, in a results folder.

The leaderboard is a pure function of these files, so a run can be re-ranked,
merged from several machines, or served as web pages without re-running code.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from cogolf import safeio
from cogolf.games.golf.scoring import CourseTotals, HoleResult, course_totals

FORMAT = "cogolf-golf-result/1"
MAX_RESULT_BYTES = 16 * 1024 * 1024
MAX_MODEL_CHARS = 80
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ResultError(ValueError):
    """A result document that cannot be used; names the file and the field."""


class ResultDoc(msgspec.Struct, frozen=True, kw_only=True):
    format: str = FORMAT
    model: str
    course: str
    run_id: str
    created: str  # ISO 8601, UTC
    holes_version: str
    totals: CourseTotals
    holes: list[HoleResult]


def check_model(model: str) -> str:
    if not model.strip() or len(model) > MAX_MODEL_CHARS or any(ord(c) < 32 for c in model):
        raise ResultError(
            f"model: must be 1-{MAX_MODEL_CHARS} printable characters, got {model!r}"
        )
    return model


def new_result(
    model: str, course: str, holes_version: str, holes: Sequence[HoleResult],
    *, run_id: str | None = None, now: dt.datetime | None = None,
) -> ResultDoc:
    when = now or dt.datetime.now(dt.UTC)
    return ResultDoc(
        model=check_model(model),
        course=course,
        run_id=run_id or when.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3),
        created=when.isoformat(timespec="seconds"),
        holes_version=holes_version,
        totals=course_totals(holes),
        holes=list(holes),
    )


def file_name(doc: ResultDoc) -> str:
    return f"{_SAFE.sub('_', doc.model)}.{doc.course}.{_SAFE.sub('_', doc.run_id)}.json"


def write_result(folder: Path, doc: ResultDoc) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(doc)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(doc), indent=1) + b"\n")
    tmp.replace(path)
    return path


def read_result(path: Path) -> ResultDoc:
    try:
        doc = msgspec.json.decode(safeio.read_file(path, MAX_RESULT_BYTES), type=ResultDoc)
    except safeio.UnsafeFile as exc:
        raise ResultError(str(exc)) from exc
    except OSError as exc:
        raise ResultError(f"{path}: cannot read ({exc.strerror})") from exc
    except RecursionError as exc:
        raise ResultError(f"{path}: nested too deeply") from exc
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ResultError(f"{path}: {exc}") from exc
    if doc.format != FORMAT:
        raise ResultError(f"{path}: format: {doc.format!r} is not {FORMAT!r}")
    return doc


@dataclass(frozen=True)
class LoadedResults:
    docs: list[ResultDoc]
    errors: list[str]  # one line per unusable file; the rest still count


def read_results(folder: Path) -> LoadedResults:
    if not folder.is_dir():
        raise ResultError(f"{folder}: not a directory")
    docs, errors = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            docs.append(read_result(path))
        except ResultError as exc:
            errors.append(str(exc))
    return LoadedResults(docs, errors)
