"""The Laravel CSV Import task: its score map against its PHPUnit evaluator, and
real attempts through the CLI (walled PHP runs over Debian's Laravel and PHPUnit)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cogolf.games.project.task import load_task
from tests.games.project.cli import project_attempt
from tests.stacks import needs

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "references" / "projects" / "laravel_csv_import"
TEMPLATE = REPO / "deck" / "projects" / "laravel_csv_import" / "template"
SOLUTION = TASK / "solution"
IMPORTER = Path("app") / "Services" / "ContactImporter.php"
RECORDS = Path("app") / "Services" / "CsvRecords.php"

PHP_STACK = (
    Path("/usr/bin/php"),
    Path("/usr/bin/phpunit"),
    Path("/usr/share/php/Illuminate/autoload.php"),
)
needs_php = needs(
    all(p.exists() for p in PHP_STACK),
    "Debian's php-cli, php-sqlite3, php-laravel-framework and phpunit",
)


def cli_attempt(task_dir: Path, changes: Path, out: Path) -> dict[str, object]:
    return project_attempt(task_dir, changes, out).result


def overlay(tmp_path: Path, name: str, base: Path, edits: dict[Path, tuple[str, str]]) -> Path:
    """A copy of `base` (an overlay or the template) with text replacements applied."""
    root = tmp_path / name
    shutil.copytree(base, root)
    for rel, (old, new) in edits.items():
        text = (root / rel).read_text(encoding="utf-8")
        assert old in text, f"{rel}: {old!r} not found"
        (root / rel).write_text(text.replace(old, new), encoding="utf-8")
    return root


def test_score_map_matches_the_evaluator() -> None:
    task = load_task(TASK)
    labels = [c.label for c in task.checks]
    assert (labels.count("floor"), labels.count("signal"), labels.count("optional")) == (1, 27, 1)
    assert task.runnable and task.scale.name == "failure_weighted"
    assert task.prompt is not None and task.prompt.is_file()
    mapped = {t for c in task.checks for t in c.tests}
    defined = set()
    for source in (TASK / "evaluator").glob("*EvalTest.php"):
        methods = re.findall(r"public function (test_\w+)\(", source.read_text(encoding="utf-8"))
        defined |= {f"Eval.{source.stem}::{m}" for m in methods}
    assert mapped == defined  # every test is scored, every scored test exists
    assert len(defined) == 29


@needs_php
@pytest.mark.slow
def test_reference_scores_one_point(tmp_path: Path) -> None:
    data = cli_attempt(TASK, SOLUTION, tmp_path / "reference.json")
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 1.0
    assert data["checks"] == {"passed": 29, "total": 29, "failed": [], "failed_optional": []}
    assert data["tests"] == {"passed": 29, "total": 29, "complete": True}
    assert data["walled"] is True and data["entrant"] == "tester"


@needs_php
@pytest.mark.slow
def test_naive_template_scores_zero(tmp_path: Path) -> None:
    naive = tmp_path / "naive"
    (naive / IMPORTER).parent.mkdir(parents=True)
    text = (TEMPLATE / IMPORTER).read_text(encoding="utf-8")
    (naive / IMPORTER).write_text(text + "\n// reviewed: the logic stays as it is\n")
    data = cli_attempt(TASK, naive, tmp_path / "naive.json")
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 0.0
    assert data["by_label"]["floor"] == {"passed": 1, "total": 1}  # the demo file works
    assert data["by_label"]["signal"]["passed"] <= 3
    failed = data["checks"]["failed"]
    assert "mixed-file-salvages-valid-rows" in failed and "quoted-commas" in failed
    assert data["checks"]["failed_optional"] == ["large-file-memory-is-bounded"]


@needs_php
@pytest.mark.slow
def test_one_failed_check_scores_half_and_optional_does_not_count(tmp_path: Path) -> None:
    # Formula neutralisation removed (a counted check), the file read whole (the
    # optional memory check): 1 counted failure on the failure-weighted scale.
    changes = overlay(
        tmp_path,
        "almost",
        SOLUTION,
        {
            IMPORTER: ("if (in_array($name[0], self::FORMULA_START, true)) {", "if (false) {"),
            RECORDS: (
                "$handle = $this->open();\n        $line = 0;",
                "$handle = fopen('php://memory', 'w+b');\n"
                "        fwrite($handle, file_get_contents($this->path));\n"
                "        rewind($handle);\n        $line = 0;",
            ),
        },
    )
    data = cli_attempt(TASK, changes, tmp_path / "almost.json")
    assert data["checks"]["failed"] == ["formula-injection-neutralised"], data["notes"]
    assert data["checks"]["failed_optional"] == ["large-file-memory-is-bounded"]
    assert data["points"] == 0.5


@needs_php
@pytest.mark.slow
def test_hanging_importer_times_out_and_scores_zero(tmp_path: Path) -> None:
    task_dir = tmp_path / "short_task"
    shutil.copytree(TASK, task_dir, ignore=shutil.ignore_patterns("solution"))
    spec = json.loads((task_dir / "task.json").read_text(encoding="utf-8"))
    spec["template"], spec["prompt"] = str(TEMPLATE), str(TASK / spec["prompt"])
    spec["time_limit_seconds"] = 10
    (task_dir / "task.json").write_text(json.dumps(spec), encoding="utf-8")
    changes = overlay(
        tmp_path,
        "hang",
        SOLUTION,
        {
            IMPORTER: (
                "$csv->assertText();",
                "$csv->assertText();\n        while (true) {\n        }",
            ),
        },
    )
    data = cli_attempt(task_dir, changes, tmp_path / "hang.json")
    assert data["status"] == "timeout" and data["points"] == 0.0
    assert data["checks"]["passed"] == 0


@needs_php
@pytest.mark.slow
def test_process_exit_leaves_no_report_and_scores_zero(tmp_path: Path) -> None:
    changes = overlay(
        tmp_path,
        "exit",
        SOLUTION,
        {
            IMPORTER: ("$csv->assertText();", "$csv->assertText();\n        exit(0);"),
        },
    )
    data = cli_attempt(TASK, changes, tmp_path / "exit.json")
    # PHPUnit opens its report before the run: an empty file, or none at all
    assert data["status"] in ("empty_report", "no_report") and data["points"] == 0.0
