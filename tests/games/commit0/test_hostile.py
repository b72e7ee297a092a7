"""Hostile Commit-0 submissions, scored through the CLI as an entrant would be.

Each attack scores no more than the honest skeleton (0.0), writes nothing
outside its scratch, ends with a clear reason, and its notes never hold hidden
test source or a secret file's content. Forged verdicts end `tampered` (twins,
canaries, tripwires) or find nothing to forge; the original scores 1.0 with twins.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cogolf.games.commit0.official import to_official
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.task import Commit0Task, load_task
from tests import forgeries
from tests.processes import ctrl_c, in_session, sleepers, token, wait_until

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


def with_init(task: Commit0Task, tmp_path: Path, prelude: str, after: str = "") -> Path:
    """The skeleton with `prelude` run first thing when the package is imported (and
    `after` last)."""
    sub = tmp_path / "submission"
    shutil.copytree(task.skeleton, sub)
    init = sub / "src" / "textkit" / "__init__.py"
    init.write_text(prelude + "\n" + init.read_text() + "\n" + after)
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


# what honest libraries and test tools do (a logger finding its caller, Hypothesis's
# trace function, a memory profiler's heap scan), at import and in every call
HONEST_WIRES = """import gc as _gc, sys as _sys

def _look_around():
    _ = len(_gc.get_objects())
    frame = _sys._getframe(0)
    while frame is not None:
        _ = frame.f_code
        frame = frame.f_back
    _sys.settrace(_sys.gettrace())

_look_around()
"""


def test_a_tripwire_alone_is_a_note_never_the_verdict(task: Commit0Task, tmp_path: Path) -> None:
    original = tmp_path / "original"
    shutil.copytree(TEXTKIT, original)
    init = original / "src" / "textkit" / "__init__.py"
    slug = original / "src" / "textkit" / "slug.py"
    init.write_text(HONEST_WIRES + init.read_text() + '\n__version__ = "1.0.0"\n')
    slug.write_text(slug.read_text() + "\n_real = slugify\n\n\ndef slugify(*a, **k):\n"
                    "    from textkit import _look_around\n    _look_around()\n"
                    "    return _real(*a, **k)\n")
    data, text = score_cli(task, original, tmp_path / "r.json")
    assert data["status"] == "ok" and data["pass_rate"] == 1.0, data["notes"]
    unconfirmed = [n for n in data["notes"] if "not confirmed by the twins or canaries" in n]
    assert any("gc.get_objects" in n for n in unconfirmed), data["notes"]
    assert any("trace function" in n for n in unconfirmed), data["notes"]
    assert_clean(text, task)


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


DAEMONS = """__version__ = str("1.0.0")  # not static: imported at build time too
import os, sys, time
_when = {test!r} if "pytest" in sys.modules else {build!r}
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", _when])
    os._exit(0)
if "pytest" in sys.modules and {linger}:
    time.sleep(60)
"""


def test_daemons_of_the_build_and_the_tests_end_with_them(
    task: Commit0Task, tmp_path: Path
) -> None:
    """Library code that leaves a setsid daemon when setuptools imports it to build it,
    and again when the tests import it: neither outlives the score."""
    build, test = token(), token()
    sub = with_init(task, tmp_path, DAEMONS.format(test=test, build=build, linger=False))
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "ok" and data["pass_rate"] == 0.0, data["notes"]
    assert sleepers(build) == [] and sleepers(test) == []


def test_ctrl_c_of_a_score_ends_the_walled_tests(task: Commit0Task, tmp_path: Path) -> None:
    """SIGINT to `commit0 score`'s process group while the walled tests run (and have a
    daemon): the score stops, and nothing of the run is left."""
    build, test = token(), token()
    sub = with_init(task, tmp_path, DAEMONS.format(test=test, build=build, linger=True))
    with in_session([sys.executable, "-m", "cogolf", "commit0", "score", str(task.root),
                     str(sub), "--entrant", "mallory", "--no-quality", "--out",
                     str(tmp_path / "r.json")], REPO) as score:
        assert wait_until(lambda: bool(sleepers(test)) or score.poll() is not None, 240)
        assert score.poll() is None
        ctrl_c(score)
    assert score.returncode == 130
    assert sleepers(build) == [] and sleepers(test) == []


# --- forged verdicts: each ends tampered or scores what the honest skeleton scores ----------

STUB = re.compile(r"raise NotImplementedError\('cogolf-stub: [^']*'\)")


def with_stubs(task: Commit0Task, tmp_path: Path, body: str, extra: str = "") -> Path:
    """The skeleton with every stub's `raise` replaced by `body` (and `extra` appended)."""
    sub = tmp_path / "stubs"
    shutil.copytree(task.skeleton, sub)
    for module in (sub / "src" / "textkit").glob("*.py"):
        text = module.read_text()
        module.write_text(STUB.sub(body, text) + extra)
    return sub


def test_replacing_the_plugins_send_function_is_tampering_or_nothing(
    task: Commit0Task, tmp_path: Path
) -> None:
    data, _ = score_cli(task, with_init(task, tmp_path / "a", forgeries.SEND_BY_NAME),
                        tmp_path / "a.json")
    assert data["status"] == "ok" and data["pass_rate"] == 0.0, data["notes"]  # found nothing
    data, _ = score_cli(task, with_init(task, tmp_path / "b", forgeries.SEND_BY_CLOSURE),
                        tmp_path / "b.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0, data["notes"]
    assert any(forgeries.TWINS_NOTE in n for n in data["notes"]), data["notes"]  # type: ignore[union-attr]


def test_a_hookwrapper_registered_from_library_code_is_tampering(
    task: Commit0Task, tmp_path: Path
) -> None:
    data, _ = score_cli(task, with_init(task, tmp_path, forgeries.HOOKWRAPPER),
                        tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0, data["notes"]
    notes = " ".join(data["notes"])  # type: ignore[arg-type]
    assert forgeries.TWINS_NOTE in notes
    assert "registered a pytest plugin with report hooks" in notes


def test_a_pytest_plugin_declared_by_the_library_is_never_loaded(
    task: Commit0Task, tmp_path: Path
) -> None:
    """The wheel's `pytest11` entry point (a forger's hooks, loaded before any test if
    it were) is accepted, removed on unpacking, and runs never autoload plugins."""
    sub = with_init(task, tmp_path, "")
    (sub / "src" / "textkit" / "forge.py").write_text(
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    if report.failed:\n"
        "        report.outcome = 'passed'\n        report.longrepr = None\n"
    )
    pyproject = sub / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.setuptools", '[project.entry-points.pytest11]\nforge = "textkit.forge"\n\n'
        "[tool.setuptools", 1))
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "ok" and data["pass_rate"] == 0.0, data


def test_answers_equal_to_everything_are_tampering(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_stubs(task, tmp_path, "return _Always()", forgeries.ALWAYS)
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert forgeries.caught_by_twins_alone(data) and data["pass_rate"] == 0.0, data["notes"]


@pytest.mark.slow
def test_the_original_scores_everything_with_twins_and_xfail_stubs_score_nothing_official(
    task: Commit0Task, tmp_path: Path
) -> None:
    official = tmp_path / "official-task"
    shutil.copytree(task.root, official)
    spec = json.loads((official / "task.json").read_text())
    spec["official_ids"] = [to_official(t, spec["test_files"]) for t in spec["reference_ids"]]
    (official / "task.json").write_text(json.dumps(spec))
    listed = len(spec["official_ids"])
    original = tmp_path / "original"
    shutil.copytree(TEXTKIT, original)
    init = original / "src" / "textkit" / "__init__.py"
    init.write_text(init.read_text() + '\n__version__ = "1.0.0"\n')  # the task's dynamic version
    old = tmp_path / "old-task"  # prepared before twins: the default checks
    shutil.copytree(official, old)
    (old / "task.json").write_text(json.dumps({k: v for k, v in spec.items() if k != "twins"}))
    assert "twins" in spec and load_task(old).twins is None
    for run, where in enumerate((official, official, old)):  # twins drawn afresh each run
        data, _ = score_cli(load_task(where), original, tmp_path / f"o{run}.json")
        assert data["status"] == "ok" and data["pass_rate"] == 1.0, data["notes"]
        assert data["counts"]["twins"] == 8 and data["counts"]["collected"] == 48  # type: ignore[index]
        assert data["official"]["rate"] == 1.0 and data["official"]["failed"] == []  # type: ignore[index]
    stubs = with_stubs(task, tmp_path, "__import__('pytest').xfail('not yet')")
    data, _ = score_cli(load_task(official), stubs, tmp_path / "x.json")
    assert data["status"] == "ok" and data["pass_rate"] == 0.0, data["notes"]
    # an xfail raised from library code is no pass: the benchmark's official rate is 0
    assert data["official"]["rate"] == 0.0 and data["official"]["passed"] == 0  # type: ignore[index]
    assert data["official"]["xfailed"] == listed == len(data["official"]["failed"])  # type: ignore[index]


def test_a_forger_that_swaps_each_tests_function_is_caught_by_its_twins(
    task: Commit0Task, tmp_path: Path
) -> None:
    modules = ["textkit.roman", "textkit.slug", "textkit.stats", "textkit.wrap"]
    sub = with_init(task, tmp_path, "", after=forgeries.swap_functions(modules))
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert forgeries.caught_by_twins_alone(data) and data["pass_rate"] == 0.0, data["notes"]


def test_a_forger_that_strips_asserts_at_import_is_caught_by_its_twins(
    task: Commit0Task, tmp_path: Path
) -> None:
    data, _ = score_cli(task, with_init(task, tmp_path, forgeries.STRIP_ASSERTS),
                        tmp_path / "r.json")
    assert forgeries.caught_by_twins_alone(data) and data["pass_rate"] == 0.0, data["notes"]


_SWAPPED_OPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.And: ast.Or, ast.Or: ast.And,
}


def mutant(source: str, rng: random.Random) -> str:
    """One small random edit of honest code: an operator, a constant or a deleted line
    (never inside a `while`, which could then spin until the time limit)."""
    tree = ast.parse(source)
    looping = {id(n) for w in ast.walk(tree) if isinstance(w, ast.While) for n in ast.walk(w)}
    nodes = [n for n in ast.walk(tree) if id(n) not in looping]
    ops = [n for n in nodes if isinstance(n, ast.BinOp | ast.BoolOp | ast.Compare | ast.AugAssign)]
    constants = [n for n in nodes if isinstance(n, ast.Constant)
                 and isinstance(n.value, int | str) and not isinstance(n.value, bool)]
    bodies = [n for n in nodes if isinstance(n, ast.FunctionDef) and len(n.body) > 1]
    kind = rng.choice([k for k, pool in (("op", ops), ("constant", constants),
                                         ("line", bodies)) if pool])
    if kind == "op":
        node = rng.choice(ops)
        if isinstance(node, ast.Compare):
            node.ops[0] = _SWAPPED_OPS.get(type(node.ops[0]), ast.Eq)()
        else:
            node.op = _SWAPPED_OPS.get(type(node.op), ast.Sub)()  # type: ignore[union-attr]
    elif kind == "constant":
        node = rng.choice(constants)
        node.value = node.value + 1 if isinstance(node.value, int) else node.value[::-1] + "x"
    else:
        function = rng.choice(bodies)
        del function.body[rng.randrange(1, len(function.body))]  # the docstring stays
    return ast.unparse(tree)


@pytest.mark.slow
def test_mutated_honest_libraries_are_never_called_tampered(
    task: Commit0Task, tmp_path: Path
) -> None:
    """36 small random edits of the reference (one per module in each of 9 submissions):
    wrong answers, never a false verdict."""
    quick = tmp_path / "task"
    shutil.copytree(task.root, quick)
    spec = json.loads((quick / "task.json").read_text())
    spec["time_limit_seconds"] = 60
    (quick / "task.json").write_text(json.dumps(spec))
    rng = random.Random(2026)
    submissions = []
    for i in range(9):
        sub = tmp_path / f"mutant{i}"
        shutil.copytree(TEXTKIT, sub)
        for module in ("roman", "slug", "stats", "wrap"):
            path = sub / "src" / "textkit" / f"{module}.py"
            path.write_text(mutant(path.read_text(), rng))
        init = sub / "src" / "textkit" / "__init__.py"
        init.write_text(init.read_text() + '\n__version__ = "1.0.0"\n')
        submissions.append(sub)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: score_cli(load_task(quick), s, s.with_suffix(".json"))[0],
                                submissions))
    statuses = [r["status"] for r in results]
    assert "tampered" not in statuses, [r["notes"] for r in results]
    scored = [r for r in results if r["status"] == "ok"]
    assert len(scored) >= 6 and all(r["counts"]["twins"] == 8 for r in scored)  # type: ignore[index]
    assert min(r["pass_rate"] for r in scored) < 0.9  # type: ignore[type-var]  # the edits bite


def test_a_report_hook_rewrapped_in_place_trips_the_wire(task: Commit0Task, tmp_path: Path) -> None:
    sub = with_init(task, tmp_path, """import sys
_frame = sys._getframe(0)
while _frame is not None:
    _config = _frame.f_locals.get("config")
    if _config is not None and hasattr(_config, "pluginmanager"):
        for _impl in _config.pluginmanager.hook.pytest_runtest_makereport.get_hookimpls():
            if getattr(_impl.plugin, "__name__", "") == "_pytest.runner":
                def _forged(item, call, _real=_impl.function):
                    report = _real(item, call)
                    if report.failed:
                        report.outcome = "passed"
                    return report
                _impl.function = _forged
        break
    _frame = _frame.f_back
""")
    data, _ = score_cli(task, sub, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["pass_rate"] == 0.0, data["notes"]
    assert any("report hook was added or replaced" in n for n in data["notes"]), data["notes"]  # type: ignore[union-attr]
