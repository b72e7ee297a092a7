"""The example night of the project leaderboard's four tasks passes `league check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NIGHT = REPO / "league" / "projects.toml"
TASKS = ["laravel_csv_import", "laravel_offline_sync", "bank_feed", "shipping_quotes"]


def check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "league", "check", str(path)],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)


def test_the_night_lists_the_four_tasks_five_attempts_each() -> None:
    text = NIGHT.read_text()
    for task in TASKS:
        assert f'"../references/projects/{task}"' in text
    assert "attempts = 5" in text


def test_the_night_checks() -> None:
    done = check(NIGHT)
    assert done.returncode == 0, done.stderr
    for task in TASKS:
        assert task in done.stdout


def test_the_go_task_night_checks(tmp_path: Path) -> None:
    night = tmp_path / "league" / "go.toml"
    night.parent.mkdir()
    text = NIGHT.read_text().replace("../references", str(REPO / "references"))
    kept = [line for line in text.splitlines()
            if "references/projects/laravel" not in line and "bank_feed" not in line]
    night.write_text("\n".join(kept) + "\n")
    done = check(night)
    assert done.returncode == 0, done.stderr
    assert "shipping_quotes" in done.stdout
