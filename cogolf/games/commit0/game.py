"""Commit-0 as an offline game: a submission scored against a prepared task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.games.commit0.results import Commit0Record, Commit0Row, commit0_table, load_records
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import load_task


class Commit0Game:
    name = "commit0"

    async def score(self, task_dir: Path, submission: Path, *, entrant: str) -> dict[str, Any]:
        result = await score_submission(load_task(task_dir), submission, entrant=entrant)
        return result.to_json()

    def load_results(self, folder: Path) -> list[Commit0Record]:
        return load_records(folder)

    def table(self, records: list[Commit0Record]) -> list[Commit0Row]:
        return commit0_table(records)


GAME = Commit0Game()
