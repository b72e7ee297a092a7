"""The demo project task end to end (real walled pytest runs), ingest, and the table."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.project.attempt import ingest, run_attempt
from cogolf.games.project.results import ResultError, load_records, project_table, read_record
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import TaskError, load_task, parse_task

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "references" / "projects" / "csv_importer"
TEMPLATE = REPO / "deck" / "projects" / "csv_importer" / "template"
SOLUTION = DEMO / "solution"
FIXTURES = REPO / "tests" / "fixtures" / "reports"


def attempt(changes: Path, **kw: object):
    return asyncio.run(run_attempt(load_task(DEMO), changes, **kw))  # type: ignore[arg-type]


def test_good_solution_passes_every_check() -> None:
    result = attempt(SOLUTION, entrant="good", attempt=2)
    data = result.to_json()
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 1.0
    assert data["checks"]["failed"] == [] and data["checks"]["passed"] == data["checks"]["total"]
    assert data["tests"]["passed"] == data["tests"]["total"] >= 30
    assert data["walled"] is True
    assert (data["entrant"], data["attempt"]) == ("good", 2)


def test_naive_template_fails_many_checks(tmp_path: Path) -> None:
    overlay = tmp_path / "naive"
    overlay.mkdir()
    text = (TEMPLATE / "contacts_import.py").read_text()
    (overlay / "contacts_import.py").write_text(text + "\n# reviewed, unchanged logic\n")
    data = attempt(overlay).to_json()
    assert data["status"] == "ok"
    assert data["points"] == 0.0
    assert len(data["checks"]["failed"]) >= 10
    assert data["by_label"]["floor"]["passed"] > data["by_label"]["signal"]["passed"]
    assert "quoted-commas" in data["checks"]["failed"]


def test_one_failed_check_scores_half(tmp_path: Path) -> None:
    overlay = tmp_path / "almost"
    overlay.mkdir()
    text = (SOLUTION / "contacts_import.py").read_text()
    broken = text.replace('if name.startswith(_FORMULA_START):', 'if False:')
    assert broken != text
    (overlay / "contacts_import.py").write_text(broken)
    data = attempt(overlay).to_json()
    assert data["checks"]["failed"] == ["formula-injection-neutralised"]
    assert data["points"] == 0.5


def test_a_patch_is_applied(tmp_path: Path) -> None:
    work = tmp_path / "git"
    shutil.copytree(TEMPLATE, work / "a")
    shutil.copytree(TEMPLATE, work / "b")
    shutil.copy(SOLUTION / "contacts_import.py", work / "b" / "contacts_import.py")
    diff = subprocess.run(["git", "diff", "--no-index", "--no-prefix", "a", "b"], cwd=work,
                          capture_output=True, check=False).stdout
    assert diff
    patch = tmp_path / "changes.patch"
    patch.write_bytes(diff)
    assert attempt(patch).points == 1.0


def test_no_change_fails_every_check() -> None:
    data = attempt(TEMPLATE).to_json()
    assert data["status"] == "no_change" and data["points"] == 0.0
    assert data["checks"]["passed"] == 0


def test_empty_patch_is_no_change(tmp_path: Path) -> None:
    patch = tmp_path / "empty.patch"
    patch.write_text("")
    assert attempt(patch).score.status is AttemptStatus.NO_CHANGE


def test_bad_changes_are_reported(tmp_path: Path) -> None:
    overlay = tmp_path / "links"
    overlay.mkdir()
    (overlay / "contacts_import.py").symlink_to("/etc/passwd")
    data = attempt(overlay).to_json()
    assert data["status"] == "bad_changes" and "symbolic links" in data["notes"][0]
    patch = tmp_path / "bad.patch"
    patch.write_text("--- a/nothing.py\n+++ b/nothing.py\n@@ -1 +1 @@\n-x\n+y\n")
    data = attempt(patch).to_json()
    assert data["status"] == "bad_changes" and "does not apply" in data["notes"][0]


def test_timeout_scores_zero(tmp_path: Path) -> None:
    task_dir = tmp_path / "slow_task"
    shutil.copytree(DEMO, task_dir, ignore=shutil.ignore_patterns("solution"))
    spec = json.loads((task_dir / "task.json").read_text())
    spec["template"] = str(TEMPLATE)
    del spec["prompt"]
    spec["time_limit_seconds"] = 3
    (task_dir / "task.json").write_text(json.dumps(spec))
    overlay = tmp_path / "spin"
    overlay.mkdir()
    (overlay / "contacts_import.py").write_text(
        "def import_contacts(data):\n    while True:\n        pass\n")
    result = asyncio.run(run_attempt(load_task(task_dir), overlay))
    assert result.score.status is AttemptStatus.TIMEOUT
    assert result.points == 0.0 and result.score.checks_passed == 0


def test_missing_report_scores_zero(tmp_path: Path) -> None:
    task_dir = tmp_path / "quiet_task"
    shutil.copytree(DEMO, task_dir, ignore=shutil.ignore_patterns("solution"))
    spec = json.loads((task_dir / "task.json").read_text())
    spec["template"] = str(TEMPLATE)
    del spec["prompt"]
    spec["command"] = ["{python}", "-c", "print('ran, wrote nothing')"]
    (task_dir / "task.json").write_text(json.dumps(spec))
    result = asyncio.run(run_attempt(load_task(task_dir), SOLUTION))
    assert result.score.status is AttemptStatus.NO_REPORT
    assert result.points == 0.0


def test_ingest_only_task_refuses_attempts(tmp_path: Path) -> None:
    task = parse_task({"name": "go", "report_format": "go-test-json",
                       "checks": [{"id": "a", "label": "floor", "tests": ["p::T"]}]}, tmp_path)
    with pytest.raises(TaskError, match="cogolf project ingest"):
        asyncio.run(run_attempt(task, tmp_path))


def _ingest_task(tmp_path: Path, fmt: str, checks: list[dict[str, object]]) -> Path:
    task_dir = tmp_path / fmt
    task_dir.mkdir()
    (task_dir / "task.json").write_text(json.dumps(
        {"name": f"importer-{fmt}", "report_format": fmt, "checks": checks}))
    return task_dir


def test_ingest_go_report(tmp_path: Path) -> None:
    pkg = "example.com/importer"
    task_dir = _ingest_task(tmp_path, "go-test-json", [
        {"id": "plain", "label": "floor", "tests": [f"{pkg}::TestPlainRow"]},
        {"id": "invalid", "label": "signal", "tests": [f"{pkg}::TestInvalidRows"]},
        {"id": "dedupe", "label": "signal", "tests": [f"{pkg}::TestDedupe"]},  # hidden by panic
    ])
    result = ingest(load_task(task_dir), FIXTURES / "go" / "panic.json", entrant="gopher")
    assert result.score.failed_checks == ["invalid", "dedupe"]
    assert result.points == 0.2
    assert result.walled is None


def test_ingest_dart_report_and_bad_reports(tmp_path: Path) -> None:
    suite = "test/importer_test.dart"
    task_dir = _ingest_task(tmp_path, "dart-json", [
        {"id": "commas", "label": "floor",
         "tests": [f"{suite}::parseContacts handles quoted commas"]},
        {"id": "inject", "label": "signal", "tests": [f"{suite}::neutralises formula injection"]},
        {"id": "dupes", "label": "signal",
         "tests": [f"{suite}::parseContacts keeps the first of duplicate emails"]},
        {"id": "large", "label": "optional",
         "tests": [f"{suite}::parseContacts handles a 50k row file"]},
    ])
    task = load_task(task_dir)
    result = ingest(task, FIXTURES / "dart" / "reporter.json")
    assert result.score.failed_checks == ["dupes"]  # the error after testDone counts
    assert result.score.failed_optional == ["large"]  # skipped is not passed
    assert result.points == 0.5
    assert ingest(task, tmp_path / "absent.json").score.status is AttemptStatus.NO_REPORT
    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert ingest(task, empty).score.status is AttemptStatus.EMPTY_REPORT


def test_ingest_junit_bad_report(tmp_path: Path) -> None:
    task_dir = _ingest_task(tmp_path, "junit", [{"id": "a", "label": "floor", "tests": ["x::y"]}])
    result = ingest(load_task(task_dir), FIXTURES / "junit" / "truncated.xml")
    assert result.score.status is AttemptStatus.BAD_REPORT and result.points == 0.0


def _write(folder: Path, name: str, entrant: str, task: str, attempt: int, points: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({"game": "project", "schema": 1, "task": task,
                                           "entrant": entrant, "attempt": attempt,
                                           "points": points}))


def test_project_table_sums_attempts_and_tasks(tmp_path: Path) -> None:
    for i in range(1, 6):
        _write(tmp_path, f"a-csv-{i}.json", "alice", "csv", i, 1.0 if i < 5 else 0.5)
    _write(tmp_path, "a-go-1.json", "alice", "go", 1, 0.2)
    _write(tmp_path / "deeper", "b-csv-1.json", "bob", "csv", 1, 1.0)
    (tmp_path / "other-game.json").write_text(json.dumps({"game": "commit0"}))
    rows = project_table(load_records(tmp_path))
    assert [(r.entrant, r.per_task, r.total) for r in rows] == [
        ("alice", {"csv": 4.5, "go": 0.2}, 4.7),
        ("bob", {"csv": 1.0, "go": 0.0}, 1.0),
    ]
    assert rows[1].attempts == {"csv": 1, "go": 0}


def test_project_table_rejects_bad_and_duplicate_files(tmp_path: Path) -> None:
    _write(tmp_path, "one.json", "alice", "csv", 1, 1.0)
    _write(tmp_path, "two.json", "alice", "csv", 1, 0.5)
    with pytest.raises(ResultError, match="attempt 1 of alice on csv is also in"):
        project_table(load_records(tmp_path))
    with pytest.raises(ResultError, match=r"attempt must be an integer 1\.\.5"):
        read_record({"game": "project", "schema": 1, "task": "t", "entrant": "e",
                     "attempt": 6, "points": 1}, "x.json")
    with pytest.raises(ResultError, match=r"points must be a number within 0\.\.1"):
        read_record({"game": "project", "schema": 1, "task": "t", "entrant": "e",
                     "attempt": 1, "points": 3}, "x.json")


def test_cli_attempt_writes_a_result_file_the_table_reads(tmp_path: Path) -> None:
    out = tmp_path / "results" / "good-1.json"
    done = subprocess.run(
        [sys.executable, "-m", "cogolf", "project", "attempt", str(DEMO), str(SOLUTION),
         "--entrant", "good", "--attempt", "1", "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["points"] == 1.0
    table = subprocess.run([sys.executable, "-m", "cogolf", "project", "table", "--tsv",
                            str(tmp_path / "results")], capture_output=True, text=True,
                           cwd=REPO, timeout=60, check=False)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[1].split("\t") == ["good", "1.00", "1.00"]
