"""The Shipping Quotes task (Go) through `cogolf project attempt`, as a user runs it:
the reference scores 1 point, the naive template 0, an endless attempt times out."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from cogolf.games.project.gocache import warm_cache
from cogolf.games.project.task import load_task
from tests.games.project.cli import project_attempt
from tests.games.project.soundness import assert_reference_fails_every_twin
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


def test_the_reference_fails_every_possible_twin() -> None:
    assert assert_reference_fails_every_twin(TASK, tests_total=19) == 195


# The candidate's package, run inside the test binary before any test: it prints a
# passing run for NAMES (and, FROM_FILES, every test of the copied files) and the end
# marker (found in a copied file, or FROM_ENV the environment), then exits.
FORGER = """package shippingquotes

import (
\t"fmt"
\t"os"
\t"path/filepath"
\t"regexp"
)

var (
\ttestName = regexp.MustCompile(`func (Test\\w+)\\(t \\*testing`)
\tmarker   = regexp.MustCompile(`cogolf-evaluator-end ([0-9a-f]{32})`)
)

func init() {
\tnames := []string{NAMES}
\tend := ""
\tfiles, _ := filepath.Glob("*.go")
\tfor _, f := range files {
\t\tb, _ := os.ReadFile(f)
\t\tfor _, m := range testName.FindAllStringSubmatch(string(b), -1) {
\t\t\tif FROM_FILES {
\t\t\t\tnames = append(names, m[1])
\t\t\t}
\t\t}
\t\tif m := marker.FindStringSubmatch(string(b)); m != nil {
\t\t\tend = m[1]
\t\t}
\t}
\tif FROM_ENV {
\t\tend = os.Getenv("COGOLF_EVALUATOR_END")
\t}
\tfor _, n := range names {
\t\tfmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", n, n)
\t}
\tfmt.Printf("PASS\\n\\ncogolf-evaluator-end %s 0\\n", end)
\tos.Exit(0)
}
"""


def forger(tmp_path: Path, *, real_names: bool, from_files: bool, from_env: bool) -> Path:
    names = [t.split("::")[1] for c in json.loads((TASK / "task.json").read_text())["checks"]
             for t in c["tests"]]
    source = (FORGER.replace("NAMES", ", ".join(f'"{n}"' for n in names) if real_names else "")
              .replace("FROM_FILES", str(from_files).lower())
              .replace("FROM_ENV", str(from_env).lower()))
    overlay = tmp_path / "forge"
    overlay.mkdir()
    (overlay / "forge.go").write_text(source)
    return overlay


def test_a_marker_read_from_the_copied_source_is_not_there(tmp_path: Path) -> None:
    # on main this scored 1 point: the marker sat in evaluator_tests/zz_end_test.go
    data = attempt(TASK, forger(tmp_path, real_names=False, from_files=True, from_env=False),
                   tmp_path)
    assert data["points"] == 0.0
    assert data["status"] in ("empty_report", "no_report")


@pytest.mark.parametrize(
    ("real_names", "from_files", "caught_by"),
    [
        (False, True, r"16 of 16 hidden twin tests .* reported passed together with their"),
        (True, False, r"16 test\(s\) were reported under a name this run's evaluator did not"),
    ],
    ids=["every-test-in-the-files", "the-real-names"],
)
def test_a_forged_run_with_the_marker_is_tampered(
    tmp_path: Path, real_names: bool, from_files: bool, caught_by: str
) -> None:
    # the marker read from the environment: a passing run of every test of the copied
    # files (twins included), or of the real names an earlier result revealed (the 16
    # twinned tests carry other names in this run)
    changes = forger(tmp_path, real_names=real_names, from_files=from_files, from_env=True)
    run = project_attempt(TASK, changes, tmp_path / "result.json")
    data = run.result
    assert (data["status"], data["points"], data["checks"]["passed"]) == ("tampered", 0.0, 0)
    assert any(re.match(caught_by, n) for n in data["notes"]), data["notes"]
    assert "Test" not in run.stdout  # no twin, and no test, named
