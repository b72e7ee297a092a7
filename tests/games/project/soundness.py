"""The soundness of a task's twins, on its real stack: the reference with every
possible twin planted still scores 1 point, and every twin is reported failed (so
honest code that passes a test can never pass its twin too)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cogolf.evaluation.ruletwins import RULES
from cogolf.evaluation.ruletwins.plant import read_sources, twinnable
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.task import load_task
from cogolf.games.project.twinning import TwinMode


def assert_reference_fails_every_twin(task_dir: Path, tests_total: int) -> int:
    """Run the check; returns how many twins were possible."""
    task = load_task(task_dir)
    assert task.twins is not None
    sources = read_sources(task_dir / "evaluator", RULES[task.twins.rule])
    scored = [t for c in task.checks for t in c.tests]
    possible = sum(len(u.variants) for _, u, _ in twinnable(sources, scored, task.twins.skip))
    result = asyncio.run(run_attempt(task, task_dir / "solution", twins=TwinMode.EVERY))
    assert (result.score.status, result.points) == ("ok", 1.0), result.score.notes
    assert result.score.notes == [
        f"every possible twin planted: {possible}; {possible} reported failed, 0 passed, "
        "0 without a failure"]
    assert possible > 100 and result.score.tests_total == tests_total
    return possible
