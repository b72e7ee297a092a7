"""Exact tests of scoring's own arithmetic and paths, on hand-made tasks and runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cogolf.evaluation.pytest_twins import TwinPlan
from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.games.commit0.layout import SubmissionError, overlay_submission
from cogolf.games.commit0.results import Commit0Result
from cogolf.games.commit0.score import (
    counts,
    package_placeholders,
    score_submission,
    tally,
    twin_plan,
)
from cogolf.games.commit0.suite import SuiteRun
from cogolf.games.commit0.task import Commit0Task

REFERENCE = ("tests.test_a::test_x", "tests.test_a::test_p[1]", "tests.test_a::test_p[2]")


def make_task(root: Path, **kw: object) -> Commit0Task:
    (root / "skeleton" / "pkg").mkdir(parents=True)
    (root / "skeleton" / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    (root / "hidden_tests" / "tests").mkdir(parents=True)
    fields: dict[str, object] = {"package_paths": ("pkg",), "tests_paths": ("tests",),
                                 "reference_ids": REFERENCE, **kw}
    return Commit0Task(root=root, name="lib", source="lib-src", **fields)  # type: ignore[arg-type]


def test_tally_counts_only_passes_of_reference_ids_and_names_the_rest() -> None:
    task = Commit0Task(root=Path("."), name="lib", source="s", package_paths=("pkg",),
                       tests_paths=("tests",), reference_ids=("a", "b", "c", "d", "e", "f", "g"))
    report = TestReport({"a": Outcome.PASSED, "b": Outcome.FAILED, "c": Outcome.ERROR,
                         "d": Outcome.SKIPPED, "e": Outcome.NO_RESULT, "g": Outcome.PASSED,
                         "other": Outcome.PASSED})
    assert tally(task, report) == (2, {"b": "failed", "c": "error", "d": "skipped",
                                       "e": "no_result", "f": "missing"})


def test_counts_are_each_the_runs_own() -> None:
    outcomes = ([Outcome.PASSED] * 4 + [Outcome.FAILED] * 3 + [Outcome.ERROR] * 1
                + [Outcome.SKIPPED] * 7 + [Outcome.NO_RESULT])
    report = TestReport({f"t{i}": o for i, o in enumerate(outcomes)})
    run = SuiteRun(report, "ok", True, [], calls={"a": "xfailed", "b": "xfailed", "c": "passed",
                                                   "d": "skipped", "e": "failed"},
                   collect_errors=["e1", "e2", "e3", "e4", "e5", "e6"],
                   collected=[f"n{i}" for i in range(11)], twins=9,
                   time_limited=["l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"])
    assert counts(run) == {"collected": 11, "passed": 4, "failed": 3, "errors": 1,
                           "skipped": 5, "xfailed": 2, "collect_errors": 6, "twins": 9,
                           "over_test_time_limit": 10}


def test_placeholders_stand_only_for_test_packages_inside_the_library(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", package_paths=("src/pkg",),
                     tests_paths=("tests", "src/pkg/test_one.py", "src/pkg/tests"))
    hidden = task.hidden_tests
    for rel in ("src/pkg/tests/__init__.py", "src/pkg/tests/deep/er/__init__.py",
                "src/pkg/tests/test_a.py", "tests/__init__.py", "src/pkg/test_one.py"):
        (hidden / rel).parent.mkdir(parents=True, exist_ok=True)
        (hidden / rel).write_text("x = 1\n")
    build = tmp_path / "build"
    (build / "src" / "pkg" / "tests").mkdir(parents=True)  # a folder the build already has
    (build / "src" / "pkg" / "__init__.py").write_text("y = 2\n")
    package_placeholders(task, build)
    files = {p.relative_to(build).as_posix(): p.read_text() for p in build.rglob("*")
             if p.is_file()}
    assert files == {"src/pkg/__init__.py": "y = 2\n", "src/pkg/tests/__init__.py": "",
                     "src/pkg/tests/deep/er/__init__.py": ""}


def test_placeholders_for_a_library_that_is_its_test_folder(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task", package_paths=("pkg",), tests_paths=("pkg",))
    (task.hidden_tests / "pkg").mkdir()
    (task.hidden_tests / "pkg" / "__init__.py").write_text("x = 1\n")
    build = tmp_path / "build"
    build.mkdir()
    package_placeholders(task, build)
    assert (build / "pkg" / "__init__.py").read_text() == ""


TESTS = """import pytest


def test_x():
    assert 1 + 1 == 2
    for i in range(2):
        assert i < 2
    assert "a" * 2 == "aa"


@pytest.mark.parametrize("n", [1, 2])
def test_p(n):
    assert n > 0


def test_unlisted():
    assert True
"""


def test_twin_plan_takes_the_measured_sites_and_counts_by_the_flag(tmp_path: Path) -> None:
    measured = {"tests/test_a.py::test_x": [0, 2], "tests/test_a.py::test_p": [1],
                "tests/test_a.py::test_q": []}
    task = make_task(tmp_path / "task", twins=measured)
    work = tmp_path / "work"
    originals = frozenset(REFERENCE)
    assert twin_plan(task, work) == TwinPlan(measured, 2, originals)
    assert twin_plan(task, work, True) == TwinPlan(measured, 2, originals)
    assert twin_plan(task, work, False) == TwinPlan(measured, 0, originals)
    assert twin_plan(task, work, None) == TwinPlan(measured, None, originals)


def test_twin_plan_defaults_to_the_reference_tests_own_checks(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_a.py").write_text(TESTS)
    (work / "tests" / "test_b.py").write_text("def test_x():\n    assert 1\n")
    eligible = {"tests/test_a.py::test_x": [0, 2], "tests/test_a.py::test_p": [0]}
    assert twin_plan(task, work) == TwinPlan(eligible, 2, frozenset(REFERENCE))


def score(task: Commit0Task, submission: Path, entrant: str) -> Commit0Result:
    return asyncio.run(score_submission(task, submission, entrant=entrant, quality=False))


def test_a_submission_that_is_no_directory_scores_nothing(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    missing = tmp_path / "nothing"
    result = score(task, missing, "alice")
    assert result.seconds < 60
    assert result == Commit0Result(task="lib", entrant="alice", status="bad_submission",
                                   passed=0, total=3, notes=[f"{missing}: not a directory"],
                                   seconds=result.seconds)
    plain = tmp_path / "file"
    plain.write_text("")
    assert score(task, plain, "bob").notes == [f"{plain}: not a directory"]
    assert asyncio.run(score_submission(task, missing)).entrant == ""


def test_a_refused_submission_keeps_its_reason_to_the_notes_cap(tmp_path: Path) -> None:
    task = make_task(tmp_path / "task")
    sub = tmp_path / "sub"
    deep = sub / "pkg" / ("d" * 200) / ("e" * 200) / ("f" * 200) / ("g" * 200)
    deep.mkdir(parents=True)
    (deep / "link.py").symlink_to("/etc/hostname")
    with pytest.raises(SubmissionError) as caught:
        overlay_submission(task.package_paths, sub, tmp_path / "probe")
    reason = str(caught.value)
    assert len(reason) > 800
    result = score(task, sub, "carol")
    assert result == Commit0Result(task="lib", entrant="carol", status="bad_submission",
                                   passed=0, total=3, notes=[reason[:800]],
                                   seconds=result.seconds)
    assert 0 <= result.seconds < 60
