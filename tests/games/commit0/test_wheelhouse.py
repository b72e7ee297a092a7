"""Dependencies are resolved when a task is prepared and installed offline at scoring.

A small library built with flit-core (not in the toolbox) that needs cachetools
at run time: `prepare` puts both wheels in the task's wheelhouse (needs the
index); scoring installs from there only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission

PYPROJECT = """[build-system]
requires = ["flit_core>=3.4,<4"]
build-backend = "flit_core.buildapi"

[project]
name = "memo"
version = "1.0.0"
description = "Memoised squares."
dependencies = ["cachetools==5.5.0"]
"""
INIT = '''"""Memoised squares."""
from cachetools import LRUCache, cached


@cached(LRUCache(maxsize=8))
def square(n):
    return n * n
'''
TESTS = """from memo import square


def test_square():
    assert square(3) == 9


def test_cached():
    assert square(4) == square(4) == 16
"""


@pytest.mark.slow
def test_dependencies_come_from_the_wheelhouse(tmp_path: Path) -> None:
    lib = tmp_path / "memo"
    (lib / "memo").mkdir(parents=True)
    (lib / "tests").mkdir()
    (lib / "pyproject.toml").write_text(PYPROJECT)
    (lib / "memo" / "__init__.py").write_text(INIT)
    (lib / "tests" / "test_memo.py").write_text(TESTS)
    task = asyncio.run(prepare(str(lib), tmp_path / "task", time_limit_seconds=60))
    wheels = sorted(p.name.split("-")[0].lower() for p in task.wheelhouse.glob("*.whl"))
    assert wheels == ["cachetools", "flit_core"]
    assert len(task.reference_ids) == 2
    full = asyncio.run(score_submission(task, lib, quality=False))
    assert full.status == "ok" and full.pass_rate == 1.0, full.notes
    skeleton = asyncio.run(score_submission(task, task.skeleton, quality=False))
    assert skeleton.status == "ok" and skeleton.pass_rate == 0.0, skeleton.notes
