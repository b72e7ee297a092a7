"""Loading project task files, and the shipped demo task's own shape."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from cogolf.games.project.task import TaskError, load_task, parse_task

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "references" / "projects" / "csv_importer"


def test_demo_task_loads_with_twenty_plus_floor_and_signal_checks() -> None:
    task = load_task(DEMO)
    assert task.runnable
    labels = [c.label for c in task.checks]
    assert labels.count("floor") >= 8 and labels.count("signal") >= 8
    assert task.counted_checks >= 20
    assert task.template is not None and (task.template / "contacts_import.py").is_file()
    assert task.prompt is not None and "import_contacts" in task.prompt.read_text()
    # the public half lives under deck/, the hidden half under references/
    assert "deck" in task.template.parts and "references" in (task.evaluator_tests or DEMO).parts


def _base() -> dict[str, Any]:
    return {"name": "t", "report_format": "junit",
            "checks": [{"id": "a", "label": "floor", "tests": ["c::t"]}]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"report_format": "tap"}, "report_format 'tap'"),
        ({"checks": []}, "checks must be a non-empty list"),
        ({"checks": [{"id": "a", "label": "bonus", "tests": ["x"]}]}, "label must be one of"),
        ({"checks": [{"id": "a", "label": "floor", "tests": []}]}, "tests must be a non-empty"),
        ({"checks": [{"id": "a", "label": "floor", "tests": ["x"]},
                     {"id": "a", "label": "signal", "tests": ["y"]}]}, "duplicate check id 'a'"),
        ({"checks": [{"id": "a", "label": "optional", "tests": ["x"]}]}, "floor or signal"),
        ({"command": ["{python}", "{nope}"]}, "unknown placeholder"),
        ({"command": "pytest"}, "list of strings"),
        ({"time_limit_seconds": 0}, "time_limit_seconds"),
        ({"evaluator_dest": "../escape"}, "evaluator_dest"),
        ({"template": "missing-dir"}, "template 'missing-dir' is not a directory"),
        ({"scale": "steep"}, "unknown preset"),
        ({"colour": "red"}, "unknown field"),
    ],
)
def test_bad_task_files_name_the_field(
    change: dict[str, Any], message: str, tmp_path: Path
) -> None:
    data = copy.deepcopy(_base())
    data.update(change)
    with pytest.raises(TaskError, match=message):
        parse_task(data, tmp_path)


def test_unreadable_task_file(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="no task file"):
        load_task(tmp_path)
    (tmp_path / "task.json").write_text("{not json")
    with pytest.raises(TaskError, match="cannot read as JSON"):
        load_task(tmp_path)
    (tmp_path / "task.json").write_text(json.dumps([1]))
    with pytest.raises(TaskError, match="expected a JSON object"):
        load_task(tmp_path)
