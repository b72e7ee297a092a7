"""Project result files and the per-task table a league night shows.

One attempt is one JSON file:

    {"game": "project", "schema": 1, "task": "csv_importer", "entrant": "alice",
     "attempt": 1, "scale": "failure_weighted", "status": "ok", "points": 0.5,
     "checks": {"passed": 21, "total": 22, "failed": ["bom"], "failed_optional": []},
     "by_label": {"floor": {"passed": 11, "total": 11}, "signal": {...}, "optional": {...}},
     "tests": {"passed": 30, "total": 31, "complete": true},
     "notes": [...], "seconds": 3.2, "walled": true}

`walled` is null for ingested reports (the evaluator ran elsewhere). The table
reads a folder of such files: per entrant and task, the sum of attempts 1..5
(a missing attempt scores 0), and the total over every task in the folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf import resultdocs
from cogolf.games.project.scoring import AttemptScore

SCHEMA = 1
ATTEMPTS_PER_TASK = 5


class ResultError(ValueError):
    """A result file is malformed or conflicts with another; the message names it."""


@dataclass
class AttemptResult:
    task: str
    entrant: str
    attempt: int
    scale: str
    score: AttemptScore
    seconds: float
    walled: bool | None

    @property
    def points(self) -> float:
        return self.score.points

    def to_json(self) -> dict[str, Any]:
        return {
            "game": "project",
            "schema": SCHEMA,
            "task": self.task,
            "entrant": self.entrant,
            "attempt": self.attempt,
            "scale": self.scale,
            **self.score.to_json(),
            "seconds": self.seconds,
            "walled": self.walled,
        }


@dataclass(frozen=True)
class AttemptRecord:
    """The fields of a result file the table needs, as read back."""

    task: str
    entrant: str
    attempt: int
    points: float
    source: str


@dataclass
class ProjectRow:
    entrant: str
    per_task: dict[str, float]  # task -> sum of its attempts (0..5)
    total: float
    attempts: dict[str, int]  # task -> attempts found

    def to_json(self) -> dict[str, Any]:
        return {"entrant": self.entrant, "per_task": self.per_task, "total": self.total,
                "attempts": self.attempts}


def read_record(data: Any, source: str) -> AttemptRecord:
    if not isinstance(data, dict) or data.get("game") != "project":
        raise ResultError(f"{source}: not a project result (game must be 'project')")
    if data.get("schema") != SCHEMA:
        raise ResultError(f"{source}: schema {data.get('schema')!r} is not {SCHEMA}")
    for key in ("task", "entrant"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ResultError(f"{source}: {key} must be a non-empty string")
    attempt = data.get("attempt")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not (
        1 <= attempt <= ATTEMPTS_PER_TASK
    ):
        raise ResultError(f"{source}: attempt must be an integer 1..{ATTEMPTS_PER_TASK}")
    points = data.get("points")
    if isinstance(points, bool) or not isinstance(points, int | float) or not 0 <= points <= 1:
        raise ResultError(f"{source}: points must be a number within 0..1")
    return AttemptRecord(data["task"], data["entrant"], attempt, float(points), source)


def load_records(folder: Path) -> list[AttemptRecord]:
    """Every `*.json` project result under `folder` (other games' files are skipped)."""
    return resultdocs.load_records(folder, "project", read_record, ResultError)


def project_table(records: Iterable[AttemptRecord]) -> list[ProjectRow]:
    """Rows best first (by total, then entrant name); a duplicate attempt is an error."""
    seen: dict[tuple[str, str, int], str] = {}
    tasks: set[str] = set()
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        key = (r.entrant, r.task, r.attempt)
        if key in seen:
            raise ResultError(
                f"{r.source}: attempt {r.attempt} of {r.entrant} on {r.task} "
                f"is also in {seen[key]}"
            )
        seen[key] = r.source
        tasks.add(r.task)
        sums.setdefault(r.entrant, {})
        sums[r.entrant][r.task] = sums[r.entrant].get(r.task, 0.0) + r.points
        counts.setdefault(r.entrant, {})
        counts[r.entrant][r.task] = counts[r.entrant].get(r.task, 0) + 1
    rows = []
    for entrant, per in sums.items():
        per_task = {t: round(per.get(t, 0.0), 6) for t in sorted(tasks)}
        rows.append(ProjectRow(entrant, per_task, round(sum(per_task.values()), 6),
                               {t: counts[entrant].get(t, 0) for t in sorted(tasks)}))
    rows.sort(key=lambda row: (-row.total, row.entrant))
    return rows
