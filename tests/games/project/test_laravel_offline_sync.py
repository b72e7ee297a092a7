"""The Offline Sync task (Laravel, PHPUnit) through `cogolf project attempt`, as a user runs it.

Needs Debian's php-cli, php-sqlite3, php-laravel-framework and phpunit (installed by CI).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.games.project.cli import project_attempt
from tests.games.project.soundness import assert_reference_fails_every_twin
from tests.games.project.test_laravel_csv_import import STRIP_FAILURES
from tests.stacks import needs

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "references" / "projects" / "laravel_offline_sync"
TEMPLATE = REPO / "deck" / "projects" / "laravel_offline_sync" / "template"
SOLUTION = TASK / "solution"
SERVICE = Path("app/Services/SyncService.php")

needs_php = needs(
    Path("/usr/bin/php").exists()
    and Path("/usr/share/php/Illuminate/autoload.php").exists()
    and Path("/usr/bin/phpunit").exists(),
    "Debian's php-cli, php-sqlite3, php-laravel-framework and phpunit",
)


def run_cli(task_dir: Path, changes: Path, out: Path) -> dict[str, Any]:
    return project_attempt(task_dir, changes, out, entrant="e", timeout=300).result


def overlay_with(tmp_path: Path, source: Path, old: str = "", new: str = "") -> Path:
    """`source` as an overlay with its SyncService changed (or just commented)."""
    overlay = tmp_path / "overlay"
    shutil.copytree(source, overlay)
    text = (overlay / SERVICE).read_text()
    changed = text.replace(old, new) if old else text + "\n// reviewed\n"
    assert changed != text
    (overlay / SERVICE).write_text(changed)
    return overlay


def variant_task(tmp_path: Path, **changes: Any) -> Path:
    """The task with some fields changed and its paths made absolute."""
    spec = json.loads((TASK / "task.json").read_text())
    for key in ("prompt", "template", "evaluator_tests"):
        spec[key] = str((TASK / spec[key]).resolve())
    spec.update(changes)
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    (task_dir / "task.json").write_text(json.dumps(spec))
    return task_dir


def test_score_map_names_every_evaluator_test_once() -> None:
    spec = json.loads((TASK / "task.json").read_text())
    mapped = [t for c in spec["checks"] for t in c["tests"]]
    found = []
    for path in sorted((TASK / "evaluator").glob("*EvalTest.php")):
        names = re.findall(r"public function (test_\w+)\(", path.read_text())
        found += [f"Tests.Eval.{path.stem}::{n}" for n in names]
    assert sorted(mapped) == sorted(found) and len(set(mapped)) == len(mapped) == 41
    labels = [c["label"] for c in spec["checks"]]
    assert (labels.count("floor"), labels.count("signal")) == (3, 38)
    assert spec["scale"] == "graduated"


def test_solution_overlay_only_changes_template_files() -> None:
    changed = [p.relative_to(SOLUTION) for p in SOLUTION.rglob("*") if p.is_file()]
    assert changed and all((TEMPLATE / p).is_file() for p in changed)


@needs_php
@pytest.mark.slow
def test_reference_scores_one_point(tmp_path: Path) -> None:
    data = run_cli(TASK, SOLUTION, tmp_path / "ref.json")
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 1.0
    assert data["checks"] == {"passed": 41, "total": 41, "failed": [], "failed_optional": []}
    assert data["walled"] is True


@pytest.fixture(scope="module")
def naive_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("naive")
    return run_cli(TASK, overlay_with(root, TEMPLATE), root / "naive.json")


@needs_php
@pytest.mark.slow
def test_naive_template_scores_zero(naive_result: dict[str, Any]) -> None:
    data = naive_result
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 0.0
    assert data["by_label"]["floor"] == {"passed": 3, "total": 3}
    assert data["by_label"]["signal"]["passed"] <= 10
    for check in (
        "retried-create-is-applied-once",
        "stale-update-is-a-conflict-and-keeps-newer-state",
        "malformed-json-body",
        "failed-change-log-write-on-create-leaves-no-note",
    ):
        assert check in data["checks"]["failed"]
    assert data["tests"]["total"] == 41 and data["notes"] == []  # no twin in any count


@needs_php
@pytest.mark.slow
def test_a_workspace_bootstrap_that_strips_failures_never_runs(
    tmp_path: Path, naive_result: dict[str, Any]
) -> None:
    # on main this scored 1 point: the workspace's bootstrap/app.php loads its
    # autoload.php, which the evaluator used; now it builds the application itself
    overlay = overlay_with(tmp_path, TEMPLATE)
    text = (TEMPLATE / "bootstrap" / "autoload.php").read_text()
    (overlay / "bootstrap" / "autoload.php").write_text(text + STRIP_FAILURES)
    data = run_cli(TASK, overlay, tmp_path / "strip.json")
    assert (data["status"], data["points"]) == ("ok", 0.0), data["notes"]
    assert data["checks"] == naive_result["checks"]  # what the honest template scores


@needs_php
@pytest.mark.slow
def test_the_reference_fails_every_possible_twin() -> None:
    assert assert_reference_fails_every_twin(TASK, tests_total=41) == 115


@needs_php
@pytest.mark.slow
def test_one_missing_guarantee_costs_one_check(tmp_path: Path) -> None:
    # No page cap: only the paging check fails; 1 of 41 is within 5%, worth 0.8.
    overlay = overlay_with(tmp_path, SOLUTION, "PAGE_SIZE = 500;", "PAGE_SIZE = 100000;")
    data = run_cli(TASK, overlay, tmp_path / "uncapped.json")
    assert data["checks"]["failed"] == ["feed-pages-are-capped-and-complete"]
    assert data["points"] == 0.8


@needs_php
@pytest.mark.slow
def test_a_hanging_service_times_out_and_scores_zero(tmp_path: Path) -> None:
    overlay = overlay_with(
        tmp_path, SOLUTION, "$device = $input['device_id'];", "while (true) { usleep(1000); }"
    )
    data = run_cli(variant_task(tmp_path, time_limit_seconds=8), overlay, tmp_path / "hang.json")
    assert (data["status"], data["points"]) == ("timeout", 0.0)
    assert data["checks"]["passed"] == 0


@needs_php
@pytest.mark.slow
def test_an_evaluator_stopped_before_its_report_scores_zero(tmp_path: Path) -> None:
    overlay = overlay_with(tmp_path, TEMPLATE, "class SyncService\n{",
                           "exit(0);\n\nclass SyncService\n{")
    data = run_cli(TASK, overlay, tmp_path / "exit.json")
    assert (data["status"], data["points"]) == ("no_report", 0.0)
