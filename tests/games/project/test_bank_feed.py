"""Bank Feed: the browser task (Chromium through Playwright, walled) and the widenings
its evaluator needs: playwright in the toolbox, more tasks, /proc and font configuration
readable, and unix sockets that may listen but never connect."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from cogolf.evaluation.pyenv import shared_tempdir
from cogolf.evaluation.walled import Walls, run_evaluator, walls_available
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import TaskError, load_task, parse_task
from tests.games.project.cli import project_attempt
from tests.stacks import needs

REPO = Path(__file__).resolve().parents[3]
TASK = REPO / "references" / "projects" / "bank_feed"
TEMPLATE = REPO / "deck" / "projects" / "bank_feed" / "template"
SOLUTION = TASK / "solution"
COGOLF = Path(sys.executable).with_name("cogolf")
CHROMIUM = Path("/usr/bin/chromium")

needs_chromium = needs(CHROMIUM.exists(), "Debian's chromium")


def test_task_has_the_methodology_check_counts() -> None:
    task = load_task(TASK)
    labels = [c.label for c in task.checks]
    assert (len(labels), labels.count("floor"), labels.count("signal")) == (48, 27, 21)
    assert task.toolbox == ("playwright",)
    assert task.walls.unix_listen and task.walls.max_processes == 384
    assert [str(p) for p in task.walls.readable] == ["/proc", "/etc/fonts", "/etc/chromium.d"]
    # every mapped test exists, and every test is mapped exactly once
    defined = set()
    for module in ("test_floor", "test_signal"):
        text = (TASK / "evaluator" / f"{module}.py").read_text()
        defined |= {
            f"evaluator_tests.{module}::{n}" for n in re.findall(r"^def (test_\w+)", text, re.M)
        }
    mapped = [t for c in task.checks for t in c.tests]
    assert sorted(mapped) == sorted(defined)


def test_the_contract_file_is_in_the_template_and_untouched_by_the_reference() -> None:
    assert (TEMPLATE / "feed-contract.js").is_file() and (
        TEMPLATE / "transaction-feed.js"
    ).is_file()
    assert not (SOLUTION / "feed-contract.js").exists()


def _task(**extra: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "report_format": "junit",
        "checks": [{"id": "a", "label": "floor", "tests": ["m::t"]}],
        **extra,
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"toolbox": "playwright"}, "toolbox must be a list of distribution names"),
        ({"toolbox": ["../evil"]}, "toolbox must be a list of distribution names"),
        ({"walls": {"max_processes": 0}}, r"max_processes must be an integer in \[1, 1024\]"),
        ({"walls": {"max_processes": True}}, "max_processes must be an integer"),
        ({"walls": {"max_processes": 5000}}, "max_processes must be an integer"),
        ({"walls": {"readable": ["proc"]}}, "readable must be a list of absolute paths"),
        ({"walls": {"readable": ["/usr/../etc"]}}, "without '..'"),
        ({"walls": {"unix_listen": "yes"}}, "unix_listen must be true or false"),
        ({"walls": {"writable": ["../outside"]}}, "writable must be a list of relative paths"),
        ({"walls": {"writable": ["/etc"]}}, "writable must be a list of relative paths"),
        ({"walls": {"network": True}}, "walls: expected an object with"),
        ({"walls": []}, "walls: expected an object with"),
    ],
)
def test_bad_toolbox_or_walls_name_the_field(
    tmp_path: Path, extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(TaskError, match=message):
        parse_task(_task(**extra), tmp_path)


def test_a_task_without_widenings_keeps_the_default_walls(tmp_path: Path) -> None:
    task = parse_task(_task(), tmp_path)
    assert task.toolbox == () and task.walls.readable == () and not task.walls.unix_listen
    assert task.walls.max_processes is None


PROBE = r"""
import errno, os, socket, sys
out = []
def attempt(name, fn):
    try:
        fn(); out.append(name + "=ok")
    except OSError as exc:
        out.append(name + "=" + errno.errorcode.get(exc.errno, str(exc.errno)))
here = os.getcwd()
def unix_listen():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(os.path.join(here, "lock.sock")); s.listen(1)
def unix_connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.path.join(here, "lock.sock"))
attempt("unix_listen", unix_listen)
attempt("unix_connect", unix_connect)
attempt("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
print(" ".join(out))
"""


def _probe(unix_listen: bool) -> str:
    with shared_tempdir("cogolf-probe-") as tmp:
        work = Path(tmp)
        (work / "probe.py").write_text(PROBE)
        walls = Walls(readable=(work,), writable=(work,), max_processes=4, unix_listen=unix_listen)
        run = asyncio.run(
            run_evaluator(
                ["/usr/bin/python3.11", "-I", str(work / "probe.py")],
                cwd=work,
                walls=walls,
                wall_seconds=30,
            )
        )
    assert run.walled and run.returncode == 0, run.stderr[-500:]
    return run.stdout.decode().strip()


@pytest.mark.skipif(not walls_available(), reason="no sandbox walls here")
def test_unix_listen_opens_only_listening_unix_sockets() -> None:
    assert _probe(unix_listen=True) == (
        "unix_listen=ok unix_connect=EPERM inet=EPERM inet6=EPERM netlink=EPERM"
    )
    assert _probe(unix_listen=False) == (
        "unix_listen=EPERM unix_connect=EPERM inet=EPERM inet6=EPERM netlink=EPERM"
    )


def test_the_evaluator_serves_no_file_outside_the_candidates_sources() -> None:
    """The candidate's page is served by interception; its own directory and anything
    that is not a web source stay private (the evaluator's tests, the report)."""
    pytest.importorskip("playwright")
    sys.path.insert(0, str(TASK / "evaluator"))
    try:
        import feedkit
    finally:
        sys.path.remove(str(TASK / "evaluator"))

    class FakeRoute:
        def __init__(self, url: str) -> None:
            self.request = type("R", (), {"url": url})()
            self.status = 0

        def fulfill(self, status: int, body: Any, content_type: str = "") -> None:
            self.status = status

    def status(path: str, workspace: Path) -> int:
        route = FakeRoute(feedkit.ORIGIN + path)
        old = feedkit.WORKSPACE, feedkit.HERE
        feedkit.WORKSPACE, feedkit.HERE = workspace, workspace / "evaluator_tests"
        try:
            feedkit._serve(route)  # type: ignore[arg-type]
        finally:
            feedkit.WORKSPACE, feedkit.HERE = old
        return route.status

    ws = TASK.parent / "_never_created"
    assert status("/__feed__.html", ws) == 200
    workspace = REPO / "deck" / "projects" / "bank_feed" / "template"
    assert status("/transaction-feed.js", workspace) == 200
    assert status("/evaluator_tests/feedkit.py", workspace) == 404
    assert status("/evaluator_tests/x.js", REPO / "deck") == 404
    assert status("/../../../pyproject.toml", workspace) == 404
    assert status("/../csv_importer/template/contacts_import.py", workspace) == 404
    assert status("/prompt.md", workspace.parent) == 404


def _cli_attempt(tmp_path: Path, task: Path, changes: Path) -> dict[str, Any]:
    out = tmp_path / "result.json"
    return project_attempt(task, changes, out, entrant="ci", timeout=900).result


@pytest.mark.slow
@needs_chromium
def test_reference_scores_one_point_in_walled_chromium(tmp_path: Path) -> None:
    data = _cli_attempt(tmp_path, TASK, SOLUTION)
    assert data["status"] == "ok", data["notes"]
    assert data["walled"] is True
    assert data["checks"]["failed"] == [], data["checks"]
    assert data["tests"] == {"passed": 48, "total": 48, "complete": True}
    assert data["points"] == 1.0


@pytest.mark.slow
@needs_chromium
def test_naive_template_scores_zero(tmp_path: Path) -> None:
    overlay = tmp_path / "naive"
    overlay.mkdir()
    text = (TEMPLATE / "transaction-feed.js").read_text()
    # ...plus a try at the evaluator's page helpers, which must stay out of reach
    cheat = 'try { window.rowIds = () => ["new", "later-same-day", "mid", "old"]; } catch {}\n'
    (overlay / "transaction-feed.js").write_text(text + "\n// reviewed: first pass kept\n" + cheat)
    data = _cli_attempt(tmp_path, TASK, overlay)
    assert data["status"] == "ok", data["notes"]
    assert data["points"] == 0.0
    assert data["tests"]["total"] == 48 and data["tests"]["complete"]
    assert data["by_label"]["signal"]["passed"] == 0
    assert 0 < data["by_label"]["floor"]["passed"] < 27  # it renders, but little else
    for check in (
        "malformed-records-salvaged",
        "newest-first",
        "page-error-inline",
        "description-is-text-not-markup",
        "lazy-rows",
    ):
        assert check in data["checks"]["failed"]


@pytest.mark.slow
@needs_chromium
def test_a_hanging_element_times_out_and_leaves_no_browser(tmp_path: Path) -> None:
    task_dir = tmp_path / "quick_bank_feed"
    shutil.copytree(TASK, task_dir, ignore=shutil.ignore_patterns("solution"))
    spec = json.loads((task_dir / "task.json").read_text())
    spec["template"], spec["prompt"] = str(TEMPLATE), str(TEMPLATE.parent / "prompt.md")
    spec["time_limit_seconds"] = 25
    (task_dir / "task.json").write_text(json.dumps(spec))
    overlay = tmp_path / "spin"
    overlay.mkdir()
    (overlay / "transaction-feed.js").write_text(
        "export class TransactionFeed extends HTMLElement {\n"
        "  connectedCallback() { for (;;) {} }\n}\n"
        'customElements.define("transaction-feed", TransactionFeed);\n'
    )
    before = _attempt_browsers()
    result = asyncio.run(run_attempt(load_task(task_dir), overlay))
    assert result.score.status is AttemptStatus.TIMEOUT
    assert result.points == 0.0
    assert _attempt_browsers() - before == set()  # the whole tree died with the run


def _attempt_browsers() -> set[int]:
    """Chromium processes whose profile lives in an attempt's directory."""
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"chromium" in cmdline and b"cogolf-attempt-" in cmdline:
                found.add(int(proc.name))
    return found
