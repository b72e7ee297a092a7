"""Prepare measures which twins are sound on the original, walled, on a synthetic library
whose tests include every way a twin could pass on a correct library: a check that is
never reached, one inside `try`, a test whose value changes when it runs again, and a
twin that, failing, leaves state behind that breaks a later test."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.soundness import MAX_CHECKS_PER_TEST, MAX_ITEMS_PER_TEST

PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "stately"
version = "1.0"

[tool.setuptools]
packages = ["stately"]
"""
LIBRARY = '''"""Doubling, and a counter of calls."""
_calls = []


def record(x):
    """How many times record was called."""
    _calls.append(x)
    return len(_calls)


def double(x):
    """Twice x."""
    return 2 * x
'''
CORE = '''import pytest

from stately import double, record


def test_call_count():
    assert record("c") == 1  # true only as the first call of the run


def test_double():
    assert double(2) == 4


def test_loop_never_runs():
    for x in []:
        assert double(x) == 99
    assert double(1) == 2


def test_try():
    try:
        assert double(3) == 6
    except AssertionError:
        pass


def test_five_checks():  # at most 4 of them are measured
    assert double(1) == 2
    assert double(2) == 4
    assert double(3) == 6
    assert double(4) == 8
    assert double(5) == 10


@pytest.mark.parametrize("n", range(32))  # the most items a measured test may have
def test_32_items(n):
    assert double(n) != 2 * n + 1


@pytest.mark.parametrize("n", range(33))
def test_33_items(n):
    assert double(n) == 2 * n
'''
SHARED = '''from stately import double

STATE = {"open": False}


def test_open_close():
    STATE["open"] = True
    assert double(2) == 4
    STATE["open"] = False


def test_closed():
    assert not STATE["open"]
'''
# honest conftests registering plugins with report hooks (a test tool might): no tripwire
CONFTEST = '''class _Seen:
    def __init__(self):
        self.reports = 0

    def pytest_runtest_logreport(self, report):
        self.reports += 1


def pytest_configure(config):
    config.pluginmanager.register(_Seen(), "seen-NAME")
'''


@pytest.mark.slow
def test_prepare_keeps_only_the_twins_the_original_fails(tmp_path: Path) -> None:
    root = tmp_path / "stately"
    (root / "stately").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "stately" / "__init__.py").write_text(LIBRARY)
    (root / "tests" / "test_core.py").write_text(CORE)
    (root / "tests" / "test_shared.py").write_text(SHARED)
    (root / "tests" / "conftest.py").write_text(CONFTEST.replace("NAME", "tests"))
    (root / "conftest.py").write_text(CONFTEST.replace("NAME", "root"))
    task = asyncio.run(prepare(str(root), tmp_path / "task", time_limit_seconds=120))
    assert len(task.reference_ids) == 6 + 1 + 32 + 33
    twins = dict(task.twins or {})
    five = twins.pop("tests/test_core.py::test_five_checks")
    assert len(five) == MAX_CHECKS_PER_TEST == 4 and set(five) <= {0, 1, 2, 3, 4}
    assert twins == {"tests/test_core.py::test_double": [0],
                     "tests/test_core.py::test_loop_never_runs": [1],
                     f"tests/test_core.py::test_{MAX_ITEMS_PER_TEST}_items": [0]}
    found = task.prepare["twins"]
    assert found["dropped_modules"] == ["tests/test_shared.py"] and found["rounds"] == 2
    assert (found["tests"], found["checks"], found["measured_tests"]) == (4, 7, 8)
    assert "error" not in found
    for _ in range(2):  # fewer eligible tests than 8: fewer twins, and the result says so
        full = asyncio.run(score_submission(task, root, quality=False))
        assert full.status == "ok" and full.pass_rate == 1.0, full.notes
        assert full.counts is not None and full.counts["twins"] == 4
    empty = asyncio.run(score_submission(task, task.skeleton, quality=False))
    assert empty.status == "ok" and empty.pass_rate == 0.0, empty.notes
