"""Commit-0 on a real library from PyPI: its sdist ships its tests (needs the index)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from cogolf.games.commit0.layout import fetch_source
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.stubber import stub_source

REQUIREMENT = "cachetools==5.5.0"


@pytest.mark.slow
def test_real_library_original_skeleton_and_one_function(tmp_path: Path) -> None:
    task = asyncio.run(prepare(REQUIREMENT, tmp_path / "task", time_limit_seconds=120))
    assert task.package_paths == ("src/cachetools",)
    assert len(task.reference_ids) >= 100

    original = fetch_source(REQUIREMENT, tmp_path / "fetch")
    full = asyncio.run(score_submission(task, original, entrant="original", quality=False))
    assert full.status == "ok" and full.pass_rate == 1.0, full.notes

    skeleton = asyncio.run(score_submission(task, task.skeleton, quality=False))
    assert skeleton.status == "ok" and skeleton.pass_rate < 0.05

    # `cached` restored whole (its nested wrappers with it): cached(None) works again
    one = tmp_path / "one"
    shutil.copytree(task.skeleton, one)
    init = "src/cachetools/__init__.py"
    kept = frozenset(task.kept.get("cachetools", [])) | {"cached"}
    restored = stub_source((original / init).read_text(), "cachetools", kept)
    (one / init).write_text(restored.source)
    partial = asyncio.run(score_submission(task, one, quality=False))
    assert skeleton.pass_rate < partial.pass_rate < 1.0
    assert "tests.test_cached.NoneWrapperTest::test_decorator" not in partial.not_passed
