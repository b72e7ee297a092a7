"""What the offline games' results say, through the CLI (issue 18)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.run import cogolf

ROOT = Path(__file__).resolve().parents[2]
CSV_TASK = ROOT / "references" / "projects" / "csv_importer"
TEXTKIT = ROOT / "references" / "commit0" / "textkit"


def test_an_unchanged_template_is_no_change_without_check_results(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "r" / "1.json"
    done = cogolf(
        "project",
        "attempt",
        str(CSV_TASK),
        str(tmp_path / "empty"),
        "--entrant",
        "al",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "no_change" and result["points"] == 0.0
    assert result["checks"]["ran"] is False
    assert result["checks"]["failed"] == [] and result["checks"]["failed_optional"] == []
    assert result["by_label"] == {}
    table = cogolf("project", "table", "--tsv", str(tmp_path / "r")).stdout.splitlines()
    assert table[-1].split("\t")[2] == "0.00 no_change"  # no F/S check counts


@pytest.mark.slow
def test_commit0_lint_count_says_what_ruff_flagged(tmp_path: Path) -> None:
    task, sub = tmp_path / "task", tmp_path / "sub"
    prepared = cogolf("commit0", "prepare", str(TEXTKIT), "--out", str(task), timeout=300)
    assert prepared.returncode == 0, prepared.stderr
    shutil.copytree(task / "skeleton", sub)
    module = next(p for p in sorted(sub.rglob("*.py")) if p.name != "__init__.py")
    module.write_text("import os\n" + module.read_text())
    done = cogolf("commit0", "score", str(task), str(sub), timeout=600)
    assert done.returncode == 0, done.stderr
    lint = json.loads(done.stdout)["lint"]
    # "F401 x3, I001 x5; path:line CODE message; ..." - each rule with its count, then
    # the first findings
    by_rule = dict(part.split(" x") for part in lint["detail"].split(";")[0].split(", "))
    assert "F401" in by_rule and sum(int(n) for n in by_rule.values()) == lint["count"]
    assert "imported but unused" in lint["detail"] or "Import block" in lint["detail"]


def test_generated_folders_are_git_ignored() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    generated = [
        "league/example/standings.json",
        "replays/example/example-a-vs-b.ndjson",
        "replays/example/logs/x.log",
        "replays/play-1.ndjson",
        "results/golf/x.json",
    ]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *generated],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert sorted(done.stdout.split()) == sorted(generated)
    kept = subprocess.run(
        ["git", "check-ignore", "--no-index", "league/example.toml", "replays/.gitkeep"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert kept.stdout == ""
