"""The benchmark's environment, not ours: where test requirements are read from, which
pytest a task runs on, and the words prepare uses when an original loses tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.hints import collection_errors, fix_for, ships_tests
from cogolf.games.commit0.suite import explain_exit
from cogolf.games.commit0.task import TaskError, load_task
from cogolf.games.commit0.wheelhouse import (
    choose_pytest,
    pinned_pytest,
    prune,
    runner_pytest,
    select_tests,
    tox_requirements,
)

TOX = """[tox]
envlist = py3{8,9,10,11,12}, style

[base]
deps =
    hypothesis>=6
    -r requirements/extra.txt

[testenv]
extras = test, crypto
deps =
    pytest-mock>=3  # the mocker fixture
    {[base]deps}
    py38: importlib-resources
    !py311: tomli
    -r ../outside.txt
    -r requirements/linked.txt
    -c constraints.txt
    -e .[yaml]
    {env:EXTRA_DEPS}
    git+https://example.org/x.git
commands = pytest {posargs}

[testenv:docs]
deps = sphinx
"""


def test_tox_deps_extras_and_referenced_files(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "requirements").mkdir(parents=True)
    (source / "tox.ini").write_text(TOX)
    (source / "requirements" / "extra.txt").write_text("freezegun==1.5.0\n# c\n-e .\n")
    (source / "requirements" / "linked.txt").symlink_to("/etc/hostname")
    (tmp_path / "outside.txt").write_text("evil\n")
    found, extras = tox_requirements(source)
    assert found == [("pytest-mock>=3", "tox.ini [testenv] deps"),
                     ("hypothesis>=6", "tox.ini [testenv] deps"),
                     ("freezegun==1.5.0", "requirements/extra.txt")]
    # factor lines, constraints, substitutions, URLs, files outside or linked: never
    assert extras == ["test", "crypto", "yaml"]


def test_tox_in_setup_cfg_and_pyproject(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = x\n\n[testenv]\ndeps = pytest<8\n")
    assert tox_requirements(tmp_path) == ([("pytest<8", "setup.cfg [testenv] deps")], [])
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tox]\nlegacy_tox_ini = """\n[testenv]\ndeps = responses\nextras = dev\n"""\n')
    assert tox_requirements(tmp_path) == ([("responses", "pyproject.toml [testenv] deps")],
                                          ["dev"])
    (tmp_path / "pyproject.toml").write_text("[tool.tox]\nlegacy_tox_ini = 3\n")
    assert tox_requirements(tmp_path) == ([], [])
    (tmp_path / "tox.ini").write_text("[testenv\nbroken")
    assert tox_requirements(tmp_path) == ([], [])


def test_the_pytest_a_task_runs_on(tmp_path: Path) -> None:
    runner = runner_pytest()
    # nothing said, or what is said holds for the runner's: the runner's own
    assert choose_pytest(tmp_path, ["pytest-mock (extra test)"]) == ""
    assert choose_pytest(tmp_path, [f"pytest>={runner.major} (extra test)"]) == ""
    # a cap from an extra, a tox dep or the task: those specifiers, together
    assert choose_pytest(tmp_path, ["pytest<8,>=7.2 (extra test)"]) == "pytest<8,>=7.2"
    assert choose_pytest(tmp_path, ["pytest>=7 (tox.ini [testenv] deps)",
                                    "pytest<8 (task)"]) == "pytest<8,>=7"
    # a requirement file's pin (pip-compile output, beside its .in): that version
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "tests.in").write_text("pytest\n")
    (tmp_path / "requirements" / "tests.txt").write_text(
        "iniconfig==2.0.0\n    # via pytest\npytest==7.4.0\n    # via -r tests.in\n")
    (tmp_path / "requirements" / "dev.txt").write_text("pytest==8.1.1 ; python_version>'3'\n")
    assert pinned_pytest(tmp_path) is not None and str(pinned_pytest(tmp_path)) == "7.4.0"
    assert choose_pytest(tmp_path, []) == "pytest==7.4.0"
    # a specifier the library states wins over a file's pin
    assert choose_pytest(tmp_path, ["pytest<9,>=8 (group test)"]) == "pytest<9,>=8"
    (tmp_path / "requirements" / "tests.txt").write_text("pytest-cov==5.0\npytest==bad\n")
    assert str(pinned_pytest(tmp_path)) == "8.1.1"


def test_fixes_named_for_collection_errors() -> None:
    assert fix_for("ModuleNotFoundError: No module named 'psutil'") == "--with psutil"
    assert fix_for("ModuleNotFoundError: No module named 'yaml.constructor'") == "--with pyyaml"
    assert fix_for("ImportError: No module named PIL") == "--with pillow"
    assert fix_for("ImportError: cannot import name 'notset' from '_pytest.monkeypatch'"
                   ).startswith("an older pytest")
    assert fix_for("PytestRemovedIn10Warning: the `yield_fixture` is gone").startswith(
        "an older pytest")
    assert fix_for("HINT: remove __pycache__ / .pyc files and/or use a unique basename for "
                   "your test file modules").startswith("none needed if it is a library module")
    assert fix_for("ZeroDivisionError: division by zero") == ""
    errors = [f"tests/test_{i}.py" for i in range(7)]
    text = collection_errors(errors, {"tests/test_0.py": "ModuleNotFoundError: No module "
                                                         "named 'psutil'"})
    assert text.startswith("tests/test_0.py: ModuleNotFoundError: No module named 'psutil' "
                           "(fix: --with psutil); tests/test_1.py; ")
    assert text.endswith("tests/test_4.py; and 2 more")


@pytest.mark.parametrize(("code", "words"), [
    (0, "all tests passed"), (1, "some tests failed"), (2, "interrupted"),
    (3, "internal error"), (4, "conftest that could not be imported"),
    (5, "no tests were collected"), (9, "not one of pytest's own"),
    (-9, "killed by signal 9"), (None, "did not end by itself"),
])
def test_exit_codes_in_words(code: int | None, words: str) -> None:
    assert words in explain_exit(code)


def test_an_sdist_without_test_modules_is_told_apart(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "testing.py").write_text("")  # a helper module, no test
    (tmp_path / ".tox" / "x").mkdir(parents=True)
    (tmp_path / ".tox" / "x" / "test_tox.py").write_text("")
    (tmp_path / "linked_test.py").symlink_to("/etc/hostname")
    assert not ships_tests(tmp_path)
    (tmp_path / "pkg" / "tests").mkdir()
    (tmp_path / "pkg" / "tests" / "foo_test.py").write_text("")
    assert ships_tests(tmp_path)


def test_the_library_and_the_toolbox_never_come_from_the_wheelhouse(tmp_path: Path) -> None:
    for name in ("attrs-24.3.0-py3-none-any.whl", "hypothesis-6.100.0-py3-none-any.whl",
                 "pytest-8.3.5-py3-none-any.whl", "pluggy-1.5.0-py3-none-any.whl",
                 "sortedcontainers-2.4.0-py2.py3-none-any.whl",
                 "sortedcontainers-2.3.0-py2.py3-none-any.whl"):
        (tmp_path / name).write_bytes(b"")
    # attrs' own tests need Hypothesis, which needs (a newer) attrs: never that one
    prune(tmp_path, "attrs", {"pluggy"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hypothesis-6.100.0-py3-none-any.whl", "pytest-8.3.5-py3-none-any.whl",
        "sortedcontainers-2.4.0-py2.py3-none-any.whl"]


@pytest.mark.parametrize(("limits", "accepted"), [
    ({"test_time_limit_seconds": 7200}, True), ({"test_time_limit_seconds": 7200.01}, False),
    ({"test_time_limit_seconds": 0}, False), ({"test_time_limit_seconds": True}, False),
    ({"test_time_limit_seconds": "60"}, False), ({"time_limit_seconds": 0.001}, True),
    ({}, True),
])
def test_task_time_limits_are_bounded(tmp_path: Path, limits: dict[str, object],
                                      accepted: bool) -> None:
    (tmp_path / "skeleton").mkdir()
    (tmp_path / "hidden_tests").mkdir()
    data = {"game": "commit0", "schema": 1, "name": "x", "source": "x", "package_paths": ["x"],
            "tests_paths": ["tests"], "reference_ids": ["tests.test_x::test_y"], **limits}
    (tmp_path / "task.json").write_text(json.dumps(data))
    if accepted:
        task = load_task(tmp_path)
        assert task.test_time_limit_seconds == limits.get("test_time_limit_seconds", 60.0)
    else:
        with pytest.raises(TaskError, match=r"must be a number in \(0, 7200\]"):
            load_task(tmp_path)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--test-time-limit", "0", "--test-time-limit 0: must be in (0, 7200] seconds"),
    ("--test-time-limit", "nan", "--test-time-limit nan: must be in (0, 7200] seconds"),
    ("--time-limit", "7201", "--time-limit 7201: must be in (0, 7200] seconds"),
])
def test_prepare_refuses_limits_out_of_bounds_before_anything(
        tmp_path: Path, option: str, value: str, message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "cogolf", "commit0", "prepare",
                           "no-such-lib==1.0", "--out", str(tmp_path / "t"), option, value],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and f"error: {message}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "t").exists()


def test_what_the_task_asks_for_is_never_filtered() -> None:
    found = ["pytest-cov (extra test)", "mypy (group test)", "pytest-mock (extra test)",
             "mypy (task)", "pytest-cov>=4 (task)", "attrs (task)", "pytest<8 (task)",
             "pytest-mock (tox.ini [testenv] deps)", "attrs (extra dev)"]
    left_out = {"pytest", "pytest-cov", "mypy", "attrs"}  # toolbox, around a suite, itself
    assert select_tests(found, left_out) == [
        "pytest-mock (extra test)", "mypy (task)", "pytest-cov>=4 (task)", "attrs (task)"]
