"""Driving a solo golf match with an in-process policy, journaled as NDJSON.

The replay has a header line, one line per event as it happens (flushed), and a
result line, like a match's. Policies run in a worker thread so a slow one meets
its deadline instead of blocking the loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import IO, Any

from cogolf.golf import play
from cogolf.golf.courses import Course
from cogolf.golf.holes import HoleSet
from cogolf.golf.policy import Policy
from cogolf.golf.runners.base import RunLimits, Runner
from cogolf.golf.scoring import HoleResult, course_totals
from cogolf.golf.solo import SoloMatch

REPLAY_FORMAT = "cogolf-golf-replay/1"


class Journal:
    def __init__(self, out: IO[str] | None) -> None:
        self.out = out

    def write(self, record: dict[str, Any]) -> None:
        if self.out is not None:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False, default=str)
            self.out.write(line + "\n")
            self.out.flush()


async def _ask(policy: Policy, obs: dict[str, Any], deadline: float) -> tuple[bool, Any]:
    try:
        return True, await asyncio.wait_for(asyncio.to_thread(policy, obs), deadline)
    except TimeoutError:
        return False, None
    except Exception as exc:
        return True, {"error": f"policy raised {type(exc).__name__}"}


async def play_solo(
    course: Course, holes: HoleSet, policy: Policy, runner: Runner, limits: RunLimits,
    *, model: str, deadline_seconds: float, replay: Path | None,
) -> list[HoleResult]:
    match = SoloMatch(course, holes, limits, deadline_seconds)
    handle = replay.open("w", encoding="utf-8") if replay else None
    journal = Journal(handle)
    try:
        journal.write({"type": "header", "format": REPLAY_FORMAT, "course": course.name,
                       "model": model, "holes_version": holes.version, "time": time.time()})
        results: list[HoleResult] = []
        while not match.done:
            hole = match.hole
            obs = match.next_observation()
            journal.write({"type": "observation", "hole": hole.key, "index": match.index,
                           "retry": "error" in obs})
            ok, reply = await _ask(policy, obs, deadline_seconds)
            event = match.receive(reply) if ok else match.deadline_passed()
            journal.write(event)
            if event["type"] == "golf_retry":
                continue
            source = match.sources[hole.key]
            if source is None:
                result = play.judge_attempts(hole, [], [])
            else:
                batch = await play.run_attempt(runner, hole, source)
                result = play.judge_attempts(hole, [source], [batch])
            results.append(result)
            journal.write({"type": "verdict", "hole": hole.key, "score": result.score,
                           "bytes": result.bytes, "status": result.status, "reason": result.reason,
                           "tests_passed": result.tests_passed, "tests_total": result.tests_total})
        totals = course_totals(results)
        journal.write({"type": "result", "score": totals.score, "holes_passed": totals.holes_passed,
                       "tests_passed": totals.tests_passed, "tests_total": totals.tests_total})
        return results
    finally:
        if handle is not None:
            handle.close()
