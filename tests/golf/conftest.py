"""Shared fixtures for the golf tests: the real holes and real walled runners."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable

import pytest

from cogolf.golf import play
from cogolf.golf.courses import get_course
from cogolf.golf.holes import HoleSet, load_holes
from cogolf.golf.runners.base import RunLimits, Runner
from cogolf.golf.scoring import HoleResult

FAST = RunLimits(per_test_seconds=0.5, per_hole_seconds=6.0)


@pytest.fixture(scope="session")
def holes() -> HoleSet:
    return load_holes()


def need_racket() -> None:
    if shutil.which("racket") is None:
        if os.environ.get("CI"):
            pytest.fail("racket must be installed in CI (.ci/run installs it)")
        pytest.skip("racket is not installed (apt-get install racket); CI never skips this")


_RUNNERS: dict[str, Runner] = {}


def runner_for(course: str) -> Runner:
    if course == "racket":
        need_racket()
    if course not in _RUNNERS:
        _RUNNERS[course] = get_course(course).runner(FAST)
    return _RUNNERS[course]


@pytest.fixture(scope="session")
def judge(holes: HoleSet) -> Callable[[str, str, str | bytes], HoleResult]:
    """judge(course, hole_key, source) runs one file on the hole's scoring set."""

    def run(course: str, key: str, source: str | bytes) -> HoleResult:
        data = source.encode() if isinstance(source, str) else source
        hole = holes.hole(key)
        batch = asyncio.run(play.run_attempt(runner_for(course), hole, data))
        return play.judge_attempts(hole, [data], [batch])

    return run
