"""Commit-0 prepare and score on the shipped library, with real walled pytest runs."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.results import ResultError, commit0_table, load_records
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import Commit0Task, TaskError, load_task

REPO = Path(__file__).resolve().parents[3]
TEXTKIT = REPO / "references" / "commit0" / "textkit"


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Commit0Task:
    out = tmp_path_factory.mktemp("textkit") / "task"
    return asyncio.run(prepare(str(TEXTKIT), out, time_limit_seconds=120))


def score(task: Commit0Task, submission: Path, **kw: object):
    return asyncio.run(score_submission(task, submission, quality=False, **kw))  # type: ignore[arg-type]


def submission_from(task: Commit0Task, tmp_path: Path, *, restore: dict[str, str] | None = None,
                    original: bool = False) -> Path:
    """A copy of the skeleton; `original` puts the real library back, `restore` maps a file
    to a function whose original source replaces its stub."""
    sub = tmp_path / "submission"
    shutil.copytree(task.skeleton, sub)
    if original:
        shutil.rmtree(sub / "src" / "textkit")
        shutil.copytree(TEXTKIT / "src" / "textkit", sub / "src" / "textkit")
    for rel, function in (restore or {}).items():
        real = (TEXTKIT / rel).read_text()
        body = re.search(rf"^def {function}\(.*?(?=^\S)", real + "\nEND", re.S | re.M)
        assert body is not None
        stubbed = (sub / rel).read_text()
        stub = re.search(rf"^def {function}\(.*?NotImplementedError\(.*?\)\n", stubbed, re.S | re.M)
        assert stub is not None
        (sub / rel).write_text(stubbed.replace(stub.group(0), body.group(0)))
    return sub


def test_prepare_writes_a_task(task: Commit0Task) -> None:
    loaded = load_task(task.root)
    assert len(loaded.reference_ids) >= 30
    assert loaded.package_paths == ("src/textkit",)
    assert not (task.skeleton / "tests").exists()
    assert loaded.tests_paths == ("tests",)
    assert (task.hidden_tests / "tests" / "test_roman.py").is_file()
    assert "wrap" in loaded.stubbed["textkit.wrap"]
    # `_TABLE = _build_table()` runs at import time, so that function stays whole
    assert loaded.kept == {"textkit.roman": ["_build_table"]}
    slug = (task.skeleton / "src" / "textkit" / "slug.py").read_text()
    assert "raise NotImplementedError('cogolf-stub: textkit.slug:slugify')" in slug
    assert '"""Lower-case ASCII slug of `text`' in slug
    assert all("::" in i for i in loaded.reference_ids)


def test_original_scores_one_with_quality_reported(task: Commit0Task, tmp_path: Path) -> None:
    result = asyncio.run(score_submission(task, submission_from(task, tmp_path, original=True),
                                          entrant="original"))
    data = result.to_json()
    assert data["status"] == "ok", data["notes"]
    assert data["pass_rate"] == 1.0 and data["not_passed"] == {}
    assert data["lint"]["tool"] == "ruff" and data["lint"]["count"] == 0
    assert data["typecheck"]["tool"] == "mypy" and data["typecheck"]["count"] == 0
    assert data["walled"] is True


def test_one_function_restored_scores_in_between(task: Commit0Task, tmp_path: Path) -> None:
    sub = submission_from(task, tmp_path, restore={"src/textkit/roman.py": "to_roman"})
    result = score(task, sub)
    assert 0 < result.pass_rate < 1
    assert "tests.test_roman::test_to_roman[1994-MCMXCIV]" not in result.not_passed
    assert result.not_passed["tests.test_wrap::test_wrap_basic"] == "failed"


def test_collection_error_loses_only_that_module(task: Commit0Task, tmp_path: Path) -> None:
    sub = submission_from(task, tmp_path, original=True)
    stats = sub / "src" / "textkit" / "stats.py"
    # `words` gone: test_stats.py cannot import it, every other test still runs
    text = stats.read_text()
    stats.write_text(text.replace("def words(", "def _words(").replace("Counter(words(",
                     "Counter(_words(").replace("in words(text)", "in _words(text)"))
    result = score(task, sub)
    lost = {i for i, why in result.not_passed.items()}
    assert lost and all(i.startswith("tests.test_stats::") for i in lost)
    assert set(result.not_passed.values()) == {"missing"}
    assert result.passed == len(task.reference_ids) - len(lost)


def limited(task: Commit0Task, folder: Path, **limits: float) -> Commit0Task:
    """A copy of the task with other time limits."""
    shutil.copytree(task.root, folder)
    data = json.loads((folder / "task.json").read_text())
    (folder / "task.json").write_text(json.dumps({**data, **limits}))
    return load_task(folder)


def hanging(task: Commit0Task, tmp_path: Path, how: str) -> Path:
    """The original with `wrap` hanging (`test_wrap.py` runs last); `how` is the body."""
    sub = submission_from(task, tmp_path, original=True)
    wrap = sub / "src" / "textkit" / "wrap.py"
    wrap.write_text(wrap.read_text().replace("    if width < 1:\n",
                                             f"    {how}\n    if width < 1:\n"))
    return sub


@pytest.mark.slow
def test_a_test_over_its_limit_fails_alone_the_rest_still_counts(
        task: Commit0Task, tmp_path: Path) -> None:
    wraps = {i for i in task.reference_ids if i.startswith("tests.test_wrap::test_wrap")}
    # a Python loop: interrupted inside the test at its limit, the suite goes on
    sub = hanging(task, tmp_path, "while True: pass")
    result = score(limited(task, tmp_path / "t1", test_time_limit_seconds=1), sub)
    assert result.status == "ok", result.notes
    assert set(result.not_passed) == wraps and set(result.not_passed.values()) == {"failed"}
    assert result.counts is not None and result.counts["over_test_time_limit"] == len(wraps)
    assert "6 test(s) ran over the per-test time limit of 1s and failed" in result.notes
    assert not any("def test_" in n for n in result.notes)


@pytest.mark.slow
def test_a_test_that_never_returns_to_python_is_stopped_from_outside(
        task: Commit0Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cogolf.evaluation import channel
    monkeypatch.setattr(channel, "STALL_GRACE_SECONDS", 2.0)
    sub = hanging(task, tmp_path, "import time; time.sleep(3600)")  # no exception gets in
    result = score(limited(task, tmp_path / "t1", test_time_limit_seconds=1), sub)
    assert result.status == "ok" and result.seconds < 120, result.notes
    # everything before the hang passed; from the hanging test on, nothing has a result
    after = {i for i in task.reference_ids if i.startswith("tests.test_wrap::")}
    assert set(result.not_passed) == after
    assert any("the run was stopped there" in n for n in result.notes), result.notes
    assert any("killed by signal 9" in n for n in result.notes), result.notes


@pytest.mark.slow
def test_a_run_over_the_suite_limit_counts_what_finished(
        task: Commit0Task, tmp_path: Path) -> None:
    sub = hanging(task, tmp_path, "while True: pass")
    result = score(limited(task, tmp_path / "t1", time_limit_seconds=20,
                           test_time_limit_seconds=600), sub)
    assert result.status == "ok", result.notes
    assert 0 < result.passed < len(task.reference_ids)
    assert all(i.startswith("tests.test_wrap::") for i in result.not_passed)
    assert any("the suite's time limit of 20s was reached after" in n for n in result.notes)


def test_bad_submissions(task: Commit0Task, tmp_path: Path) -> None:
    assert score(task, tmp_path / "nothing").status == "bad_submission"
    sub = tmp_path / "linked"
    (sub / "src" / "textkit").mkdir(parents=True)
    (sub / "src" / "textkit" / "__init__.py").symlink_to("/etc/hostname")
    result = score(task, sub)
    assert result.status == "bad_submission" and "symbolic link" in result.notes[0]
    assert "src/textkit/__init__.py" in result.notes[0]


def test_task_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="no task file"):
        load_task(tmp_path)
    (tmp_path / "task.json").write_text(json.dumps({"game": "commit0", "schema": 1}))
    with pytest.raises(TaskError, match="name must be a non-empty string"):
        load_task(tmp_path)


def test_prepare_refuses_a_tree_without_tests(tmp_path: Path) -> None:
    src = tmp_path / "lib"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "__init__.py").write_text("def f():\n    return 1\n")
    with pytest.raises(SourceError, match=r"this source ships no tests .* --git REPO --commit"):
        asyncio.run(prepare(str(src), tmp_path / "out"))
    # pypdf's sdist: its testpaths name a folder it does not ship, and warnings are errors,
    # so pytest stops before collecting; the missing tests are what is said
    (src / "pyproject.toml").write_text(
        '[project]\nname = "lib"\nversion = "1"\n[tool.pytest.ini_options]\n'
        'testpaths = ["tests"]\nfilterwarnings = ["error"]\n')
    with pytest.raises(SourceError, match=r"this source ships no tests .* --git REPO --commit"):
        asyncio.run(prepare(str(src), tmp_path / "out2"))
    (src / "pyproject.toml").unlink()
    # test modules pytest does not collect (its `python_files` say otherwise)
    (src / "tests").mkdir()
    (src / "tests" / "test_f.py").write_text("from lib import f\n\ndef test_f():\n    assert f()\n")
    (src / "pytest.ini").write_text("[pytest]\npython_files = check_*.py\n")
    with pytest.raises(SourceError, match=r"pytest collected no test on the original.*--tests"
                       r".*pytest said: .*no tests ran"):
        asyncio.run(prepare(str(src), tmp_path / "out2"))


def _result(folder: Path, entrant: str, task: str, rate: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{entrant}-{task}.json").write_text(json.dumps(
        {"game": "commit0", "schema": 1, "task": task, "entrant": entrant, "pass_rate": rate}))


def test_table_means_over_every_task(tmp_path: Path) -> None:
    _result(tmp_path, "alice", "textkit", 1.0)
    _result(tmp_path, "alice", "cachetools", 0.5)
    _result(tmp_path, "bob", "textkit", 0.9)
    rows = commit0_table(load_records(tmp_path))
    assert [(r.entrant, r.mean_pass_rate, r.tasks_scored) for r in rows] == [
        ("alice", 0.75, 2), ("bob", 0.45, 1)]
    assert rows[1].per_task == {"cachetools": None, "textkit": 0.9}
    _result(tmp_path / "again", "bob", "textkit", 0.1)
    with pytest.raises(ResultError, match="bob on textkit is also in"):
        commit0_table(load_records(tmp_path))


def test_cli_scores_the_skeleton_zero_and_tabulates(task: Commit0Task, tmp_path: Path) -> None:
    out = tmp_path / "results" / "skeleton.json"
    done = subprocess.run(
        [sys.executable, "-m", "cogolf", "commit0", "score", str(task.root), str(task.skeleton),
         "--entrant", "skeleton", "--no-quality", "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["status"] == "ok" and data["passed"] == 0 and data["pass_rate"] == 0.0
    assert set(data["not_passed"].values()) == {"failed"}  # every stub raised
    table = subprocess.run([sys.executable, "-m", "cogolf", "commit0", "table", "--tsv",
                            str(tmp_path / "results")], capture_output=True, text=True,
                           cwd=REPO, timeout=60, check=False)
    assert table.stdout.splitlines()[1].split("\t") == ["skeleton", "0.000", "0.000"]


@pytest.mark.parametrize("link", ["src", "src/textkit", "."])
def test_cli_refuses_a_submission_linked_to_the_reference(
    task: Commit0Task, tmp_path: Path, link: str
) -> None:
    """`src -> references/...` once scored 1.0: no link in a submission is followed."""
    sub = tmp_path / "sub"
    if link == ".":
        sub.symlink_to(TEXTKIT)
    else:
        (sub / link).parent.mkdir(parents=True, exist_ok=True)
        (sub / link).symlink_to(TEXTKIT / link)
    done = subprocess.run(
        [sys.executable, "-m", "cogolf", "commit0", "score", str(task.root), str(sub),
         "--no-quality"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "bad_submission" and result["pass_rate"] == 0.0
    assert "symbolic link" in result["notes"][0]


def test_library_modules_that_python_files_names_are_left_out_not_lost(tmp_path: Path) -> None:
    """progressbar2's `python_files` names its own modules: pytest refuses each (the
    installed copy, imported first, shadows it); prepare keeps every hidden test."""
    src = tmp_path / "textkit"
    shutil.copytree(TEXTKIT, src)
    pyproject = src / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'testpaths = ["tests"]', 'python_files = ["test_*.py", "textkit/*.py"]'))
    (src / "conftest.py").write_text("import textkit  # noqa: F401  (the installed copy)\n")
    task = asyncio.run(prepare(str(src), tmp_path / "out", time_limit_seconds=120))
    assert len(task.reference_ids) == 48 and task.tests_paths == ("tests",)
    notes = " ".join(task.prepare.get("notes", []))
    assert "4 library module(s) that `python_files` names were left out" in notes, task.prepare
