"""`cogolf commit0 lite`: the benchmark's lite libraries prepared from PyPI and checked
(the original scores 1.0, the skeleton near 0), reference ids beside the benchmark's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.lite import BY_NAME, LITE

# small ones: no heavy dependency, a short suite
LIBRARIES = ("voluptuous", "tinydb", "deprecated")


def cogolf(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "commit0", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_the_split_is_the_benchmarks() -> None:
    assert len(LITE) == 16
    assert {"tinydb", "simpy", "deprecated", "wcwidth", "voluptuous", "cachetools", "imapclient",
            "marshmallow", "jinja", "cookiecutter", "portalocker", "parsel", "pyjwt", "chardet",
            "babel", "minitorch"} == set(BY_NAME)


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    done = cogolf("lite", "--out", str(tmp_path / "o"), "--only", "tinydb,numpy")
    assert done.returncode == 2 and "not in the lite split: numpy" in done.stderr
    done = cogolf("lite", "--out", str(tmp_path / "o"), "--git", "tinydb=/nowhere")
    assert done.returncode == 2 and "expected NAME=REPO@SHA" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o" / "tinydb").exists()
    # the benchmark's minitorch is not on PyPI: said so, nothing fetched
    done = cogolf("lite", "--out", str(tmp_path / "m"), "--only", "minitorch", "--json")
    row = json.loads(done.stdout)[0]
    assert done.returncode == 0 and row["status"] == "unavailable"
    assert "--git minitorch=REPO@SHA" in row["reason"]


@pytest.mark.slow
@pytest.mark.network
def test_three_lite_libraries_from_pypi(tmp_path: Path) -> None:
    done = cogolf("lite", "--out", str(tmp_path), "--only", ",".join(LIBRARIES),
                  "--time-limit", "300", "--json", timeout=900)
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    assert set(rows) == set(LIBRARIES), done.stderr[-2000:]
    for name, row in rows.items():
        assert row["status"] == "ok", row["reason"]
        assert row["original"] == 1.0
        assert row["skeleton"] < 0.05
        # within a few ids of the benchmark's own list for that library
        assert abs(row["reference_ids"] - row["benchmark_ids"]) <= 3, row
        assert row["prepare_seconds"] > 0 and row["score_seconds"] > 0
        task = json.loads((tmp_path / name / "task" / "task.json").read_text())
        assert task["reference_ids"] and task["prepare"]["collect_errors"] == []
    assert done.returncode == 0
    assert json.loads((tmp_path / "lite.json").read_text())[0]["name"] == LIBRARIES[0]
