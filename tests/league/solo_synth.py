"""Synthetic solo results, written as the real result files a night's folder holds.

Each file goes through the games' own types and writers (golf `ResultDoc` and
`write_result`, Commit-0 `Commit0Result.to_json`, the project attempt fields
`read_record` reads), so the standings read exactly what a night would leave.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from cogolf.games.commit0.results import Commit0Result
from cogolf.games.golf.results import ResultDoc, write_result
from cogolf.games.golf.scoring import CourseTotals
from cogolf.league.records import Manifest, ManifestEntrant, ManifestSolo
from cogolf.league.results import result_path


@dataclass(frozen=True)
class SoloResult:
    game: str  # golf | commit0 | project
    entrant: str
    item: str  # course or task
    value: float  # golf: score; commit0: passed of 10; project: points
    attempt: int = 0


def write_solo(folder: Path, night: str, result: SoloResult) -> Path:
    if result.game == "golf":
        passed = 18 if result.value < 1000 else 0
        doc = ResultDoc(
            model=result.entrant, course=result.item, run_id=night,
            created="2024-06-01T00:00:00+00:00", holes_version="synthetic",
            totals=CourseTotals(score=result.value, holes_passed=passed, holes_total=18,
                                tests_passed=passed * 10, tests_total=180,
                                raw_bytes=int(result.value) % 1000, penalty=0.0,
                                official_bytes=0),
            holes=[],
        )
        return write_result(folder / "golf", doc)
    path = result_path(folder, night, result.game, result.entrant, result.item, result.attempt)
    path.parent.mkdir(parents=True, exist_ok=True)
    if result.game == "commit0":
        data = Commit0Result(task=result.item, entrant=result.entrant, status="ok",
                             passed=int(result.value), total=10).to_json()
    else:
        data = {"game": "project", "schema": 1, "task": result.item, "entrant": result.entrant,
                "attempt": result.attempt, "scale": "failure_weighted", "status": "ok",
                "points": result.value}
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def write_manifest(folder: Path, night: str, entrants: Sequence[str], *, courses: Sequence[str],
                   commit0: Sequence[str], project: Sequence[str], attempts: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(
        name=night, seed=1, anchor="literalist",
        entrants=[ManifestEntrant(name=e, kind="policy") for e in entrants],
        matches=[],
        solo=ManifestSolo(golf_courses=list(courses), commit0_tasks=list(commit0),
                          project_tasks=list(project), project_attempts=attempts),
    )
    (folder / "night.json").write_bytes(msgspec.json.encode(manifest))
