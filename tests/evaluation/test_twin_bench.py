"""`cogolf bench commit0` and `cogolf bench project`: twins on and off side by side."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "bench", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600, check=False)


def check_cost(row: dict[str, object]) -> None:
    for what in ("seconds", "cpu"):
        on, off = row[f"{what}_with_twins"], row[f"{what}_without"]
        assert isinstance(on, list) and isinstance(off, list) and len(on) == len(off) == 1
        assert on[0] > 0 and off[0] > 0
        assert row[f"{what}_ratio"] == round(row[f"{what}_median_with_twins"]  # type: ignore[operator]
                                             / row[f"{what}_median_without"], 3)  # type: ignore[operator]


@pytest.mark.slow
def test_both_benches_score_with_and_without_twins() -> None:
    done = bench("commit0", "--repeat", "1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(done.stdout)
    assert (row["task"], row["status"], row["pass_rate"], row["twins"]) == ("textkit", "ok", 1.0, 8)
    check_cost(row)
    done = bench("project", "--task", "csv_importer", "--repeat", "1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(done.stdout)
    assert (row["task"], row["status"], row["points"], row["twins"]) == ("csv_importer", "ok",
                                                                          1.0, 8)
    check_cost(row)


def test_bench_project_names_the_shipped_tasks_when_one_is_unknown() -> None:
    done = bench("project", "--task", "nope")
    assert done.returncode == 2 and "'nope' is not a shipped task" in done.stderr
    assert "csv_importer" in done.stderr
    assert bench("project", "--task", "../csv_importer").returncode == 2
    assert bench("commit0", "--repeat", "0").returncode == 2
