"""The shipped pytest evaluators' twins are sound: with a twin planted at every check a
run may change (every check that is a statement of a check test's own body), the
reference solution still scores full points and is not `tampered`, so no twin passed
together with its original. A run plants 8 of these. Bank Feed's proof is its reference
test (`test_bank_feed.py`): one Chromium run for both."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cogolf.evaluation.pytest_twins import default_sites, function_of
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.task import load_task
from cogolf.games.project.twinning import TwinMode

REFERENCES = Path(__file__).resolve().parents[3] / "references" / "projects"


def every_check(task_dir: Path) -> int:
    """How many checks of a task's evaluator a twin may change."""
    task = load_task(task_dir)
    evaluator = task_dir / "evaluator"
    sites = default_sites([evaluator], task_dir,
                          {function_of(t).replace(f"{task.evaluator_dest}.", "evaluator.", 1)
                           for c in task.checks for t in c.tests})
    return sum(map(len, sites.values()))


@pytest.mark.slow
def test_every_csv_importer_twin_fails_on_the_reference() -> None:
    task_dir = REFERENCES / "csv_importer"
    result = asyncio.run(run_attempt(load_task(task_dir), task_dir / "solution",
                                     twins=TwinMode.EVERY))
    data = result.to_json()
    assert data["status"] == "ok" and data["points"] == 1.0, data["notes"]
    assert data["checks"]["failed"] == [] and data["checks"]["failed_optional"] == []
    assert data["twins"] == every_check(task_dir) == 37
