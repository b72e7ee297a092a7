"""`cogolf bench commit0`: seconds per Commit-0 score with and without twins.

A task (by default textkit, prepared once into a temporary folder) is scored with
a submission (by default textkit's original library) through the same path as
`cogolf commit0 score` (build walled and offline, the suite walled on the
results channel; ruff and mypy left out), `repeat` times with twins and `repeat`
times without, interleaved (`cogolf.evaluation.twin_bench`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cogolf.evaluation.pyenv import shared_tempdir
from cogolf.evaluation.twin_bench import interleaved
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import load_task

TEXTKIT = Path(__file__).resolve().parents[3] / "references" / "commit0" / "textkit"


async def bench_commit0(task_dir: Path | None, submission: Path | None,
                        repeat: int) -> dict[str, Any]:
    with shared_tempdir("cogolf-bench-commit0-") as tmp:
        prepare_seconds = None
        if task_dir is None:
            started = time.monotonic()
            task = await prepare(str(TEXTKIT), Path(tmp) / "task", time_limit_seconds=120)
            prepare_seconds = round(time.monotonic() - started, 2)
        else:
            task = load_task(task_dir)
        chosen = submission or (TEXTKIT if task_dir is None else task.skeleton)

        async def score(twins: bool) -> dict[str, Any]:
            result = await score_submission(task, chosen, entrant="bench", quality=False,
                                            twins=twins)
            return result.to_json()

        cost = await interleaved(score, repeat)
    last = cost.last
    return {"task": task.name, "submission": str(chosen), "status": last["status"],
            "pass_rate": last["pass_rate"], "reference_ids": last["total"],
            "twins": (last.get("counts") or {}).get("twins"), **cost.to_json(),
            "prepare_seconds": prepare_seconds,
            "eligible_tests": len(task.twins) if task.twins is not None else None}
