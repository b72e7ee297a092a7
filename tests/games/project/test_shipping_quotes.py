"""The Shipping Quotes task (Go) through `cogolf project attempt`, as a user runs it:
the reference scores 1 point, the naive template 0, an endless attempt times out."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from cogolf.games.project.gocache import warm_cache
from cogolf.games.project.task import load_task
from tests.games.project.cli import project_attempt
from tests.stacks import needs

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "references" / "projects" / "shipping_quotes"
TEMPLATE = REPO / "deck" / "projects" / "shipping_quotes" / "template"
SOLUTION = TASK / "solution"

pytestmark = [
    pytest.mark.slow,
    needs(shutil.which("go") is not None, "Debian's golang-go"),
]


def attempt(task: Path, changes: Path, tmp_path: Path, timeout: float = 600) -> dict[str, Any]:
    return project_attempt(task, changes, tmp_path / "result.json", timeout=timeout).result


def test_task_has_19_groups_one_floor() -> None:
    task = json.loads((TASK / "task.json").read_text())
    labels = [c["label"] for c in task["checks"]]
    assert (len(labels), labels.count("floor"), labels.count("signal")) == (19, 1, 18)
    assert task["scale"] == "failure_weighted"
    names = {t.split("::")[1] for c in task["checks"] for t in c["tests"]}
    source = "".join(p.read_text() for p in (TASK / "evaluator").glob("*_test.go"))
    assert {n for n in names if f"func {n}(t *testing.T)" in source} == names


def test_reference_scores_one_point(tmp_path: Path) -> None:
    data = attempt(TASK, SOLUTION, tmp_path)
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 1.0
    assert data["checks"] == {"passed": 19, "total": 19, "failed": [], "failed_optional": []}
    assert data["tests"]["complete"] is True and data["walled"] is True


def test_naive_template_scores_zero(tmp_path: Path) -> None:
    overlay = tmp_path / "naive"
    overlay.mkdir()
    text = (TEMPLATE / "service.go").read_text()
    (overlay / "service.go").write_text(text + "\n// reviewed, unchanged logic\n")
    data = attempt(TASK, overlay, tmp_path)
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 0.0
    assert data["by_label"]["floor"] == {"passed": 1, "total": 1}
    assert data["by_label"]["signal"]["passed"] <= 5
    for check in ("concurrency-overlap", "carrier-timeout", "panicking-carrier-isolated",
                  "cache-hit", "coalesced-misses"):
        assert check in data["checks"]["failed"]


def test_an_endless_attempt_scores_zero_with_a_timeout(tmp_path: Path) -> None:
    # the task as shipped, with a short time limit (the build cache is warmed outside it)
    task = json.loads((TASK / "task.json").read_text())
    for key in ("prompt", "template", "evaluator_tests"):
        task[key] = str((TASK / task[key]).resolve())
    task["time_limit_seconds"] = 45
    short = tmp_path / "task"
    short.mkdir()
    (short / "task.json").write_text(json.dumps(task))
    overlay = tmp_path / "endless"
    overlay.mkdir()
    (overlay / "spin.go").write_text("package shippingquotes\n\nfunc init() {\n\tfor {\n\t}\n}\n")
    assert warm_cache(load_task(TASK)) is not None  # built outside any time limit
    start = time.monotonic()
    data = attempt(short, overlay, tmp_path)
    assert time.monotonic() - start < 45 + 30  # stopped at the limit, not at go's own watchdog
    assert data["status"] == "timeout"
    assert data["points"] == 0.0
    assert any("limit" in note for note in data["notes"]), data["notes"]


def test_forged_test_events_without_the_evaluators_end_score_zero(tmp_path: Path) -> None:
    # the candidate's package prints a passing run for every group and exits before
    # any test runs: the run never reaches the evaluator's own end marker
    names = [t.split("::")[1] for c in json.loads((TASK / "task.json").read_text())["checks"]
             for t in c["tests"]]
    forged = "".join(f"=== RUN   {n}\\n--- PASS: {n} (0.00s)\\n" for n in names) + "PASS\\n"
    overlay = tmp_path / "forge"
    overlay.mkdir()
    (overlay / "forge.go").write_text(
        'package shippingquotes\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
        f'func init() {{\n\tfmt.Print("{forged}")\n\tos.Exit(0)\n}}\n')
    data = attempt(TASK, overlay, tmp_path)
    assert data["points"] == 0.0
    assert data["status"] in ("empty_report", "no_report")
