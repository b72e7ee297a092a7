"""The project table: per task and total out of 5 x tasks (20 for the four leaderboard
projects), with each attempt's points and floor/signal checks, from the CLI and in a
league night's standings; a malformed breakdown in a result file is a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cogolf.league.publish import standings_for_dir
from cogolf.league.results import result_path
from cogolf.league.tables import render_games
from tests.league.solo_synth import write_manifest

REPO = Path(__file__).resolve().parents[3]
TASKS = ["bank_feed", "laravel_csv_import", "laravel_offline_sync", "shipping_quotes"]


def result(task: str, entrant: str, attempt: int, points: float, floor: tuple[int, int],
           signal: tuple[int, int], status: str = "ok") -> dict[str, Any]:
    return {"game": "project", "schema": 1, "task": task, "entrant": entrant,
            "attempt": attempt, "scale": "failure_weighted", "status": status,
            "points": points,
            "by_label": {"floor": {"passed": floor[0], "total": floor[1]},
                         "signal": {"passed": signal[0], "total": signal[1]},
                         "optional": {"passed": 0, "total": 0}}}


def results() -> list[dict[str, Any]]:
    out = []
    for task in TASKS:
        for n in range(1, 6):
            out.append(result(task, "alice", n, 1.0, (1, 1), (18, 18)))
    out.append(result("shipping_quotes", "bob", 1, 0.5, (1, 1), (17, 18)))
    out.append(result("shipping_quotes", "bob", 3, 0.0, (0, 1), (0, 18), "timeout"))
    return out


def table(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "project", "table", str(folder),
                           *extra], capture_output=True, text=True, cwd=REPO, timeout=60,
                          check=False)


def test_cli_table_is_out_of_20_with_a_breakdown_per_attempt(tmp_path: Path) -> None:
    for i, data in enumerate(results()):
        (tmp_path / f"{i}.json").write_text(json.dumps(data))
    done = table(tmp_path, "--tsv")
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert lines[0] == ["entrant", *[f"{t} (/5)" for t in TASKS], "total (/20)"]
    assert lines[1] == ["alice", "5.00", "5.00", "5.00", "5.00", "20.00"]
    assert lines[2] == ["bob", "0.00", "0.00", "0.00", "0.50", "0.50"]
    assert ["bob", "shipping_quotes", "0.50 F1/1 S17/18", "-", "0.00 F0/1 S0/18 timeout", "-",
            "-"] in lines
    assert ["alice", "bank_feed", *["1.00 F1/1 S18/18"] * 5] in lines
    rows = json.loads(table(tmp_path, "--json").stdout)
    assert rows[0]["out_of"] == 20
    assert rows[1]["breakdown"]["shipping_quotes"][0] == {
        "attempt": 1, "points": 0.5, "status": "ok", "floor": [1, 1], "signal": [17, 18]}


def test_a_malformed_breakdown_is_named(tmp_path: Path) -> None:
    for bad in ({"floor": {"passed": 3, "total": 1}}, {"signal": {"passed": True, "total": 1}},
                {"floor": [1, 1]}, "all"):
        data = result("shipping_quotes", "mallory", 1, 1.0, (1, 1), (1, 1))
        data["by_label"] = bad
        (tmp_path / "m.json").write_text(json.dumps(data))
        done = table(tmp_path)
        assert done.returncode == 2
        assert "m.json: by_label" in done.stderr and "Traceback" not in done.stderr


def test_league_project_table_shows_the_breakdown(tmp_path: Path) -> None:
    night = tmp_path / "n"
    write_manifest(night, "n", ["alice", "bob"], courses=[], commit0=[], project=TASKS,
                   attempts=5)
    for data in results():
        path = result_path(night, "n", "project", data["entrant"], data["task"],
                           data["attempt"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    doc = standings_for_dir(night)
    assert doc["problems"] == []
    text = "\n".join(render_games(doc))
    assert "20.00/20" in text and "0.50/20" in text
    assert "0.50 F1/1 S17/18" in text and "0.00 F0/1 S0/18 timeout" in text
