"""The session's real walled runners, one per course (imported by absolute name
everywhere, so the tests and the conftest that closes them share one cache)."""

from __future__ import annotations

import os
import shutil

import pytest

from cogolf.games.golf.courses import get_course
from cogolf.games.golf.runners.base import RunLimits, Runner
from cogolf.games.golf.runners.python_process import ProcessPythonRunner

FAST = RunLimits(per_test_seconds=0.5, per_hole_seconds=6.0)


def need_racket() -> None:
    if shutil.which("racket") is None:
        if os.environ.get("CI"):
            pytest.fail("racket must be installed in CI (.ci/run installs it)")
        pytest.skip("racket is not installed (apt-get install racket); CI never skips this")


_RUNNERS: dict[str, Runner] = {}


def runner_for(course: str) -> Runner:
    """One runner per course for the session; "python-process" is the Python course's
    fallback runner (one interpreter per hole), tested on its own."""
    if course == "racket":
        need_racket()
    if course not in _RUNNERS:
        _RUNNERS[course] = (
            ProcessPythonRunner(FAST) if course == "python-process"
            else get_course(course).runner(FAST)
        )
    return _RUNNERS[course]


def close_runners() -> None:
    for runner in _RUNNERS.values():
        runner.close()
    _RUNNERS.clear()
