"""Result files and the leaderboard's rankings and tie-breaks."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.golf import leaderboard
from cogolf.games.golf.results import (
    ResultDoc,
    ResultError,
    new_result,
    read_result,
    read_results,
    write_result,
)
from cogolf.games.golf.scoring import HoleResult

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def hole(key: str, size: int, passed: int, total: int) -> HoleResult:
    pen = 1000.0 * (1 - passed / total) ** 2
    return HoleResult(hole=key, title=key, difficulty="easy", bytes=size, tests_passed=passed,
                      tests_total=total, penalty=pen, score=size + pen,
                      status="passed" if passed == total else "failed",
                      reason="" if passed == total else "Failed tests")


def doc(model: str, course: str, holes: list[HoleResult], run: str = "r1",
        minutes: int = 0) -> ResultDoc:
    return new_result(model, course, "golf-1", holes, run_id=run,
                      now=T0 + dt.timedelta(minutes=minutes))


def test_result_round_trip_and_bad_files(tmp_path: Path) -> None:
    d = doc("m/odel 1", "python", [hole("a", 10, 2, 2)])
    path = write_result(tmp_path, d)
    assert path.name == "m_odel_1.python.r1.json"
    assert read_result(path) == d
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text('{"format": "x"}')
    loaded = read_results(tmp_path)
    assert loaded.docs == [d]
    assert len(loaded.errors) == 2 and any("broken.json" in e for e in loaded.errors)
    with pytest.raises(ResultError, match="model"):
        new_result("", "python", "golf-1", [])


def test_best_run_per_model_and_each_tie_break() -> None:
    docs = [
        # a model's best run counts, not its latest
        doc("best", "python", [hole("a", 40, 2, 2)], "r1"),
        doc("best", "python", [hole("a", 50, 2, 2)], "r2", minutes=5),
        # equal score 40: more holes passed ranks first
        doc("holes", "python", [hole("a", 20, 1, 1), hole("b", 20, 1, 1)]),
        # equal score and holes passed: more tests passed ranks first
        doc("fewtests", "python", [hole("a", 40, 1, 1)]),
    ]
    rows = leaderboard.course_board(docs, "python")
    assert [(r.rank, r.model, r.score) for r in rows] == [
        (1, "holes", 40.0), (2, "best", 40.0), (3, "fewtests", 40.0)]
    assert rows[1].run_id == "r1"


def test_ties_on_tests_then_bytes_then_shared_rank() -> None:
    # equal score: holes passed, then tests passed, then raw bytes; all equal shares a rank
    t1 = ResultDoc(model="t1", course="rust", run_id="1", created="x", holes_version="v",
                   totals=_totals(100.0, 1, 5, 60), holes=[])
    t2 = ResultDoc(model="t2", course="rust", run_id="1", created="x", holes_version="v",
                   totals=_totals(100.0, 1, 7, 60), holes=[])
    t3 = ResultDoc(model="t3", course="rust", run_id="1", created="x", holes_version="v",
                   totals=_totals(100.0, 1, 7, 50), holes=[])
    t4 = ResultDoc(model="t4", course="rust", run_id="1", created="x", holes_version="v",
                   totals=_totals(100.0, 1, 7, 50), holes=[])
    t5 = ResultDoc(model="t5", course="rust", run_id="1", created="x", holes_version="v",
                   totals=_totals(100.0, 2, 1, 90), holes=[])
    rows = leaderboard.course_board([t1, t2, t3, t4, t5], "rust")
    assert [(r.rank, r.model) for r in rows] == [
        (1, "t5"), (2, "t3"), (2, "t4"), (4, "t2"), (5, "t1")]
    assert rows[0].correctness == "50% (1/2)"


def _totals(score: float, holes_passed: int, tests_passed: int, raw: int):
    from cogolf.games.golf.scoring import CourseTotals

    return CourseTotals(score=score, holes_passed=holes_passed, holes_total=18,
                        tests_passed=tests_passed, tests_total=2 * tests_passed or 2,
                        raw_bytes=raw, penalty=0.0, official_bytes=raw)


def test_combined_ranks_complete_models_and_lists_incomplete_below() -> None:
    docs = [
        doc("a", "python", [hole("x", 100, 1, 1)]), doc("a", "racket", [hole("x", 100, 1, 1)]),
        doc("b", "python", [hole("x", 50, 1, 1)]), doc("b", "racket", [hole("x", 80, 1, 1)]),
        doc("c", "python", [hole("x", 1, 1, 1)]),
    ]
    rows = leaderboard.combined_board(docs, ["python", "racket"])
    assert [(r.rank, r.model, r.score) for r in rows] == [
        (1, "b", 130.0), (2, "a", 200.0), (None, "c", 1.0)]
    assert rows[2].missing == ["racket"]
    page = leaderboard.model_page(docs, "b", ["python", "racket"])
    assert [(e.course, e.rank, e.of) for e in page] == [("python", 2, 3), ("racket", 1, 2)]


def test_leaderboard_command_prints_tables_and_writes_json(tmp_path: Path) -> None:
    write_result(tmp_path, doc("alpha", "python", [hole("reverse-string", 19, 12, 12)]))
    write_result(tmp_path, doc("beta", "python", [hole("reverse-string", 30, 6, 12)]))
    out = subprocess.run(
        [sys.executable, "-m", "cogolf", "golf", "leaderboard", str(tmp_path), "--courses",
         "python", "--model", "beta", "--json", str(tmp_path / "board.json")],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "Rank  Model" in out and "50% (6/12)" in out and "Failed tests" in out
    board = (tmp_path / "board.json").read_text()
    assert '"model":"alpha"' in board.replace(" ", "") and "combined" in board
    bad = subprocess.run([sys.executable, "-m", "cogolf", "golf", "leaderboard", str(tmp_path),
                          "--courses", "cobol"], capture_output=True, text=True)
    assert bad.returncode == 2 and "cobol" in bad.stderr
