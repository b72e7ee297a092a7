"""`cogolf bench project`: how long each task's evaluator takes on its reference solution.

Each task found (a `task.json` with a `solution/` folder beside it) is attempted
with its reference solution through the same path as `cogolf project attempt`,
`repeat` times; the seconds are whole attempts (workspace, walled evaluator run,
report, score). A Go task's one-off build-cache warm-up is timed apart.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.gocache import cache_root, is_go_task, warm_cache
from cogolf.games.project.task import load_task


def find_tasks(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/task.json") if (p.parent / "solution").is_dir())


async def bench_task(task_dir: Path, repeat: int) -> dict[str, Any]:
    task = load_task(task_dir)
    warm_up = None
    if is_go_task(task) and not cache_root().is_dir():
        start = time.monotonic()
        warm_cache(task)
        warm_up = round(time.monotonic() - start, 2)
    runs = []
    for _ in range(repeat):
        result = await run_attempt(task, task_dir / "solution", entrant="bench")
        runs.append(result.to_json())
    seconds = [r["seconds"] for r in runs]
    return {
        "task": task.name,
        "status": runs[-1]["status"],
        "points": runs[-1]["points"],
        "checks": f"{runs[-1]['checks']['passed']}/{runs[-1]['checks']['total']}",
        "seconds": seconds,
        "median_seconds": round(statistics.median(seconds), 2),
        "time_limit_seconds": task.time_limit_seconds,
        "warm_up_seconds": warm_up,
    }
