"""The Laravel CSV Import task: its score map against its PHPUnit evaluator, and
real attempts through the CLI (walled PHP runs over Debian's Laravel and PHPUnit)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.task import load_task
from tests.games.project.cli import project_attempt
from tests.games.project.soundness import assert_reference_fails_every_twin
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


def naive_overlay(root: Path, extra: dict[Path, str] | None = None) -> Path:
    """The template with its importer reviewed but unchanged, plus `extra` files."""
    naive = root / "naive"
    (naive / IMPORTER).parent.mkdir(parents=True)
    text = (TEMPLATE / IMPORTER).read_text(encoding="utf-8")
    (naive / IMPORTER).write_text(text + "\n// reviewed: the logic stays as it is\n")
    for rel, content in (extra or {}).items():
        (naive / rel).parent.mkdir(parents=True, exist_ok=True)
        (naive / rel).write_text(content, encoding="utf-8")
    return naive


@pytest.fixture(scope="module")
def naive_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("naive")
    return project_attempt(TASK, naive_overlay(root), root / "naive.json").result


@needs_php
@pytest.mark.slow
def test_naive_template_scores_zero(naive_result: dict[str, Any]) -> None:
    data = naive_result
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 0.0
    assert data["by_label"]["floor"] == {"passed": 1, "total": 1}  # the demo file works
    assert data["by_label"]["signal"]["passed"] <= 3
    failed = data["checks"]["failed"]
    assert "mixed-file-salvages-valid-rows" in failed and "quoted-commas" in failed
    assert data["checks"]["failed_optional"] == ["large-file-memory-is-bounded"]
    assert data["tests"]["total"] == 29 and data["notes"] == []  # no twin in any count


# Strips every <failure> and <error> from PHPUnit's --log-junit file once PHPUnit
# has written it (a shutdown function runs after the report is flushed).
STRIP_FAILURES = r"""
register_shutdown_function(static function (): void {
    $argv = $_SERVER['argv'] ?? [];
    $at = array_search('--log-junit', $argv, true);
    $path = $at === false ? null : ($argv[$at + 1] ?? null);
    $xml = $path === null ? false : @file_get_contents($path);
    if ($xml !== false) {
        $xml = preg_replace('#<(failure|error)\b[^>]*>.*?</\1>#s', '', $xml);
        file_put_contents($path, preg_replace('#<(failure|error)\b[^>]*/>#', '', $xml));
    }
});
"""


@needs_php
@pytest.mark.slow
def test_a_workspace_bootstrap_that_strips_failures_never_runs(
    tmp_path: Path, naive_result: dict[str, Any]
) -> None:
    # on main this scored 1 point: the evaluator ran the workspace's bootstrap first
    autoload = (TEMPLATE / "bootstrap" / "autoload.php").read_text(encoding="utf-8")
    changes = naive_overlay(tmp_path, {Path("bootstrap/autoload.php"): autoload + STRIP_FAILURES,
                                       Path("bootstrap/app.php"): "<?php\nexit(3);\n"})
    data = cli_attempt(TASK, changes, tmp_path / "strip.json")
    assert (data["status"], data["points"]) == ("ok", 0.0), data["notes"]
    assert data["checks"] == naive_result["checks"]  # what the honest template scores


@needs_php
@pytest.mark.slow
def test_app_code_that_strips_failures_from_the_report_is_tampered(tmp_path: Path) -> None:
    # the same forgery from the application's own code, which the evaluator must load:
    # only the twins see it (every twin passes with its original)
    importer = (TEMPLATE / IMPORTER).read_text(encoding="utf-8")
    forged = importer.replace("namespace App\\Services;",
                              "namespace App\\Services;\n" + STRIP_FAILURES, 1)
    changes = tmp_path / "forge"
    (changes / IMPORTER).parent.mkdir(parents=True)
    (changes / IMPORTER).write_text(forged, encoding="utf-8")
    run = project_attempt(TASK, changes, tmp_path / "forge.json")
    data = run.result
    assert (data["status"], data["points"]) == ("tampered", 0.0)
    assert data["checks"]["passed"] == 0 and data["tests"]["passed"] == 0
    assert any(re.fullmatch(r"28 of 28 hidden twin tests .* reported passed together with "
                            r"their originals: .*", n) for n in data["notes"]), data["notes"]
    assert "test_" not in run.stdout  # no twin, and no test, named


@needs_php
@pytest.mark.slow
def test_the_reference_fails_every_possible_twin() -> None:
    assert assert_reference_fails_every_twin(TASK, tests_total=29) == 191


# Small honest mistakes in the reference: each changes what some checks see, none
# may ever look like forgery (a twin and its original both passing).
HONEST_EDITS = [
    ("$this->counts['total']++;", "$this->counts['total'] += 2;"),
    ("$email === '' => 'missing_email',", "$email === '' => 'invalid_email',"),
    ("private const BATCH = 500;", "private const BATCH = 1;"),
    ("$email = strtolower(trim($fields[$columns['email']] ?? ''));",
     "$email = trim($fields[$columns['email']] ?? '');"),
    ("$name = \"'\".$name;", "$name = ' '.$name;"),
    ("'phone' => $phone === '' ? null : $phone];", "'phone' => $phone];"),
    ("return $this->counts + ['errors' => $this->errors];",
     "return $this->counts + ['errors' => array_reverse($this->errors)];"),
    ("$line = $records->key();", "$line = $records->key() + 1;"),
    ("'message' => self::MESSAGES[$reason]];", "'message' => $reason];"),
    ("isset($accepted[$email]) => 'duplicate_email',", ""),
    ("if (! mb_check_encoding($record, 'UTF-8')) {", "if (false) {"),
    ("$this->counts['skipped']++;", ""),
]


@needs_php
@pytest.mark.slow
def test_honest_mistakes_are_never_taken_for_forgery(tmp_path: Path) -> None:
    task = load_task(TASK)
    overlays = [overlay(tmp_path, f"edit{i}", SOLUTION, {IMPORTER: edit})
                for i, edit in enumerate(HONEST_EDITS)]

    async def all_attempts() -> list[Any]:
        gate = asyncio.Semaphore(2)  # two at a time: the machine has two cores

        async def one(changes: Path) -> Any:
            async with gate:
                return await run_attempt(task, changes)

        return await asyncio.gather(*(one(o) for o in overlays))

    results = asyncio.run(all_attempts())
    statuses = [(r.score.status, r.points) for r in results]
    assert all(status == "ok" for status, _ in statuses), statuses
    assert sum(points < 1.0 for _, points in statuses) >= 10, statuses  # the edits do bite


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
