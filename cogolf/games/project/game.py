"""Project attempts as an offline game: an entrant's changes scored by a hidden evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.results import AttemptRecord, ProjectRow, load_records, project_table
from cogolf.games.project.task import load_task


class ProjectGame:
    name = "project"

    async def score(self, task_dir: Path, submission: Path, *, entrant: str) -> dict[str, Any]:
        result = await run_attempt(load_task(task_dir), submission, entrant=entrant)
        return result.to_json()

    def load_results(self, folder: Path) -> list[AttemptRecord]:
        return load_records(folder)

    def table(self, records: list[AttemptRecord]) -> list[ProjectRow]:
        return project_table(records)


GAME = ProjectGame()
