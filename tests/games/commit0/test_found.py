"""What prepare finds on a real (synthetic) library, run walled: its tests by pytest's
collection (inside the package and a root `test.py`), what shrinks the reference
(collection errors, skips, xfails, a flaky test) and the benchmark's rate beside ours."""

from __future__ import annotations

import asyncio
import bz2
import shutil
import subprocess
from pathlib import Path

import pytest

from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.prepare import PartialReference, prepare
from cogolf.games.commit0.score import score_submission

PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "inpkg"
version = "1.0"

[tool.setuptools]
packages = ["inpkg", "inpkg.tests"]

[tool.pytest.ini_options]
python_files = ["test_*.py", "test.py"]
"""
CORE = '''"""Doubling."""
import tempfile

# a temporary file while being imported: the import check needs a usable TMPDIR
with tempfile.TemporaryFile() as _fh:
    pass


def double(x):
    """Twice x."""
    return 2 * x
'''
TESTS = """import os

import pytest

from inpkg import double


def test_double():
    assert double(2) == 4


@pytest.mark.xfail(reason="known")
def test_known_bug():
    assert double(2) == 5


@pytest.mark.xfail(reason="fixed since")
def test_fixed_bug():
    assert double(3) == 6


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


def test_flaky():
    # passes on the first of prepare's two runs only (each run has its own scratch)
    assert "out1" in os.environ["TMPDIR"]


def test_writes_where_it_runs():
    # the benchmark's containers let tests write in their working folder: so do we
    with open("written.txt", "w") as fh:
        fh.write(str(double(2)))
    assert open("written.txt").read() == "4"


def test_writes_beside_itself():
    # the hidden tests stay as they are when scored: this passes at discovery only
    with open(os.path.join(os.path.dirname(__file__), "beside.txt"), "w") as fh:
        fh.write(str(double(2)))
"""
ROOT_TEST = """from inpkg import double


def test_root():
    assert double(0) == 0
"""


def library(root: Path, *, broken: bool) -> Path:
    (root / "inpkg" / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "inpkg" / "__init__.py").write_text(CORE)
    (root / "inpkg" / "tests" / "__init__.py").write_text("")
    (root / "inpkg" / "tests" / "test_core.py").write_text(TESTS)
    (root / "test.py").write_text(ROOT_TEST)
    if broken:
        (root / "inpkg" / "tests" / "test_broken.py").write_text(
            "import not_installed_anywhere\n\n\ndef test_x():\n    pass\n")
    return root


def git_commit(repo: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=x", "-c",
                               "user.email=x@x", *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "the pinned commit")
    return git("rev-parse", "HEAD")


@pytest.mark.slow
def test_layout_counts_flaky_partial_and_official_rate(tmp_path: Path) -> None:
    lib = library(tmp_path / "inpkg", broken=True)
    with pytest.raises(PartialReference, match=r"1 collection error.*test_broken\.py: "
                       r"ModuleNotFoundError: No module named 'not_installed_anywhere' \(fix: "
                       r"--with not_installed_anywhere\).*--accept-partial-reference"):
        asyncio.run(prepare(str(lib), tmp_path / "refused", time_limit_seconds=120))
    assert not (tmp_path / "refused").exists()

    # the accepted task comes from a git repository at a commit, not its working tree
    original = tmp_path / "original"
    shutil.copytree(lib, original)
    commit = git_commit(lib)
    (lib / "inpkg" / "__init__.py").write_text("def double(x):\n    return 0\n")
    ids = tmp_path / "inpkg.bz2"
    ids.write_bytes(bz2.compress(b"inpkg/tests/test_core.py::test_double\n"
                                 b"inpkg/tests/test_core.py::test_known_bug\n"
                                 b"inpkg/tests/test_core.py::test_fixed_bug\n"
                                 b"inpkg/tests/test_core.py::test_gone\n"))
    task = asyncio.run(prepare("inpkg", tmp_path / "task", time_limit_seconds=120,
                               git=lib, commit=commit, official_ids=ids,
                               accept_partial_reference=True))
    assert task.name == "inpkg" and task.source == f"{lib}@{commit}"
    assert task.tests_paths == ("inpkg/tests", "test.py")
    assert task.package_paths == ("inpkg",)
    # an xpass passes (pytest's own outcome); it is in the reference
    assert set(task.reference_ids) == {"inpkg.tests.test_core::test_double", "test::test_root",
                                       "inpkg.tests.test_core::test_fixed_bug",
                                       "inpkg.tests.test_core::test_writes_where_it_runs"}
    found = task.prepare
    assert found["collect_errors"] == ["inpkg/tests/test_broken.py"]
    assert found["collect_messages"] == {"inpkg/tests/test_broken.py": "ModuleNotFoundError: "
                                         "No module named 'not_installed_anywhere'"}
    assert found["flaky"] == ["inpkg.tests.test_core::test_flaky",
                              "inpkg.tests.test_core::test_writes_beside_itself"]
    assert found["check"]["status"] == "ok" and found["check"]["twins"] > 0
    assert (found["skipped"], found["xfailed"]) == (1, 1)
    assert found["official"]["listed"] == 4 and found["official"]["not_collected"] == 1
    # the benchmark's arithmetic: test_double and the xpass; an xfail never counts
    rate = found["official"]["original_rate"]
    assert (rate["passed"], rate["xpassed"], rate["xfailed"]) == (2, 1, 1)
    assert rate["failed"] == ["inpkg/tests/test_core.py::test_known_bug",
                              "inpkg/tests/test_core.py::test_gone"]
    # the tests are hidden at their own paths; the skeleton has neither
    assert (task.hidden_tests / "inpkg" / "tests" / "test_core.py").is_file()
    assert (task.hidden_tests / "test.py").is_file()
    assert not (task.skeleton / "inpkg" / "tests").exists()
    assert not (task.skeleton / "test.py").exists()
    assert "raise NotImplementedError" in (task.skeleton / "inpkg" / "__init__.py").read_text()

    full = asyncio.run(score_submission(task, original, quality=False))
    assert full.status == "ok" and full.pass_rate == 1.0, full.notes
    assert full.counts is not None and full.counts["xfailed"] == 1
    assert full.counts["collect_errors"] == 1
    assert full.official is not None and full.official["rate"] == pytest.approx(2 / 4)
    empty = asyncio.run(score_submission(task, task.skeleton, quality=False))
    assert empty.status == "ok" and empty.pass_rate == 0.0, empty.notes
    # on the skeleton both xfail-marked tests fail as expected: xfailed, and no pass
    assert empty.official is not None and empty.official["passed"] == 0
    assert empty.official["xfailed"] == 2 and len(empty.official["failed"]) == 4


FORGING_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:  # the original's own conftest turns every failure into a pass
        report.outcome = "passed"
"""


@pytest.mark.slow
def test_an_original_that_would_be_tampered_is_refused_at_prepare(tmp_path: Path) -> None:
    lib = library(tmp_path / "inpkg", broken=False)
    (lib / "inpkg" / "tests" / "conftest.py").write_text(FORGING_CONFTEST)
    with pytest.raises(SourceError, match=r"the original, scored as a submission, is tampered"
                       r": a canary test that must fail was reported as passed"):
        asyncio.run(prepare(str(lib), tmp_path / "task", time_limit_seconds=120))
    assert not (tmp_path / "task").exists()


@pytest.mark.slow
def test_an_original_stopped_by_a_test_that_never_returns_is_refused_at_prepare(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cogolf.evaluation import channel
    monkeypatch.setattr(channel, "STALL_GRACE_SECONDS", 2.0)
    lib = library(tmp_path / "inpkg", broken=False)
    # a blocking call (a socket the walls refuse, in tornado's suite) stops the whole run:
    # the tests after it never run, so the reference would silently shrink
    (lib / "inpkg" / "tests" / "test_hang.py").write_text(
        "import time\n\n\ndef test_hang():\n    time.sleep(3600)\n\n\ndef test_after():\n"
        "    pass\n")
    with pytest.raises(PartialReference, match=r"the original's run was stopped at "
                       r"inpkg/tests/test_hang\.py::test_hang \(over the per-test limit and "
                       r"never back in Python.*\): 3 of 10 collected tests never ran .*"
                       r"--accept-partial-reference"):
        asyncio.run(prepare(str(lib), tmp_path / "task", time_limit_seconds=120,
                            test_time_limit_seconds=1))
    assert not (tmp_path / "task").exists()


UNSTABLE = """import os

import pytest

from inpkg import double


# ids that change from run to run: the check run finds none of discovery's
@pytest.mark.parametrize("x", range({count}), ids=lambda x: f"{{x}}-{{os.getpid()}}")
def test_unstable(x):
    assert double(x) == 2 * x
"""


@pytest.mark.slow
def test_a_check_run_that_loses_more_than_3_ids_is_refused(tmp_path: Path) -> None:
    # 3 ids lost between prepare's two runs is the most accepted (beyond 300 tests, 1%)
    lib = library(tmp_path / "inpkg", broken=False)
    (lib / "inpkg" / "tests" / "test_unstable.py").write_text(UNSTABLE.format(count=3))
    task = asyncio.run(prepare(str(lib), tmp_path / "task", time_limit_seconds=120))
    assert len(task.prepare["unstable_ids"]) == 3
    assert all(i.startswith("inpkg.tests.test_unstable::test_unstable[")
               for i in task.prepare["unstable_ids"])
    assert not any("test_unstable" in i for i in task.reference_ids)
    (lib / "inpkg" / "tests" / "test_unstable.py").write_text(UNSTABLE.format(count=4))
    with pytest.raises(PartialReference, match=r"the original, scored as a submission, left 4 "
                       r"of the \d+ tests that passed at discovery without a result .*"
                       r"--accept-partial-reference"):
        asyncio.run(prepare(str(lib), tmp_path / "refused", time_limit_seconds=120))
    assert not (tmp_path / "refused").exists()
