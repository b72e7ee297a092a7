"""Hostile Commit-0 submissions, scored through the CLI as an entrant would be.

Each attack scores no more than the honest skeleton (0.0), writes nothing
outside its scratch, ends with a clear reason, and its notes never hold hidden
test source or a secret file's content.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.task import Commit0Task

REPO = Path(__file__).resolve().parents[3]
TEXTKIT = REPO / "references" / "commit0" / "textkit"
HIDDEN_LINE = "def test_"  # every hidden test module has it; no note may


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Commit0Task:
    """textkit with the common dynamic version: setuptools imports the package to build it."""
    source = tmp_path_factory.mktemp("dynamic") / "textkit"
    shutil.copytree(TEXTKIT, source)
    pyproject = source / "pyproject.toml"
    text = pyproject.read_text().replace('version = "1.0.0"', 'dynamic = ["version"]')
    pyproject.write_text(
        text + '\n[tool.setuptools.dynamic]\nversion = {attr = "textkit.__version__"}\n'
    )
    init = source / "src" / "textkit" / "__init__.py"
    init.write_text(init.read_text() + '\n__version__ = "1.0.0"\n')
    out = tmp_path_factory.mktemp("task") / "task"
    return asyncio.run(prepare(str(source), out, time_limit_seconds=120))


def score_cli(task: Commit0Task, submission: Path, out: Path) -> tuple[dict[str, object], str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "commit0",
            "score",
            str(task.root),
            str(submission),
            "--entrant",
            "mallory",
            "--no-quality",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(out.read_text()), out.read_text() + done.stdout


def with_init(task: Commit0Task, tmp_path: Path, prelude: str) -> Path:
    """The skeleton with `prelude` run first thing when the package is imported."""
    sub = tmp_path / "submission"
    shutil.copytree(task.skeleton, sub)
    init = sub / "src" / "textkit" / "__init__.py"
    init.write_text(prelude + "\n" + init.read_text())
    return sub


def assert_clean(text: str, task: Commit0Task) -> None:
    assert HIDDEN_LINE not in text
    for test_file in task.hidden_tests.rglob("*.py"):
        for line in test_file.read_text().splitlines():
            if len(line.strip()) > 30:
                assert line.strip() not in text, line
    shadow = Path("/etc/shadow").read_text().splitlines()[0]
    assert shadow not in text


def test_skeleton_is_the_baseline(task: Commit0Task, tmp_path: Path) -> None:
    data, _ = score_cli(task, task.skeleton, tmp_path / "r.json")
    assert data["status"] == "ok" and data["pass_rate"] == 0.0


def test_patching_runtest_is_tampered(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_init(
        task,
        tmp_path,
        "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n",
    )
    data, text = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0 and data["passed"] == 0
    assert any("replaced" in n or "canary" in n for n in data["notes"]), data["notes"]
    assert_clean(text, task)


def test_unwatched_patch_is_caught_by_the_canaries(task: Commit0Task, tmp_path: Path) -> None:
    # every test function becomes a no-op: nothing in the snapshot changes
    sub = with_init(
        task,
        tmp_path,
        "import _pytest.python\n"
        "_pytest.python.Function._getobj = lambda self: (lambda *a, **k: None)\n",
    )
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0
    assert any("canary" in n for n in data["notes"]), data["notes"]


def test_heap_scan_trips_the_wire(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_init(task, tmp_path, "import gc\n_ = len(gc.get_objects())\n")
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0
    assert any("gc.get_objects" in n for n in data["notes"]), data["notes"]


def test_atexit_report_rewrite_changes_nothing(task: Commit0Task, tmp_path: Path) -> None:
    fake = (
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_slug" name="test_slugify_basic"/>'
        "</testsuite></testsuites>"
    )
    sub = with_init(
        task,
        tmp_path,
        f"""import atexit, os, glob
def _rewrite():
    for d in (os.environ.get("TMPDIR", "."), os.getcwd()):
        for path in glob.glob(os.path.join(d, "**", "*.xml"), recursive=True):
            try:
                open(path, "w").write({fake!r})
            except OSError:
                pass
    os._exit(0)
atexit.register(_rewrite)
""",
    )
    hidden_before = {p: p.read_bytes() for p in task.hidden_tests.rglob("*") if p.is_file()}
    data, text = score_cli(task, sub, tmp_path / "r.json")
    assert data["pass_rate"] == 0.0 and data["passed"] == 0
    assert_clean(text, task)
    assert {p: p.read_bytes() for p in task.hidden_tests.rglob("*") if p.is_file()} == hidden_before


def test_exit_after_printing_hidden_tests_leaks_nothing(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_init(
        task,
        tmp_path,
        """import os, sys, glob
for path in glob.glob(os.path.join(os.getcwd(), "tests", "*.py")):
    sys.stdout.write(open(path).read()); sys.stderr.write(open(path).read())
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
""",
    )
    data, text = score_cli(task, sub, tmp_path / "r.json")
    assert data["pass_rate"] == 0.0
    assert data["status"] in ("ok", "no_report")
    assert_clean(text, task)


def test_build_time_code_is_walled(task: Commit0Task, tmp_path: Path) -> None:
    marker = tmp_path / "written-by-the-build"
    marker_in_repo = REPO / "written-by-the-build"
    sub = with_init(
        task,
        tmp_path,
        f"""__version__ = str("1.0.0")  # not static: imported
for target in ({str(marker)!r}, {str(marker_in_repo)!r}, "/tmp/written-by-the-build"):
    try:
        open(target, "w").write("root was here")
    except OSError:
        pass
raise RuntimeError("SHADOW " + open("/etc/shadow").read())
""",
    )
    data, text = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "install_failed" and data["pass_rate"] == 0.0
    assert any("building the library (offline, walled) failed" in n for n in data["notes"])
    assert not marker.exists() and not marker_in_repo.exists()
    assert not Path("/tmp/written-by-the-build").exists()
    assert_clean(text, task)


def test_failed_offline_install_is_not_retried(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_init(task, tmp_path, '__version__ = str("1.0.0")\nimport requests_not_here\n')
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "install_failed" and data["pass_rate"] == 0.0
    notes = " ".join(data["notes"])  # type: ignore[arg-type]
    assert "offline" in notes and "requests_not_here" in notes
    assert "index" not in notes.replace("--no-index", "")


def test_forged_lines_on_every_descriptor_are_tampering(task: Commit0Task, tmp_path: Path) -> None:
    forged = '{"id": "tests/test_slug.py::test_slugify_basic", "when": "call", "outcome": "passed"}'
    sub = with_init(
        task,
        tmp_path,
        f"""import os
for fd in range(3, 256):
    try:
        os.write(fd, b{forged!r} + b"\\n")
    except OSError:
        pass
""",
    )
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0
    assert any("not written by the scorer" in n for n in data["notes"]), data["notes"]


def test_closing_every_descriptor_leaves_tests_without_result(
    task: Commit0Task, tmp_path: Path
) -> None:
    sub = with_init(task, tmp_path, "import os\nos.closerange(3, 256)\n")
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["pass_rate"] == 0.0 and data["passed"] == 0
    assert data["status"] in ("ok", "no_report")
    assert set(data["not_passed"].values()) <= {"missing", "no_result", "no_report"}


def test_build_time_code_cannot_plant_a_startup_hook(task: Commit0Task, tmp_path: Path) -> None:
    # a .pth in the venv would run before the results plugin at every interpreter start
    hook = "import _pytest.python; _pytest.python.Function.runtest = lambda self: None"
    sub = with_init(
        task,
        tmp_path,
        f"""__version__ = str("1.0.0")  # not static: imported
import os, sys, sysconfig
if "pytest" not in sys.modules:  # at build time
    for where in (sysconfig.get_paths()["purelib"], os.path.dirname(os.getcwd())):
        try:
            with open(os.path.join(where, "zz_hook.pth"), "w") as fh:
                fh.write({hook!r} + "\\n")
        except OSError:
            pass
""",
    )
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "ok" and data["passed"] == 0, data["notes"]
