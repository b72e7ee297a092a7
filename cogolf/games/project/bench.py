"""`cogolf bench project`: how long each task's evaluator takes on its reference solution.

Each task found (a `task.json` with a `solution/` folder beside it) is attempted
with its reference solution through the same path as `cogolf project attempt`,
`repeat` times with twins and `repeat` times without, interleaved
(`cogolf.evaluation.twin_bench`); the seconds are whole attempts (workspace, walled
evaluator run, report, score). A Go task's one-off build-cache warm-up is timed apart.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cogolf.evaluation.twin_bench import interleaved
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.gocache import cache_root, is_go_task, warm_cache
from cogolf.games.project.task import load_task
from cogolf.games.project.twinning import TwinMode


def find_tasks(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/task.json") if (p.parent / "solution").is_dir())


async def bench_task(task_dir: Path, repeat: int) -> dict[str, Any]:
    task = load_task(task_dir)
    warm_up = None
    if is_go_task(task) and not cache_root().is_dir():
        start = time.monotonic()
        warm_cache(task)
        warm_up = round(time.monotonic() - start, 2)

    async def attempt(twins: bool) -> dict[str, Any]:
        mode = TwinMode.DRAWN if twins else TwinMode.OFF
        result = await run_attempt(task, task_dir / "solution", entrant="bench", twins=mode)
        return result.to_json()

    cost = await interleaved(attempt, repeat)
    last = cost.last
    return {
        "task": task.name,
        "status": last["status"],
        "points": last["points"],
        "checks": f"{last['checks']['passed']}/{last['checks']['total']}",
        "twins": last["twins"],
        # a ratio means something only when both sides ran the same way
        "status_without_twins": cost.last_without["status"],
        **cost.to_json(),
        "time_limit_seconds": task.time_limit_seconds,
        "warm_up_seconds": warm_up,
    }
