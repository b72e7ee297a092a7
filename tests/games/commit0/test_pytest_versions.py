"""A task runs on the pytest its library needs, and every layer holds on it: the results
plugin, the per-test time limit, twins and canaries, on pytest 7 and 8 as on the runner's
(the wheels come from PyPI, resolved into the task's wheelhouse)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from tests import forgeries

REPO = Path(__file__).resolve().parents[3]
TEXTKIT = REPO / "references" / "commit0" / "textkit"


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize(("asked", "version"), [("pytest==7.4.4", "7.4.4"),
                                                ("pytest>=8.3,<8.4", "8.3.")])
def test_every_layer_holds_on_the_tasks_pytest(tmp_path: Path, asked: str, version: str) -> None:
    task = asyncio.run(prepare(str(TEXTKIT), tmp_path / "task", time_limit_seconds=300,
                               test_time_limit_seconds=2, requirements=(asked,)))
    assert task.prepare["dependencies"]["pytest"].startswith(f"pytest {version}")
    assert any(w.name.startswith(f"pytest-{version}") for w in task.wheelhouse.glob("*.whl"))
    assert task.prepare["check"]["status"] == "ok" and len(task.reference_ids) == 48

    def score(submission: Path) -> dict[str, object]:
        return asyncio.run(score_submission(task, submission, quality=False)).to_json()

    empty = score(task.skeleton)
    assert empty["status"] == "ok" and empty["passed"] == 0, empty["notes"]
    # a test that hangs fails alone at the limit
    hang = tmp_path / "hang"
    shutil.copytree(TEXTKIT, hang)
    wrap = hang / "src" / "textkit" / "wrap.py"
    wrap.write_text(wrap.read_text().replace("    if width < 1:\n",
                                             "    while True: pass\n    if width < 1:\n"))
    data = score(hang)
    assert data["status"] == "ok" and data["passed"] == 42, data["notes"]
    assert data["counts"]["over_test_time_limit"] == 6  # type: ignore[index]
    # a hookwrapper turning failures into passes: the twins and canaries see it
    forger = tmp_path / "forger"
    shutil.copytree(task.skeleton, forger)
    init = forger / "src" / "textkit" / "__init__.py"
    init.write_text(forgeries.HOOKWRAPPER + "\n" + init.read_text())
    data = score(forger)
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0, data["notes"]
