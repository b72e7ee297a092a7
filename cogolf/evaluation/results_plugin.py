"""A pytest plugin that sends each test's result out of the process as it happens.

Loaded with `-p` under a per-run module name, so it is imported before any
conftest, test module or library code. At import it takes the channel (a pipe
inherited from the scorer, its number in COGOLF_RESULTS_FD, moved to a fresh
descriptor) and a per-run token (read from stdin), installs an audit hook, and
keeps references to the functions it needs. From then on it writes one JSON line
per test phase; the scorer, outside the walls, builds the outcomes from those
lines and never from a file the process under test could rewrite.

Its state (descriptor, token, write function, snapshots) lives in the closures
of its hook functions, not in module globals, and the module leaves
`sys.modules` as soon as pytest has registered it: replacing the send function
takes more than a dictionary lookup.

Tripwires (a record `{"tripwire": ...}` that makes the run `tampered`):
- code outside the runner, the standard library and the trusted tests that
  patches pytest's or pluggy's functions and classes (also found by comparing
  their identity with a snapshot at every report), reads the code of a runner
  frame, asks for a runner frame with `sys._getframe`, scans the heap with `gc`,
  or installs a trace or profile function;
- a pytest plugin with report hooks (`pytest_runtest_makereport`,
  `pytest_runtest_logreport`, `pytest_report_teststatus`) registered from such
  code, or an implementation of those hooks added or replaced without a plugin
  registration at all.

This is a tripwire, not a wall: code in the same process can evade it, and an
honest library or test tool can set it off (Hypothesis installs a trace function,
a logger reads its callers' frames). The scorer holds a tripwire as a note unless
its twins or canaries confirm a forgery.

Per-test time limit (COGOLF_TEST_SECONDS): a test still running when its time is
up gets an exception raised in the main thread at its next Python instruction, so
it fails alone and the suite goes on. A test that never returns to Python (or
swallows the exception) is stopped from outside: the scorer kills the run when
the channel stays silent longer than the limit allows.

Standalone on purpose: the test environment has pytest, not cogolf.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import sys
import sysconfig
import threading
import time
from typing import Any

import _pytest.python
import _pytest.reports
import _pytest.runner
import pluggy
import pytest

_WATCHED_NAMES = (
    "_pytest.runner.call_and_report",
    "_pytest.runner.runtestprotocol",
    "_pytest.runner.call_runtest_hook",
    "_pytest.runner.CallInfo.from_call",
    "_pytest.runner.pytest_runtest_call",
    "_pytest.runner.pytest_runtest_makereport",
    "_pytest.runner.pytest_runtest_protocol",
    "_pytest.python.pytest_pyfunc_call",
    "_pytest.python.Function.runtest",
    "_pytest.reports.TestReport.from_item_and_call",
    "_pytest.reports.TestReport.__init__",
    "_pytest.reports.BaseReport.passed",
    "_pytest.reports.BaseReport.failed",
    "pluggy.HookCaller.__call__",
    "pluggy.PluginManager._hookexec",
)
_REPORT_HOOKS = ("pytest_runtest_makereport", "pytest_runtest_logreport",
                 "pytest_report_teststatus")
_MESSAGE_CHARS = 300


class TestTimeLimit(BaseException):
    """Raised in a test that ran over the per-test time limit (a BaseException, so an
    `except Exception` in the test does not swallow it)."""

    __test__ = False  # not a test class, whatever pytest's `python_classes` say


def _last_error_line(report: Any) -> str:
    """The exception line of a failed collection (`E   ModuleNotFoundError: ...`)."""
    try:
        text = str(report.longrepr or "")
    except Exception:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (errors[-1] if errors else lines[-1] if lines else "")[:_MESSAGE_CHARS]


def _install() -> dict[str, Any]:
    """Take the channel and build the hooks; what they need lives in their closures."""
    write, dumps, getframe, normpath = os.write, json.dumps, sys._getframe, os.path.normpath
    is_instance, type_of, ident = isinstance, type, id
    frame_type = type_of(getframe())
    module_name = __name__
    this_module = sys.modules[module_name]

    fd = int(os.environ.pop("COGOLF_RESULTS_FD"))
    token = os.read(0, 512).decode("ascii", "replace").strip()
    # a descriptor number the process does not expect; the inherited one is closed
    private_fd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100 + int.from_bytes(os.urandom(1)) % 100)
    os.close(fd)

    # the runner's own packages (not the folder holding them: that may be the venv's
    # site-packages, the library's and every dependency's too)
    runner_dirs = (
        *(os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep
          for m in (pytest, pluggy, _pytest.python)),
        os.path.abspath(__file__),
    )
    # the interpreter's own library (a venv's lib/pythonX.Y holds site-packages: not that)
    stdlib_dirs = tuple(
        {os.path.dirname(os.__file__) + os.sep, os.path.dirname(sysconfig.__file__) + os.sep})
    trusted_tests = tuple(
        p.rstrip(os.sep) + os.sep
        for p in os.environ.pop("COGOLF_TRUSTED_TESTS", "").split(os.pathsep) if p)
    # files of plugins pytest registered (conftests, `-p` plugins): their code may register more
    plugin_files: set[str] = set()
    plugin_dirs: list[str] = []

    def current(name: str) -> Any:
        module, _, rest = name.partition(".")
        if module == "_pytest":
            sub, _, rest = rest.partition(".")
            owner: Any = sys.modules.get(f"_pytest.{sub}")
        else:
            owner = sys.modules.get(module)
        parts = rest.split(".")
        for part in parts[:-1]:
            owner = getattr(owner, part, None)
        if is_instance(owner, type_of):
            return owner.__dict__.get(parts[-1])
        return getattr(owner, parts[-1], None)

    watched = {n: obj for n in _WATCHED_NAMES if (obj := current(n)) is not None}
    codes = {name: getattr(obj, "__code__", None) for name, obj in watched.items()}
    sent_tripwires: set[str] = set()
    known_impls: dict[int, tuple[Any, Any]] = {}  # id -> (hook implementation, its function)
    managers: list[Any] = []
    busy = [False]

    def send(record: dict[str, Any]) -> None:
        record["token"] = token
        data = (dumps(record) + "\n").encode()
        try:
            while data:
                data = data[write(private_fd, data):]
        except OSError:
            pass  # the scorer is gone or the channel was closed: nothing more to say

    def tripwire(what: str) -> None:
        if what not in sent_tripwires and len(sent_tripwires) < 20:
            sent_tripwires.add(what)
            send({"tripwire": what[:200]})

    def report_impls(manager: Any) -> list[Any]:
        impls = []
        for name in _REPORT_HOOKS:
            hook = getattr(manager.hook, name, None)
            if hook is not None:
                impls += hook.get_hookimpls()
        return impls

    def check_snapshot() -> None:
        for name, obj in watched.items():
            now = current(name)
            if now is not obj or getattr(now, "__code__", None) is not codes[name]:
                tripwire(f"{name} was replaced")
        for manager in managers:
            for impl in report_impls(manager):
                seen = known_impls.get(ident(impl))
                if seen is None or seen[0] is not impl or impl.function is not seen[1]:
                    tripwire("a pytest report hook was added or replaced without registering "
                             "a plugin")

    def kind(filename: str) -> str:
        if filename.startswith("<"):
            return "unknown"
        # `tests/../candidate.py` (a `pythonpath = ..` setting) is not under tests/
        filename = normpath(filename)
        if filename.startswith(runner_dirs):
            return "runner"
        if filename.startswith(stdlib_dirs) and "-packages" + os.sep not in filename:
            return "stdlib"
        if trusted_tests and filename.startswith(trusted_tests):
            return "tests"
        return "candidate"

    def origin() -> str:
        """Who asked: the nearest frame (above this hook) that is neither stdlib nor synthetic."""
        frame: Any = getframe(2)
        while frame is not None:
            found = kind(frame.f_code.co_filename)
            if found not in ("stdlib", "unknown"):
                return found
            frame = frame.f_back
        return "unknown"

    def registered_by_candidate() -> bool:
        """Whether the nearest frame outside pytest, pluggy and the standard library that
        asked for a plugin registration is candidate code (not a plugin's or a test's)."""
        frame: Any = getframe(1)
        while frame is not None:
            filename = normpath(frame.f_code.co_filename)
            found = kind(filename)
            if found not in ("stdlib", "unknown", "runner"):
                return found == "candidate" and filename not in plugin_files and not (
                    filename.startswith(tuple(plugin_dirs)))
            frame = frame.f_back
        return False

    def is_runner_object(obj: Any) -> bool:
        module = obj.__name__ if is_instance(obj, type_of(sys)) else getattr(
            obj, "__module__", None)
        # `pytest_mock` and other plugins are not the runner: the package name must match
        return isinstance(module, str) and (
            module.split(".", 1)[0] in ("_pytest", "pytest", "pluggy") or module == module_name)

    def on_setattr(args: tuple[Any, ...]) -> str:
        return f"patched {args[1]} of {args[0]!r}"[:200] if is_runner_object(args[0]) else ""

    def on_getattr(args: tuple[Any, ...]) -> str:
        obj, name = args[0], args[1]
        runner = is_instance(obj, frame_type) and kind(obj.f_code.co_filename) == "runner"
        return "read the code of a test runner frame" if runner and name == "f_code" else ""

    def on_getframe(args: tuple[Any, ...]) -> str:
        frame = args[0]
        if is_instance(frame, frame_type) and kind(frame.f_code.co_filename) == "runner":
            return "asked for a test runner frame (sys._getframe)"
        return ""

    events = {
        "object.__setattr__": on_setattr,
        "object.__delattr__": on_setattr,
        "object.__getattr__": on_getattr,
        "sys._getframe": on_getframe,
        "gc.get_objects": lambda args: "scanned the heap (gc.get_objects)",
        "gc.get_referrers": lambda args: "scanned the heap (gc.get_referrers)",
        "gc.get_referents": lambda args: "scanned the heap (gc.get_referents)",
        "sys.settrace": lambda args: "installed a trace function",
        "sys.setprofile": lambda args: "installed a profile function",
    }

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if busy[0] or event not in events:
            return
        busy[0] = True
        try:
            what = events[event](args)
            if what and origin() == "candidate":
                tripwire(what)
        except Exception:
            pass  # a tripwire must never break an honest run
        finally:
            busy[0] = False

    def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
        if plugin is this_module:
            # pytest holds the module now; nothing else should find it by name
            sys.modules.pop(module_name, None)
            managers.append(manager)
        by_candidate = registered_by_candidate()
        ours = [i for i in report_impls(manager) if i.plugin is plugin]
        if ours and by_candidate:
            tripwire("library code registered a pytest plugin with report hooks")
        for impl in ours:
            known_impls[ident(impl)] = (impl, impl.function)
        filename = getattr(plugin, "__file__", None)
        if isinstance(filename, str) and not by_candidate:
            plugin_files.add(normpath(filename))
            name = getattr(plugin, "__name__", "")
            depth = name.count(".") + (os.path.basename(filename) == "__init__.py")
            if depth:  # a package's plugin: its whole package (never a bare site-packages)
                top = normpath(filename)
                for _ in range(depth):
                    top = os.path.dirname(top)
                plugin_dirs.append(top + os.sep)

    def pytest_collectreport(report: pytest.CollectReport) -> None:
        if report.failed:
            send({"collect_error": report.nodeid, "message": _last_error_line(report)})

    def pytest_collection_finish(session: pytest.Session) -> None:
        check_snapshot()
        send({"collected": [item.nodeid for item in session.items]})

    def pytest_runtest_logreport(report: pytest.TestReport) -> None:
        check_snapshot()
        send({"id": report.nodeid, "when": report.when, "outcome": report.outcome,
              "xfail": hasattr(report, "wasxfail"),
              "seconds": round(float(getattr(report, "duration", 0.0) or 0.0), 3)})

    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        check_snapshot()
        send({"event": "finish", "exitstatus": int(exitstatus)})

    hooks = {
        "pytest_plugin_registered": pytest_plugin_registered,
        "pytest_collectreport": pytest_collectreport,
        "pytest_collection_finish": pytest_collection_finish,
        "pytest_runtest_logreport": pytest_runtest_logreport,
        "pytest_sessionfinish": pytest_sessionfinish,
    }
    test_seconds = float(os.environ.pop("COGOLF_TEST_SECONDS", "") or 0)
    if test_seconds > 0:
        hooks.update(_time_limit(test_seconds, send))
    sys.addaudithook(audit)
    send({"event": "start", "pid": os.getpid()})
    return hooks


def _time_limit(seconds: float, send: Any) -> dict[str, Any]:
    """Hooks that raise TestTimeLimit in a test over `seconds` (setup, call and
    teardown together), only while one of its phases runs, never in pytest's own
    reporting between them; again each second while the phase swallows it, never in
    a later phase of the same test (its failure is already reported)."""
    main = threading.get_ident()
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async.argtypes = (ctypes.c_ulong, ctypes.py_object)
    lock, wake = threading.Lock(), threading.Event()
    # phase: a number for each phase entered (0: none running); fired: the phase hit
    state: dict[str, Any] = {"id": None, "deadline": 0.0, "phase": 0, "count": 0, "fired": 0}
    monotonic = time.monotonic

    def watch() -> None:
        while True:
            with lock:
                due = state["deadline"] - monotonic() if state["id"] is not None else None
                if due is not None and due <= 0:
                    running = state["phase"]
                    if running and state["fired"] in (0, running):
                        if not state["fired"]:
                            send({"event": "time_limit", "id": state["id"]})
                        state["fired"] = running
                        set_async(main, TestTimeLimit)
                    # the phase swallowing it gets it again in a second; between phases,
                    # the next one is awaited (entering it wakes this thread)
                    due = 1.0 if running else None
            wake.wait(due)
            wake.clear()

    def clear_pending() -> None:
        if state["fired"]:
            set_async(main, ctypes.py_object())  # NULL: drop an exception not raised yet

    def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
        with lock:
            state.update(id=nodeid, deadline=monotonic() + seconds, fired=0)
        wake.set()

    def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
        with lock:
            clear_pending()
            state.update(id=None, phase=0, fired=0)

    def phase(item: Any) -> Any:
        with lock:
            state["count"] += 1
            state["phase"] = state["count"]
        wake.set()
        try:
            yield
        finally:
            with lock:
                state["phase"] = 0
                clear_pending()

    pytest.hookimpl(hookwrapper=True, tryfirst=True)(phase)
    threading.Thread(target=watch, name="cogolf-test-time-limit", daemon=True).start()
    # one wrapper for the three phases: pluggy names a hook by the attribute it is under
    return {"pytest_runtest_logstart": pytest_runtest_logstart,
            "pytest_runtest_logfinish": pytest_runtest_logfinish,
            "pytest_runtest_setup": phase, "pytest_runtest_call": phase,
            "pytest_runtest_teardown": phase}


globals().update(_install())
del _install
