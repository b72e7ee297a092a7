"""Where a library's tests are, from what pytest collected; where its requirements are.

Small synthetic source trees on disk shaped like the benchmark's libraries: tests
inside the package (voluptuous), a test package named otherwise (portalocker),
a root `test.py` (chardet), a `src/` layout with `tests/` (cachetools).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cogolf.games.commit0.layout import (
    SourceError,
    checkout,
    find_test_units,
    layout_from_collection,
    library_files,
    library_tops,
    pip_reason,
)
from cogolf.games.commit0.wheelhouse import _file_requirements, _group_requirements


def tree(root: Path, files: list[str]) -> Path:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def f():\n    return 1\n")
    return root


def test_tests_inside_the_package(tmp_path: Path) -> None:
    root = tree(tmp_path, ["setup.py", "voluptuous/__init__.py", "voluptuous/schema_builder.py",
                           "voluptuous/tests/__init__.py", "voluptuous/tests/tests.py",
                           "voluptuous/tests/test_humanize.py"])
    collected = {"voluptuous/tests/tests.py", "voluptuous/tests/test_humanize.py"}
    # the wheel installs the package, its tests with it
    tops = library_tops(root, {"voluptuous"}, collected)
    layout = layout_from_collection(root, collected, tops)
    assert layout.tests_paths == ("voluptuous/tests",)
    assert layout.package_paths == ("voluptuous",)
    files = library_files(root, layout.package_paths, layout.tests_paths)
    assert [f.as_posix() for f in files] == ["voluptuous/__init__.py",
                                             "voluptuous/schema_builder.py"]


def test_a_test_package_named_otherwise(tmp_path: Path) -> None:
    root = tree(tmp_path, ["portalocker/__init__.py", "portalocker/utils.py",
                           "portalocker_tests/__init__.py", "portalocker_tests/conftest.py",
                           "portalocker_tests/temporary_file_lock.py",
                           "portalocker_tests/tests.py", "portalocker_tests/test_redis.py"])
    collected = {"portalocker_tests/tests.py", "portalocker_tests/test_redis.py"}
    # a find_packages() wheel holds both
    tops = library_tops(root, {"portalocker", "portalocker_tests"}, collected)
    assert tops == {"portalocker"}
    layout = layout_from_collection(root, collected, tops)
    assert layout.tests_paths == ("portalocker_tests",)
    assert layout.package_paths == ("portalocker",)


def test_a_package_that_is_only_an_init(tmp_path: Path) -> None:
    root = tree(tmp_path, ["tiny/__init__.py", "tiny/tests/__init__.py", "tiny/tests/test_a.py"])
    (root / "tiny" / "tests" / "__init__.py").write_text('"""Tests."""\n')
    collected = {"tiny/tests/test_a.py"}
    layout = layout_from_collection(root, collected, library_tops(root, {"tiny"}, collected))
    assert (layout.package_paths, layout.tests_paths) == (("tiny",), ("tiny/tests",))


def test_a_root_test_module(tmp_path: Path) -> None:
    root = tree(tmp_path, ["chardet/__init__.py", "chardet/big5prober.py", "test.py",
                           "setup.py", "docs/conf.py"])
    layout = layout_from_collection(root, {"test.py"}, library_tops(root, {"chardet"},
                                                                    {"test.py"}))
    assert layout.tests_paths == ("test.py",)
    assert layout.package_paths == ("chardet",)


def test_src_layout_and_nested_test_folders(tmp_path: Path) -> None:
    root = tree(tmp_path, ["src/cachetools/__init__.py", "src/cachetools/func.py",
                           "tests/__init__.py", "tests/test_lru.py", "tests/deep/test_x.py",
                           "src/cachetools/test_inline.py"])
    collected = {"tests/test_lru.py", "tests/deep/test_x.py", "src/cachetools/test_inline.py"}
    layout = layout_from_collection(root, collected, library_tops(root, {"cachetools"},
                                                                  collected))
    assert layout.tests_paths == ("src/cachetools/test_inline.py", "tests")
    assert layout.package_paths == ("src/cachetools",)
    files = library_files(root, layout.package_paths, layout.tests_paths)
    assert "src/cachetools/test_inline.py" not in {f.as_posix() for f in files}


def test_library_modules_collected_for_doctests_stay_library(tmp_path: Path) -> None:
    root = tree(tmp_path, ["babel/__init__.py", "babel/core.py", "babel/messages/__init__.py",
                           "babel/messages/frontend.py", "babel/messages/test_inline.py",
                           "tests/test_core.py", "conftest.py"])
    collected = {"babel/core.py", "babel/messages/frontend.py", "babel/messages/test_inline.py",
                 "tests/test_core.py"}
    layout = layout_from_collection(root, collected, library_tops(root, {"babel"}, collected))
    assert layout.tests_paths == ("babel/messages/test_inline.py", "tests")
    assert layout.package_paths == ("babel",)


def test_units_keep_the_highest_path() -> None:
    assert find_test_units({"tests/a/test_x.py", "tests/test_y.py"}, set()) == ("tests",)
    assert find_test_units({"pkg/tests/test_a.py", "pkg/tests/sub/test_b.py"}, {"pkg"}) == (
        "pkg/tests",)


def test_nothing_collected_or_no_library_is_a_clear_error(tmp_path: Path) -> None:
    root = tree(tmp_path, ["lib/__init__.py", "tests/test_a.py"])
    with pytest.raises(SourceError, match="pytest collected no test"):
        layout_from_collection(root, set(), {"lib"})
    with pytest.raises(SourceError, match="no library package found"):
        layout_from_collection(root, {"tests/test_a.py"}, set())


def test_test_requirements_from_files_and_groups(tmp_path: Path) -> None:
    (tmp_path / "requirements-tests39.in").write_text("pytest>=7\npytest-benchmark\n-e .\n")
    (tmp_path / "requirements-tests39.txt").write_text("attrs==22.2.0\n    # via pytest\n")
    (tmp_path / "requirements-dev.txt").write_text("tox\n")
    (tmp_path / "pyproject.toml").write_text(
        '[dependency-groups]\ntest = ["simplejson", {include-group = "typing"}]\n'
        'typing = ["typing-extensions>=4"]\ndocs = ["sphinx"]\n')
    # the compiled .txt is left for its .in; dev files only when nothing else
    assert _file_requirements(tmp_path) == [("pytest>=7", "requirements-tests39.in"),
                                            ("pytest-benchmark", "requirements-tests39.in")]
    assert sorted(_group_requirements(tmp_path)) == [("simplejson", "group test"),
                                                     ("typing-extensions>=4", "group typing")]


def test_pip_reason_shows_the_real_error() -> None:
    stderr = b"""  error: subprocess-exited-with-error

  x Preparing metadata (pyproject.toml) did not run successfully.
  | exit code: 1
  \xe2\x95\xb0\xe2\x94\x80> [3 lines of output]
      error: can't find Rust compiler
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: metadata-generation-failed

x Encountered error while generating package metadata.
\xe2\x95\xb0\xe2\x94\x80> See above for output.
"""
    reason = pip_reason(stderr)
    assert "can't find Rust compiler" in reason
    assert "See above" not in reason and "originates from a subprocess" not in reason


def test_a_local_git_source_at_a_commit(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=x", "-c",
                               "user.email=x@x", *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    git("init", "-q")
    (repo / "lib.py").write_text("VERSION = 1\n")
    git("add", ".")
    git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD")
    (repo / "lib.py").write_text("VERSION = 2\n")
    git("commit", "-qam", "two")
    out = checkout(repo, first, tmp_path / "out")
    assert (out / "lib.py").read_text() == "VERSION = 1\n"
    assert not (out / ".git").exists()
    with pytest.raises(SourceError, match="needs --commit"):
        checkout(repo, None, tmp_path / "o2")
    with pytest.raises(SourceError, match="not a commit id"):
        checkout(repo, "--upload-pack=touch /tmp/x", tmp_path / "o3")
    with pytest.raises(SourceError, match="git checkout failed"):
        checkout(repo, "0" * 40, tmp_path / "o4")
    with pytest.raises(SourceError, match="not a git repository"):
        checkout(tmp_path / "out", first, tmp_path / "o5")


def test_a_task_file_cannot_point_outside_or_load_odd_plugins(tmp_path: Path) -> None:
    from cogolf.games.commit0.task import TaskError, load_task

    (tmp_path / "skeleton").mkdir()
    (tmp_path / "hidden_tests").mkdir()
    base = {"game": "commit0", "schema": 1, "name": "x", "source": "x",
            "package_paths": ["x"], "reference_ids": ["tests.t::a"], "tests_paths": ["tests"]}
    for change, message in [({"tests_paths": ["../../etc"]}, "must be relative"),
                            ({"tests_paths": []}, "tests_paths is empty"),
                            ({"plugins": ["pytest_mock; import os"]}, "not a module name"),
                            ({"official_ids": [3]}, "official_ids must be a list")]:
        (tmp_path / "task.json").write_text(json.dumps({**base, **change}))
        with pytest.raises(TaskError, match=message):
            load_task(tmp_path)
    # a task written before tests_paths existed still loads
    old = {k: v for k, v in base.items() if k != "tests_paths"}
    (tmp_path / "task.json").write_text(json.dumps({**old, "tests_path": "tests"}))
    assert load_task(tmp_path).tests_paths == ("tests",)


def test_a_task_files_twin_record_is_checked_and_an_old_task_has_none(tmp_path: Path) -> None:
    from cogolf.games.commit0.task import MAX_TWIN_SITES, TaskError, load_task

    (tmp_path / "skeleton").mkdir()
    (tmp_path / "hidden_tests").mkdir()
    base = {"game": "commit0", "schema": 1, "name": "x", "source": "x",
            "package_paths": ["x"], "reference_ids": ["tests.t::a"], "tests_paths": ["tests"]}
    last = MAX_TWIN_SITES - 1
    for twins, message in [({"../t.py::a": [0]}, "is not a test key"),
                           ({"/t.py::a": [0]}, "is not a test key"),
                           ({"tests/t.py": [0]}, "is not a test key"),
                           ({"tests/t.py::a": [MAX_TWIN_SITES]}, f"0..{last}"),
                           ({"tests/t.py::a": [-1]}, f"0..{last}"),
                           ({"tests/t.py::a": [True]}, f"0..{last}"),
                           ({"tests/t.py::a": 0}, f"0..{last}"),
                           ([["tests/t.py::a", [0]]], "must be an object")]:
        (tmp_path / "task.json").write_text(json.dumps({**base, "twins": twins}))
        with pytest.raises(TaskError, match=message):
            load_task(tmp_path)
    (tmp_path / "task.json").write_text(json.dumps(
        {**base, "twins": {"tests/t.py::C::a": [0, last]}}))
    task = load_task(tmp_path)
    assert task.twins == {"tests/t.py::C::a": [0, last]}
    assert task.to_json()["twins"] == task.twins
    (tmp_path / "task.json").write_text(json.dumps(base))  # prepared before twins
    assert load_task(tmp_path).twins is None and "twins" not in load_task(tmp_path).to_json()
