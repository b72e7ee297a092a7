"""Shared fixtures for the golf tests: the real holes and real walled runners."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from cogolf.games.golf import play
from cogolf.games.golf.holes import HoleSet, load_holes
from cogolf.games.golf.scoring import HoleResult
from tests.games.golf.runners import close_runners, runner_for


@pytest.fixture(scope="session")
def holes() -> HoleSet:
    return load_holes()


@pytest.fixture(scope="session", autouse=True)
def _close_runners() -> Iterator[None]:
    yield
    close_runners()


@pytest.fixture(scope="session")
def judge(holes: HoleSet) -> Callable[[str, str, str | bytes], HoleResult]:
    """judge(course, hole_key, source) runs one file on the hole's scoring set."""

    def run(course: str, key: str, source: str | bytes) -> HoleResult:
        data = source.encode() if isinstance(source, str) else source
        hole = holes.hole(key)
        batch = asyncio.run(play.run_attempt(runner_for(course), hole, data))
        return play.judge_attempts(hole, [data], [batch])

    return run
