"""A pytest plugin that sends each test's result out of the process as it happens.

Loaded with `-p` under a per-run module name, so it is imported before any
conftest, test module or library code. At import it takes the channel (a pipe
inherited from the scorer, its number in COGOLF_RESULTS_FD, moved to a fresh
descriptor) and a per-run token (read from stdin), installs an audit hook, and
keeps references to the functions it needs. From then on it writes one JSON line
per test phase; the scorer, outside the walls, builds the outcomes from those
lines and never from a file the process under test could rewrite.

Tripwires (a record `{"tripwire": ...}` that makes the run `tampered`):
- code outside the runner, the standard library and the trusted tests that
  patches pytest's or pluggy's functions and classes (also found by comparing
  their identity with a snapshot at every report), reads the code of a runner
  frame, asks for a runner frame with `sys._getframe`, scans the heap with `gc`,
  or installs a trace or profile function.

This is a tripwire, not a wall: code in the same process can evade it. The
scorer's canaries and the out-of-process channel are the other layers.

Standalone on purpose: the test environment has pytest, not cogolf.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import sysconfig
from typing import Any

import _pytest.python
import _pytest.reports
import _pytest.runner
import pluggy
import pytest

_write = os.write
_dumps = json.dumps
_getframe = sys._getframe
_normpath = os.path.normpath
_isinstance = isinstance
_type = type
_frame_type = _type(_getframe())


def _take_channel() -> tuple[int, str]:
    fd = int(os.environ.pop("COGOLF_RESULTS_FD"))
    token = os.read(0, 512).decode("ascii", "replace").strip()
    # a descriptor number the process does not expect; the inherited one is closed
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100 + int.from_bytes(os.urandom(1)) % 100)
    os.close(fd)
    return private, token


_FD, _TOKEN = _take_channel()
_RUNNER_DIRS = (
    *(
        os.path.dirname(os.path.dirname(os.path.abspath(m.__file__ or ""))) + os.sep
        for m in (pytest, pluggy, _pytest.python)
    ),
    os.path.abspath(__file__),
)
# the interpreter's own library (a venv's lib/pythonX.Y holds site-packages: not that)
_STDLIB_DIRS = tuple(
    {os.path.dirname(os.__file__) + os.sep, os.path.dirname(sysconfig.__file__) + os.sep}
)
_TRUSTED_TESTS = tuple(
    p.rstrip(os.sep) + os.sep
    for p in os.environ.pop("COGOLF_TRUSTED_TESTS", "").split(os.pathsep)
    if p
)

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


def _current(name: str) -> Any:
    module, _, rest = name.partition(".")
    if module == "_pytest":
        sub, _, rest = rest.partition(".")
        owner: Any = sys.modules.get(f"_pytest.{sub}")
    else:
        owner = sys.modules.get(module)
    parts = rest.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    if _isinstance(owner, _type):
        return owner.__dict__.get(parts[-1])
    return getattr(owner, parts[-1], None)


_WATCHED = {n: obj for n in _WATCHED_NAMES if (obj := _current(n)) is not None}
_CODES = {name: getattr(obj, "__code__", None) for name, obj in _WATCHED.items()}
_sent_tripwires: set[str] = set()
_busy = False


def _send(record: dict[str, Any]) -> None:
    record["token"] = _TOKEN
    data = (_dumps(record) + "\n").encode()
    try:
        while data:
            data = data[_write(_FD, data) :]
    except OSError:
        pass  # the scorer is gone or the channel was closed: nothing more to say


def _tripwire(what: str) -> None:
    if what not in _sent_tripwires and len(_sent_tripwires) < 20:
        _sent_tripwires.add(what)
        _send({"tripwire": what[:200]})


def _check_snapshot() -> None:
    for name, obj in _WATCHED.items():
        now = _current(name)
        if now is not obj or getattr(now, "__code__", None) is not _CODES[name]:
            _tripwire(f"{name} was replaced")


def _kind(filename: str) -> str:
    if filename.startswith("<"):
        return "unknown"
    # `tests/../candidate.py` (a `pythonpath = ..` setting) is not under tests/
    filename = _normpath(filename)
    if filename.startswith(_RUNNER_DIRS):
        return "runner"
    if filename.startswith(_STDLIB_DIRS) and "-packages" + os.sep not in filename:
        return "stdlib"
    if _TRUSTED_TESTS and filename.startswith(_TRUSTED_TESTS):
        return "tests"
    return "candidate"


def _origin() -> str:
    """Who asked: the nearest frame (above this hook) that is neither stdlib nor synthetic."""
    frame: Any = _getframe(2)
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind not in ("stdlib", "unknown"):
            return kind
        frame = frame.f_back
    return "unknown"


def _is_runner_object(obj: Any) -> bool:
    module = obj.__name__ if _isinstance(obj, _type(sys)) else getattr(obj, "__module__", None)
    # `pytest_mock` and other plugins are not the runner: the package name must match
    return isinstance(module, str) and (
        module.split(".", 1)[0] in ("_pytest", "pytest", "pluggy") or module == __name__
    )


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _busy
    if _busy:
        return
    if event not in _EVENTS:
        return
    _busy = True
    try:
        what = _EVENTS[event](args)
        if what and _origin() == "candidate":
            _tripwire(what)
    except Exception:
        pass  # a tripwire must never break an honest run
    finally:
        _busy = False


def _on_setattr(args: tuple[Any, ...]) -> str:
    return f"patched {args[1]} of {args[0]!r}"[:200] if _is_runner_object(args[0]) else ""


def _on_getattr(args: tuple[Any, ...]) -> str:
    obj, name = args[0], args[1]
    runner = _isinstance(obj, _frame_type) and _kind(obj.f_code.co_filename) == "runner"
    return "read the code of a test runner frame" if runner and name == "f_code" else ""


def _on_getframe(args: tuple[Any, ...]) -> str:
    frame = args[0]
    if _isinstance(frame, _frame_type) and _kind(frame.f_code.co_filename) == "runner":
        return "asked for a test runner frame (sys._getframe)"
    return ""


_EVENTS = {
    "object.__setattr__": _on_setattr,
    "object.__delattr__": _on_setattr,
    "object.__getattr__": _on_getattr,
    "sys._getframe": _on_getframe,
    "gc.get_objects": lambda args: "scanned the heap (gc.get_objects)",
    "gc.get_referrers": lambda args: "scanned the heap (gc.get_referrers)",
    "gc.get_referents": lambda args: "scanned the heap (gc.get_referents)",
    "sys.settrace": lambda args: "installed a trace function",
    "sys.setprofile": lambda args: "installed a profile function",
}
sys.addaudithook(_audit)
_send({"event": "start", "pid": os.getpid()})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _send({"collect_error": report.nodeid})


def pytest_collection_finish(session: pytest.Session) -> None:
    _check_snapshot()
    _send({"collected": [item.nodeid for item in session.items]})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _check_snapshot()
    _send({"id": report.nodeid, "when": report.when, "outcome": report.outcome,
           "xfail": hasattr(report, "wasxfail")})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _check_snapshot()
    _send({"event": "finish", "exitstatus": int(exitstatus)})
