"""Hostile submissions and reports, run the way a user runs the game (the CLI).

Each attack (a link out of the submission, a huge file, a report that nests
forever or declares entities, a golf file that reads private tests or lifts its
own time limit) must score no better than an honest file and end with a clear
reason, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf import safeio
from cogolf.evaluation.reports import PARSERS, ReportError, parse_report
from cogolf.games.commit0.layout import SubmissionError, overlay_submission
from cogolf.games.golf.holes import load_holes
from cogolf.games.golf.play import judge_attempts, run_attempt
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.runners.python_process import ProcessPythonRunner

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "tests" / "games" / "golf" / "solutions"
DEMO = REPO / "references" / "projects" / "csv_importer"
SECRET = Path("/etc/shadow")


def cogolf(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def secret_line() -> str:
    return SECRET.read_text().splitlines()[0]


def golf_score(tmp_path: Path, subs: Path, course: str = "python") -> tuple[dict, str]:
    res = tmp_path / "res"
    done = cogolf("golf", "score", "--course", course, "--model", "m", "--results", str(res),
                  str(subs))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc = json.loads(next(res.glob("m.*.json")).read_text())
    return {h["hole"]: h for h in doc["holes"]}, done.stdout + done.stderr


# ---------------------------------------------------------------- links and sizes


def test_golf_links_to_solutions_and_secrets_are_refused(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    (subs / "flatten").mkdir(parents=True)
    (subs / "reverse-string.py").symlink_to(SOLUTIONS / "python" / "reverse-string.py")
    (subs / "palindrome.py").symlink_to(SECRET)
    (subs / "flatten" / "a.py").symlink_to(SOLUTIONS / "python" / "flatten.py")
    (subs / "sum-digits").symlink_to(SOLUTIONS / "python")
    by_hole, out = golf_score(tmp_path, subs)
    for key in ("reverse-string", "palindrome", "flatten", "sum-digits"):
        hole = by_hole[key]
        assert hole["status"] == "failed" and hole["tests_passed"] == 0, key
        assert "symbolic link" in hole["detail"] or "links are never followed" in hole["detail"]
        assert hole["score"] > 1000  # worse than passing the hole
    assert "reverse-string.py" in by_hole["reverse-string"]["detail"]
    assert secret_line() not in out + json.dumps(by_hole)


def test_golf_linked_submissions_folder_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "subs"
    link.symlink_to(SOLUTIONS / "python")
    done = cogolf("golf", "score", "--course", "python", "--model", "m", "--results",
                  str(tmp_path / "res"), str(link))
    assert done.returncode == 2 and "symbolic link" in done.stderr and str(link) in done.stderr
    assert not (tmp_path / "res").exists()


def test_golf_huge_sparse_file_is_not_read(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    big = subs / "reverse-string.py"
    with big.open("wb") as fh:
        fh.truncate(512 * 1024 * 1024)
    probe = (
        "import resource, subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'cogolf', 'golf', 'score', '--course', 'python',"
        f" '--model', 'm', '--results', {str(tmp_path / 'res')!r}, {str(subs)!r}], check=True,"
        " stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=300, check=True)
    assert int(done.stdout.split()[-1]) < 200 * 1024  # KiB: far below the file's 512 MB
    doc = json.loads(next((tmp_path / "res").glob("m.*.json")).read_text())
    hole = {h["hole"]: h for h in doc["holes"]}["reverse-string"]
    assert hole["status"] == "failed" and "larger than 65536 bytes" in hole["detail"]
    assert "536870912 bytes" in hole["detail"]


def test_commit0_linked_package_folders_are_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    reference = tmp_path / "references" / "src"
    (reference / "pkg").mkdir(parents=True)
    (reference / "pkg" / "__init__.py").write_text("SOLVED = True\n")
    linked_src = tmp_path / "a"
    linked_src.mkdir()
    (linked_src / "src").symlink_to(reference)
    linked_pkg = tmp_path / "b"
    (linked_pkg / "src").mkdir(parents=True)
    (linked_pkg / "src" / "pkg").symlink_to(reference / "pkg")
    linked_root = tmp_path / "c"
    linked_root.symlink_to(reference.parent)
    for sub, where in ((linked_src, "src"), (linked_pkg, "src/pkg"), (linked_root, "c")):
        with pytest.raises(SubmissionError, match="symbolic link") as info:
            overlay_submission(("src/pkg",), sub, work)
        assert where in str(info.value)
    assert not (work / "src" / "pkg" / "__init__.py").exists()


def _attempt(tmp_path: Path, changes: Path) -> dict:
    out = tmp_path / "result.json"
    done = cogolf("project", "attempt", str(DEMO), str(changes), "--out", str(out))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(out.read_text())


def test_project_overlay_linked_to_the_solution_is_refused(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    whole.symlink_to(DEMO / "solution")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pkg").symlink_to(DEMO / "solution")
    for changes, where in ((whole, "whole"), (inner, "overlay/pkg")):
        result = _attempt(tmp_path, changes)
        assert result["status"] == "bad_changes" and result["points"] == 0
        assert "symbolic link" in result["notes"][0] and where in result["notes"][0]


def _ingest_task(tmp_path: Path, fmt: str) -> Path:
    task = tmp_path / f"task-{fmt}"
    task.mkdir()
    (task / "task.json").write_text(json.dumps({
        "name": f"t-{fmt}", "report_format": fmt,
        "checks": [{"id": "a", "label": "floor", "tests": ["x::y"]}],
    }))
    return task


def _ingest(tmp_path: Path, fmt: str, report: Path) -> dict:
    done = cogolf("project", "ingest", str(_ingest_task(tmp_path, fmt)), str(report))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_report_linked_to_a_secret_is_refused(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.symlink_to(SECRET)
    result = _ingest(tmp_path, "junit", report)
    assert result["status"] == "bad_report" and result["points"] == 0
    assert "symbolic link" in " ".join(result["notes"])
    assert secret_line() not in json.dumps(result)


def test_report_hard_linked_elsewhere_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "reference-report.xml"
    elsewhere.write_text("<testsuite><testcase classname='x' name='y'/></testsuite>")
    report = tmp_path / "report.xml"
    report.hardlink_to(elsewhere)
    result = _ingest(tmp_path, "junit", report)
    assert result["status"] == "bad_report" and result["points"] == 0
    assert "hard links" in " ".join(result["notes"])


def test_huge_report_is_refused_before_reading(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with report.open("wb") as fh:
        fh.truncate(65 * 1024 * 1024)
    result = _ingest(tmp_path, "go-test-json", report)
    assert result["status"] == "bad_report" and "too large" in " ".join(result["notes"])


# ---------------------------------------------------------------- parsers

DEEP = 100_000
HOSTILE_REPORTS = {
    "junit-deep": ("junit", b"<testsuites>" + b"<testsuite name='s'>" * DEEP
                   + b"<testcase classname='x' name='y'><failure/></testcase>"
                   + b"<testcase classname='x' name='y'/>"
                   + b"</testsuite>" * DEEP + b"</testsuites>"),
    "junit-pi-doctype": ("junit", b"<?xml version='1.0'?><?pi x?><!DOCTYPE t ["
                         b"<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;'>]>"
                         b"<testsuite><testcase classname='x' name='y&b;'/></testsuite>"),
    "junit-utf16-doctype": ("junit", "<?xml version='1.0' encoding='UTF-16'?><!DOCTYPE t ["
                            "<!ENTITY a 'a'>]><testsuite><testcase classname='x' name='y'/>"
                            "</testsuite>".encode("utf-16")),
    "junit-external": ("junit", b"<!DOCTYPE t SYSTEM 'file:///etc/shadow'><testsuite/>"),
    "go-brackets": ("go-test-json", b"[" * DEEP),
    "go-objects": ("go-test-json", b'{"Action":' * DEEP),
    "dart-brackets": ("dart-json", b"[" * DEEP),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_REPORTS))
def test_hostile_reports_score_zero_with_a_reason(tmp_path: Path, name: str) -> None:
    fmt, data = HOSTILE_REPORTS[name]
    report = tmp_path / "report"
    report.write_bytes(data)
    result = _ingest(tmp_path, fmt, report)
    if name == "junit-deep":  # well-formed, only deep: read to the end, the failure counts
        assert result["status"] == "ok" and result["checks"]["failed"] == ["a"]
        return
    assert result["points"] == 0 and result["status"] != "ok"
    assert result["notes"], "a reason is given"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(sorted(PARSERS)), data=st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from([b"[", b"{", b'"a":', b"<testsuite>", b"<testcase name='n'/>",
                              b"</testsuite>", b"\n", b'{"Action":"run","Package":"p","Test":"t"}',
                              b'{"type":"testStart","test":{"id":1,"name":"n"}}', b"<!DOCTYPE x>",
                              b"<?xml version='1.0'?>", b"&a;", b"]", b"}"]),
             max_size=200).map(b"".join),
))
def test_fuzzed_reports_parse_or_raise_report_error(fmt: str, data: bytes) -> None:
    try:
        report = parse_report(fmt, data)
    except ReportError as exc:
        assert str(exc)
        return
    assert all(isinstance(k, str) for k in report.tests)


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(min_value=1, max_value=5000), opener=st.sampled_from([b"[", b"{\"a\":"]))
def test_fuzzed_golf_result_files_are_read_or_refused(
    tmp_path_factory: pytest.TempPathFactory, depth: int, opener: bytes
) -> None:
    from cogolf.games.golf.results import ResultError, read_result

    path = tmp_path_factory.mktemp("r") / "x.json"
    path.write_bytes(opener * depth)
    with pytest.raises(ResultError):
        read_result(path)


# ---------------------------------------------------------------- private tests and time


def test_live_player_never_sees_private_tests(tmp_path: Path) -> None:
    policy = tmp_path / "echo.py"
    policy.write_text("def echo(observation):\n    return 'f=lambda *a: a'\n")
    res, reps = tmp_path / "res", tmp_path / "reps"
    done = cogolf("golf", "play", "--course", "python", "--bot", f"{policy}:echo",
                  "--in-process", "--model", "echo", "--results", str(res),
                  "--replays", str(reps), "--match-id", "echo-1")
    assert done.returncode == 0, done.stderr
    seen = done.stdout + done.stderr + "".join(p.read_text() for p in res.iterdir())
    seen += "".join(p.read_text() for p in reps.iterdir())
    assert "private-" not in seen
    holes = load_holes()
    doc = json.loads(next(res.iterdir()).read_text())
    for hole_doc in doc["holes"]:
        hole = holes.hole(hole_doc["hole"])
        assert hole_doc["private_total"] == len(hole.private)
        assert [t["name"] for t in hole_doc["tests"]] == [t.name for t in hole.public]
        # anything some hole tells the player (its hole_start records it) is public
        public = {json.dumps(list(t.args), ensure_ascii=False)
                  for h in holes.holes for t in h.public}  # fmt: skip
        for t in hole.private:
            shown = json.dumps(list(t.args), ensure_ascii=False)
            if len(shown) > 8 and shown not in public:
                assert shown not in seen, (hole.key, shown)


def test_rust_compile_errors_quote_no_test_data(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "reverse-string.rs").write_text("fn f(s: i64) -> String { s.to_string() }\n")
    by_hole, out = golf_score(tmp_path, subs, "rust")
    hole = by_hole["reverse-string"]
    assert "private-" not in out
    assert hole["reason"] == "Syntax error" and "error" in hole["detail"]
    for t in load_holes().hole("reverse-string").scoring:
        assert json.dumps(t.args[0])[1:-1] not in hole["detail"] or len(t.args[0]) < 3


RUST_TIMER_OFF = """\
#[repr(C)] struct T { s: i64, u: i64 }
#[repr(C)] struct I { a: T, b: T }
extern "C" { fn setitimer(w: i32, n: *const I, o: *mut I) -> i32; }
fn f(s: String) -> String {
    let z = I { a: T { s: 0, u: 0 }, b: T { s: 0, u: 0 } };
    unsafe { setitimer(2, &z, std::ptr::null_mut()); }
    let mut x = 0u64;
    for i in 0..4_000_000_000u64 { x = std::hint::black_box(x.wrapping_add(i)); }
    if x == 1 { return String::new(); }
    s.chars().rev().collect()
}
"""


def test_rust_program_cannot_switch_off_its_time_limit(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "reverse-string.rs").write_text(RUST_TIMER_OFF)
    by_hole, _ = golf_score(tmp_path, subs, "rust")
    hole = by_hole["reverse-string"]
    assert hole["reason"] == "Timeout" and hole["tests_passed"] == 0
    assert "measured by the scorer" in hole["tests"][0]["detail"]


PYTHON_TIMER_OFF = """\
import signal, time
def f(s):
    signal.signal(signal.SIGPROF, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_PROF, 0)
    t = time.process_time()
    while time.process_time() - t < 2.5:
        pass
    return s[::-1]
"""


def test_python_fallback_program_cannot_switch_off_its_time_limit() -> None:
    hole = load_holes().hole("reverse-string")
    runner = ProcessPythonRunner(RunLimits(per_test_seconds=0.5, per_hole_seconds=8.0))
    source = PYTHON_TIMER_OFF.encode()
    batch = asyncio.run(run_attempt(runner, hole, source))
    result = judge_attempts(hole, [source], [batch])
    assert result.reason == "Timeout" and result.tests_passed == 0
    assert batch.results[0].status.value == "timeout"
    assert "measured by the scorer" in batch.results[0].detail


def test_safe_read_refuses_fifos_and_growth(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(safeio.UnsafeFile, match="not a regular file"):
        safeio.read_file(fifo, 10)
    small = tmp_path / "small"
    small.write_bytes(b"x" * 11)
    with pytest.raises(safeio.TooLarge, match="11 bytes"):
        safeio.read_file(small, 10)
    assert safeio.read_file(small, 11) == b"x" * 11


@pytest.mark.parametrize("linked", ["subs/lit", "subs/lit/python"])
def test_night_path_templates_never_follow_links(tmp_path: Path, linked: str) -> None:
    night = tmp_path / "night.toml"
    night.write_text('name = "s1"\nseed = 5\nholes = 1\n[golf]\ncourses = ["python"]\n'
                     '[[entrant]]\nname = "lit"\npolicy = "literalist"\n'
                     'golf = "subs/lit/{course}"\n'
                     '[[entrant]]\nname = "ped"\npolicy = "pedant"\n')
    (tmp_path / linked).parent.mkdir(parents=True, exist_ok=True)
    target = SOLUTIONS if linked == "subs/lit" else SOLUTIONS / "python"
    (tmp_path / linked).symlink_to(target)
    done = cogolf("league", "check", str(night))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "symbolic link" in done.stderr and str(tmp_path / linked) in done.stderr
