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


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


def test_flaky():
    # passes on the first of prepare's two runs only (each run has its own scratch)
    assert "out1" in os.environ["TMPDIR"]
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
    with pytest.raises(PartialReference, match=r"1 collection error.*test_broken\.py.*"
                       r"--accept-partial-reference"):
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
                                 b"inpkg/tests/test_core.py::test_gone\n"))
    task = asyncio.run(prepare("inpkg", tmp_path / "task", time_limit_seconds=120,
                               git=lib, commit=commit, official_ids=ids,
                               accept_partial_reference=True))
    assert task.name == "inpkg" and task.source == f"{lib}@{commit}"
    assert task.tests_paths == ("inpkg/tests", "test.py")
    assert task.package_paths == ("inpkg",)
    assert set(task.reference_ids) == {"inpkg.tests.test_core::test_double", "test::test_root"}
    found = task.prepare
    assert found["collect_errors"] == ["inpkg/tests/test_broken.py"]
    assert found["flaky"] == ["inpkg.tests.test_core::test_flaky"]
    assert (found["skipped"], found["xfailed"]) == (1, 1)
    assert found["official"]["listed"] == 3 and found["official"]["not_collected"] == 1
    assert found["official"]["original_rate"]["passed"] == 2  # test_double + the xfail
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
    assert full.official is not None and full.official["rate"] == pytest.approx(2 / 3)
    empty = asyncio.run(score_submission(task, task.skeleton, quality=False))
    assert empty.status == "ok" and empty.pass_rate == 0.0, empty.notes
    # the benchmark counts an xfail as passed, even on the skeleton
    assert empty.official is not None and empty.official["passed"] == 1
