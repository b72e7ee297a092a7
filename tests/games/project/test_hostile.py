"""Hostile project attempts on the shipped CSV importer, through the CLI.

The naive template passes 13 of 28 checks and scores 0 points: no attack on the
test process may score more, write outside its scratch, or put the hidden
evaluator's source into the result; a forged verdict ends `tampered` (twins,
canaries, tripwires) or finds nothing to forge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import forgeries
from tests.games.project.cli import project_attempt

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "references" / "projects" / "csv_importer"
TEMPLATE = REPO / "deck" / "projects" / "csv_importer" / "template"
EVALUATOR = DEMO / "evaluator"


def attempt_cli(changes: Path, out: Path) -> tuple[dict[str, object], str]:
    run = project_attempt(DEMO, changes, out, entrant="mallory", attempt=1, timeout=300)
    return run.result, out.read_text() + run.stdout


def naive_with(tmp_path: Path, prelude: str, after: str = "") -> Path:
    overlay = tmp_path / "changes"
    overlay.mkdir()
    text = (TEMPLATE / "contacts_import.py").read_text()
    (overlay / "contacts_import.py").write_text(prelude + "\n" + text + "\n" + after)
    return overlay


def assert_no_hidden_source(text: str) -> None:
    for test_file in EVALUATOR.glob("*.py"):
        for line in test_file.read_text().splitlines():
            if len(line.strip()) > 30:
                assert line.strip() not in text, line
    assert "def test_" not in text


def test_patching_runtest_is_tampered(tmp_path: Path) -> None:
    changes = naive_with(
        tmp_path, "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
    )
    data, text = attempt_cli(changes, tmp_path / "r.json")
    assert data["status"] == "tampered" and data["points"] == 0.0
    assert data["checks"]["passed"] == 0  # type: ignore[index]
    assert any("replaced" in n or "canary" in n for n in data["notes"])  # type: ignore[union-attr]
    assert_no_hidden_source(text)


def test_atexit_junit_rewrite_scores_the_honest_baseline(tmp_path: Path) -> None:
    evaluator_before = {p.name: p.read_bytes() for p in EVALUATOR.iterdir()}
    changes = naive_with(
        tmp_path,
        """import atexit, os, sys
def _forge():
    path = sys.argv[sys.argv.index("--junitxml") + 1]
    cases = "".join(f'<testcase classname="evaluator_tests.test_floor" name="t{i}"/>'
                    for i in range(40))
    for target in (path, os.path.join(os.getcwd(), "evaluator_tests", "test_floor.py")):
        try:
            open(target, "w").write("<testsuites><testsuite>" + cases + "</testsuite></testsuites>")
        except OSError:
            pass
atexit.register(_forge)
""",
    )
    data, _ = attempt_cli(changes, tmp_path / "r.json")
    assert data["points"] == 0.0
    assert data["tests"]["passed"] <= 16  # type: ignore[index]  # the naive template's own
    assert {p.name: p.read_bytes() for p in EVALUATOR.iterdir()} == evaluator_before


def test_exit_after_printing_the_evaluator_leaks_nothing(tmp_path: Path) -> None:
    changes = naive_with(
        tmp_path,
        """import glob, os, sys
for path in glob.glob(os.path.join(os.getcwd(), "evaluator_tests", "*.py")):
    sys.stdout.write(open(path).read()); sys.stderr.write(open(path).read())
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
""",
    )
    data, text = attempt_cli(changes, tmp_path / "r.json")
    assert data["points"] == 0.0 and data["status"] in ("empty_report", "no_report")
    assert_no_hidden_source(text)


def test_frame_walk_into_the_runner_is_a_note_without_a_twin_or_canary(tmp_path: Path) -> None:
    changes = naive_with(
        tmp_path,
        """import sys
frame = sys._getframe(0)
while frame is not None:
    _ = frame.f_code
    frame = frame.f_back
""",
    )
    data, _ = attempt_cli(changes, tmp_path / "r.json")
    # honest code may walk frames (a logger finding its caller): only a twin or canary
    # makes a run tampered, and the naive template's score stays what it is
    assert data["status"] == "ok" and data["points"] == 0.0
    assert any("runner frame" in n and "not confirmed" in n
               for n in data["notes"])  # type: ignore[union-attr]


# An evaluator of another stack: a small program writing go-test JSON into {report}.
GO_REPORT = """import json, os, sys
report = sys.argv[1]
ok = os.path.exists("fixed.txt")
lines = [{"Action": "pass" if ok else "fail", "Package": "p", "Test": "TestA"},
         {"Action": "pass", "Package": "p"}]
ATTACK
with open(report, "w") as fh:
    fh.write("".join(json.dumps(x) + "\\n" for x in lines))
"""


def go_task(tmp_path: Path, attack: str) -> Path:
    task_dir = tmp_path / "go_task"
    (task_dir / "template").mkdir(parents=True)
    (task_dir / "evaluator").mkdir()
    (task_dir / "template" / "main.go").write_text("package p\n")
    (task_dir / "evaluator" / "run.py").write_text(GO_REPORT.replace("ATTACK", attack))
    (task_dir / "task.json").write_text(
        json.dumps(
            {
                "name": "go-like",
                "template": "template",
                "evaluator_tests": "evaluator",
                "command": ["{python}", "{tests}/run.py", "{report}"],
                "report_format": "go-test-json",
                "time_limit_seconds": 60,
                "checks": [{"id": "a", "label": "floor", "tests": ["p::TestA"]}],
            }
        )
    )
    return task_dir


def run_go(task_dir: Path, tmp_path: Path) -> dict[str, object]:
    changes = tmp_path / "changes"
    changes.mkdir(exist_ok=True)
    (changes / "fixed.txt").write_text("yes\n")
    out = tmp_path / "r.json"
    return project_attempt(task_dir, changes, out, entrant="mallory", attempt=1, timeout=120).result


def test_other_stacks_write_their_report_in_place(tmp_path: Path) -> None:
    data = run_go(go_task(tmp_path, ""), tmp_path)
    assert data["status"] == "ok" and data["points"] == 1.0, data["notes"]


def test_a_report_cannot_be_swapped_for_a_link(tmp_path: Path) -> None:
    attack = """try:
    os.remove(report)
except OSError:
    pass
try:
    os.symlink("/etc/shadow", report)
except OSError:
    pass
lines = []
"""
    data = run_go(go_task(tmp_path, attack), tmp_path)
    assert data["points"] == 0.0 and data["status"] in ("no_report", "empty_report")
    shadow = Path("/etc/shadow").read_text().splitlines()[0]
    assert shadow not in json.dumps(data)


NAIVE_CHECKS = 13
ANSWERS = {  # the whole importer replaced: `import_contacts` answers with this
    "always": ("return _Always()", forgeries.ALWAYS),
    "xfail": ('__import__("pytest").xfail("not yet")', ""),
}


def forged(tmp_path: Path, how: str) -> Path:
    if how in ANSWERS:
        body, extra = ANSWERS[how]
        overlay = tmp_path / "changes"
        overlay.mkdir()
        (overlay / "contacts_import.py").write_text(
            f"def import_contacts(data):\n    {body}\n{extra}")
        return overlay
    if how == "swap":
        return naive_with(tmp_path, "", after=forgeries.swap_functions([]))
    return naive_with(tmp_path, {"send_by_name": forgeries.SEND_BY_NAME,
                                 "send_by_closure": forgeries.SEND_BY_CLOSURE,
                                 "hookwrapper": forgeries.HOOKWRAPPER,
                                 "strip": forgeries.STRIP_ASSERTS}[how])


@pytest.mark.slow
@pytest.mark.parametrize("how", ["send_by_name", "send_by_closure", "hookwrapper", "always",
                                 "xfail", "swap", "strip"])
def test_forged_verdicts_are_tampering_or_the_honest_score(tmp_path: Path, how: str) -> None:
    data: dict[str, Any]
    data, text = attempt_cli(forged(tmp_path, how), tmp_path / "r.json")  # type: ignore[assignment]
    assert data["points"] == 0.0, data
    assert_no_hidden_source(text)
    if how == "send_by_name":  # the plugin is no longer in sys.modules: nothing forged
        assert data["status"] == "ok" and data["checks"]["passed"] == NAIVE_CHECKS, data
    elif how == "xfail":  # an xfail is no pass
        assert data["status"] == "ok" and data["checks"]["passed"] == 0, data
    elif how in ("always", "swap", "strip"):  # no tripwire or canary sees these
        assert forgeries.caught_by_twins_alone(data), data["notes"]
    else:
        assert data["status"] == "tampered", data["notes"]
        assert any(forgeries.TWINS_NOTE in n for n in data["notes"]), data["notes"]
    assert data["twins"] == 8
