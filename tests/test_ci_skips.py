"""In CI a skipped test fails the run, unless its reason is on the allow-list
(tests/skips.py); xfails, passes and runs outside CI are unaffected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SAMPLE = '''
import pytest

def test_passes():
    pass

@pytest.mark.xfail(reason="known")
def test_known_bug():
    assert False

def test_allowed():
    pytest.skip("no freezer hierarchy on this machine")

REFUSED = bool(__import__("os").environ.get("SAMPLE_REFUSED"))

@pytest.mark.skipif(REFUSED, reason="needs racket")
def test_lost_its_stack():
    pass
'''

CONFTEST = '''
from tests import skips

def pytest_configure(config):
    skips.register(config)
'''


def _run(tmp_path: Path, *, ci: bool, refused: bool, workers: int) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "PYTEST_ADDOPTS"}}
    env["PYTHONPATH"] = str(ROOT)
    env |= {"CI": "1"} if ci else {}
    env |= {"SAMPLE_REFUSED": "1"} if refused else {}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", tmp_path]
    args += ["-n", str(workers)] if workers else []
    return subprocess.run(
        [*args, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ci", "refused", "workers", "code"),
    [
        (True, True, 2, 1),  # the controller decides for its workers
        (True, True, 0, 1),
        (True, False, 0, 0),  # an allowed skip, an xfail and passes are fine
        (False, True, 0, 0),  # a developer's machine may skip
    ],
)
def test_ci_fails_on_a_skip_not_allowed(
    tmp_path: Path, ci: bool, refused: bool, workers: int, code: int
) -> None:
    run = _run(tmp_path, ci=ci, refused=refused, workers=workers)
    assert run.returncode == code, run.stdout + run.stderr
    named = "test_sample.py::test_lost_its_stack: needs racket" in run.stdout
    assert named is (ci and refused), run.stdout
    assert "test_allowed:" not in run.stdout
    assert "1 xfailed" in run.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the script as another user")
def test_ci_run_stops_at_once_without_root() -> None:
    run = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", ".ci/run"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 1
    assert run.stderr == ".ci/run: must run as root (the kernel walls need it)\n"
    assert run.stdout == ""
