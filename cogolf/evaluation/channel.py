"""Test results that the process under test cannot rewrite: the scorer's side.

A pytest run gets `results_plugin` under a per-run module name (`-p`), the write
end of a pipe (inherited, its number in the environment) and a per-run token on
stdin. The plugin streams one JSON line per test phase; this side reads them
while the run goes on, outside the walls, and builds the `TestReport` itself:

- a test passes only when its setup, call and teardown all reported passed; a
  test that never reported (early exit, crash, kill) is not passed;
- canaries: per run, a few test functions with plausible names are added to
  real test modules; each must fail. A canary reported as passed, or a line that
  is not the plugin's, makes the run `tampered`;
- twins (`cogolf.evaluation.pytest_twins`): a twin reported passed together with
  its original makes the run `tampered` (`cogolf.evaluation.twins`). Canaries and
  twins are taken out of the report, the collected ids and the call outcomes;
- tripwires from the plugin are notes (`suspicions`): honest libraries and test
  tools set them off too (Hypothesis's trace function, a logger reading its
  callers' frames), so only a twin or a canary makes a run `tampered`, and then
  the tripwires that fired are given with the verdict;
- a per-test time limit, when given, is the plugin's to enforce; from outside, a
  run whose channel stays silent longer than a test may take once its tests have
  been collected is killed (the test never returned to Python), and its tests
  without a result count as not passed.

Nothing the process prints reaches a result: notes are the scorer's own words.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import json
import os
import random
import re
import secrets
import select
import shutil
import signal
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cogolf.evaluation.pytest_twins import (
    Site,
    Source,
    base_name,
    bound_names,
    collected_classes,
    function_of,
    module_words,
    mutation,
    sites,
    twin_name,
)
from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.twins import contradictions, tamper_reason, without_twins
from cogolf.evaluation.walled import EvaluatorRun, Walls, run_evaluator

PLUGIN_SOURCE = Path(__file__).with_name("results_plugin.py")
MAX_CHANNEL_BYTES = 32 * 1024 * 1024
CANARIES_PER_RUN = 3
_PHASES = ("setup", "call", "teardown")
STALL_GRACE_SECONDS = 30.0  # beyond the per-test limit, before the run is killed
MAX_MESSAGE_CHARS = 300
_COLLECTED = b'{"collected": '


@dataclass
class Channel:
    """One run's channel: the plugin module, the pipe and the token."""

    plugin_dir: Path
    module: str
    token: str
    read_fd: int
    write_fd: int
    stall_seconds: float | None = None  # kill the run when silent this long after collection
    _chunks: list[bytes] = field(default_factory=list)
    _size: int = 0
    _overflow: bool = False
    _reader: threading.Thread | None = None
    _pidfd: int = -1
    stalled: bool = False  # killed for a test that never returned

    @property
    def pytest_args(self) -> list[str]:
        return ["-p", self.module]

    def environment(self, trusted_tests: list[Path]) -> dict[str, str]:
        return {
            "PYTHONPATH": str(self.plugin_dir),
            "COGOLF_RESULTS_FD": str(self.write_fd),
            "COGOLF_TRUSTED_TESTS": os.pathsep.join(str(p) for p in trusted_tests),
            # entry-point plugins could load before ours; only `-p` plugins run
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }

    @property
    def stdin(self) -> bytes:
        return self.token.encode() + b"\n"

    def start(self) -> None:
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        pending, armed, first, last = b"", False, True, time.monotonic()
        while True:
            if self.stall_seconds is not None and armed:
                ready, _, _ = select.select([self.read_fd], [], [], 1.0)
                if not ready:
                    if time.monotonic() - last > self.stall_seconds:
                        self._kill()
                    continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                break
            last = time.monotonic()
            if self.stall_seconds is not None and not armed:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                if first and lines:
                    self._take_process(lines[0])
                    first = False
                armed = any(line.startswith(_COLLECTED) for line in lines)
                pending = pending[:4096]  # only the start of a line matters
            if self._size + len(chunk) > MAX_CHANNEL_BYTES:
                self._overflow = True
                continue  # keep draining so the writer never blocks
            self._chunks.append(chunk)
            self._size += len(chunk)

    def _take_process(self, line: bytes) -> None:
        """The pytest process, from the plugin's first line (its start record, written
        at import, before any other code of the run)."""
        with contextlib.suppress(ValueError, OSError, TypeError, AttributeError, KeyError):
            record = json.loads(line)
            if record.get("token") == self.token and record.get("event") == "start":
                self._pidfd = os.pidfd_open(int(record["pid"]))

    def _kill(self) -> None:
        if self._pidfd >= 0 and not self.stalled:
            self.stalled = True
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def finish(self) -> bytes:
        """Close our write end, wait for EOF (the run and its children are gone)."""
        self._close_write()
        if self._reader is not None:
            self._reader.join(timeout=10)
        return b"".join(self._chunks)

    def _close_write(self) -> None:
        if self.write_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = -1

    def close(self) -> None:
        self._close_write()
        if self._reader is not None and self._reader.is_alive():
            return  # still reading (should not happen): let the thread own the descriptor
        if self.read_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.read_fd)
            self.read_fd = -1
        if self._pidfd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = -1


def open_channel(plugin_dir: Path) -> Channel:
    """Place the plugin under a fresh module name in `plugin_dir` and open the pipe."""
    plugin_dir.mkdir(parents=True, exist_ok=True)
    module = f"_cogolf_results_{secrets.token_hex(6)}"
    shutil.copyfile(PLUGIN_SOURCE, plugin_dir / f"{module}.py")
    os.chmod(plugin_dir / f"{module}.py", 0o644)
    read_fd, write_fd = os.pipe()
    os.set_inheritable(write_fd, True)
    return Channel(plugin_dir, module, secrets.token_hex(16), read_fd, write_fd)


@dataclass
class ChannelResult:
    report: TestReport
    tampered: list[str]  # reasons; empty when no twin, canary or foreign line says forged
    started: bool  # the plugin spoke at all
    finished: bool  # pytest reached the end of its session
    # call phase per node id: passed | failed | skipped | xfailed | xpassed (no call: absent)
    calls: dict[str, str] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)  # node ids that failed to collect
    collected: list[str] = field(default_factory=list)  # node ids of every collected test
    # twins: report id of each twin item -> its original's, and the twins' outcomes
    twin_originals: dict[str, str] = field(default_factory=dict)
    twin_outcomes: dict[str, Outcome] = field(default_factory=dict)
    suspicions: list[str] = field(default_factory=list)  # tripwires nothing confirmed
    # the exception line of each collection error, as the process gave it: for the
    # operator of a trusted run (prepare) only, never for a candidate's result
    collect_messages: dict[str, str] = field(default_factory=dict)
    exitstatus: int | None = None  # pytest's own, from its session's end
    time_limited: list[str] = field(default_factory=list)  # tests stopped at the limit
    seconds: dict[str, float] = field(default_factory=dict)  # node id -> all phases


def junit_id(nodeid: str) -> str:
    """The id pytest's JUnit XML gives a node: `tests.test_x.Class::test_y[param]`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


def read_records(data: bytes, token: str, canaries: set[str],
                 twins: Mapping[str, str] | None = None,
                 originals: Collection[str] | None = None) -> ChannelResult:
    """The run's report from the plugin's lines. `twins` maps a twin's node id without
    parameters to its original's; only twin items whose original's report id is in
    `originals` (all when None) count towards the verdict."""
    twins = twins or {}
    report = TestReport()
    tampered: list[str] = []
    tripwires: list[str] = []
    phases: dict[str, dict[str, str]] = {}
    calls: dict[str, str] = {}
    collect_errors: list[str] = []
    messages: dict[str, str] = {}
    collected: list[str] = []
    time_limited: list[str] = []
    seconds: dict[str, float] = {}
    exitstatus: int | None = None
    started = finished = False
    lines = data.split(b"\n")
    if lines and lines[-1]:
        report.note("the run ended in the middle of a result line")
    for raw in lines[:-1]:
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("token") != token:
            tampered.append("a line on the results channel was not written by the scorer's plugin")
            break
        if "tripwire" in record:
            tripwires.append(f"tripwire: {str(record['tripwire'])[:200]}")
        elif record.get("event") == "start":
            started = True
        elif record.get("event") == "finish":
            finished = True
            status = record.get("exitstatus")
            exitstatus = status if isinstance(status, int) else None
        elif record.get("event") == "time_limit" and isinstance(record.get("id"), str):
            time_limited.append(record["id"])
        elif isinstance(record.get("collect_error"), str):
            collect_errors.append(record["collect_error"])
            messages[record["collect_error"]] = str(record.get("message", ""))[
                :MAX_MESSAGE_CHARS]
        elif isinstance(record.get("collected"), list):
            collected.extend(str(n) for n in record["collected"]
                             if str(n) not in canaries and function_of(str(n)) not in twins)
        elif isinstance(record.get("id"), str) and record.get("when") in _PHASES:
            outcome = record.get("outcome")
            if record["when"] == "call":
                xfail = record.get("xfail") is True
                calls[record["id"]] = {("skipped", True): "xfailed", ("passed", True): "xpassed"
                                       }.get((str(outcome), xfail), str(outcome))
            previous = phases.setdefault(record["id"], {}).get(record["when"])
            if previous is None or previous == "passed":
                phases[record["id"]][record["when"]] = str(outcome)
            took = record.get("seconds")
            if isinstance(took, int | float) and not isinstance(took, bool) and took >= 0:
                seconds[record["id"]] = seconds.get(record["id"], 0.0) + float(took)
    originals_of: dict[str, str] = {}
    for nodeid, seen in phases.items():
        outcome = _outcome(seen)
        if nodeid in canaries:
            if outcome is Outcome.PASSED:
                tampered.append("a canary test that must fail was reported as passed")
            continue
        base = function_of(nodeid)
        if base in twins:
            originals_of[junit_id(nodeid)] = junit_id(twins[base] + nodeid[len(base):])
        report.record(junit_id(nodeid), outcome)
    counted = {t: o for t, o in originals_of.items() if originals is None or o in originals}
    forged = contradictions(report, counted)
    if forged:
        tampered.append(tamper_reason(forged, len(counted)))
    twin_outcomes = {t: report.tests[t] for t in originals_of}
    report = without_twins(report, originals_of)
    report.complete = finished
    hidden = {*canaries, *(n for n in phases if function_of(n) in twins)}
    for nodeid in hidden:
        calls.pop(nodeid, None)
        seconds.pop(nodeid, None)
    tripwires = list(dict.fromkeys(tripwires))
    if tampered:  # confirmed: the tripwires are part of the verdict's reasons
        tampered += tripwires
        tripwires = []
    suspicions = [f"{t} (not confirmed by the twins or canaries: not held against the run)"
                  for t in tripwires]
    return ChannelResult(report, list(dict.fromkeys(tampered)), started, finished, calls,
                         collect_errors, collected, originals_of, twin_outcomes,
                         suspicions, messages, exitstatus,
                         [t for t in time_limited if t not in hidden], seconds)


def _outcome(seen: dict[str, str]) -> Outcome:
    setup, call, teardown = (seen.get(p) for p in _PHASES)
    if setup == "failed" or teardown == "failed":
        return Outcome.ERROR
    if setup == "skipped" or call == "skipped":
        return Outcome.SKIPPED
    if call == "failed":
        return Outcome.FAILED
    if setup == call == teardown == "passed":
        return Outcome.PASSED
    return Outcome.NO_RESULT


def plant_canaries(
    tests_dir: Path, rootdir: Path, count: int = CANARIES_PER_RUN, rng: random.Random | None = None
) -> set[str]:
    """Add `count` failing tests to real test modules; returns their node ids.

    A canary lives beside real tests: a module-level function, or a method of a
    test class (a `unittest.TestCase` one uses `self.assertEqual`). It copies the
    body of a real test of the same place, is named from that test's and the
    module's words, and checks a name bound to an expected value taken from one of
    the module's real assertions against a near value of the same type, so it
    fails for every implementation without comparing two constants.
    """
    rng = rng or random.SystemRandom()
    if tests_dir.is_file():  # a single test module (a root `test.py`)
        modules = [] if tests_dir.is_symlink() else [tests_dir]
    else:
        modules = sorted(
            p for p in tests_dir.rglob("test*.py") if p.is_file() and not p.is_symlink()
        )
    planted: set[str] = set()
    for _ in range(count if modules else 0):
        module = rng.choice(modules)
        nodeid = _plant_one(module, rng)
        if nodeid is not None:
            planted.add(f"{module.relative_to(rootdir).as_posix()}::{nodeid}")
    return planted


def _plain_tests(body: list[ast.stmt], args: int) -> list[ast.FunctionDef]:
    """Test functions taking `args` arguments, undecorated, that cannot return early."""
    return [
        n
        for n in body
        if isinstance(n, ast.FunctionDef)
        and n.name.startswith("test")
        and len(n.args.args) == args
        and not n.decorator_list
        and not any(isinstance(x, ast.Return | ast.Yield) for x in ast.walk(n))
    ]


_BOUND_NAMES = ("expected", "want", "wanted", "result", "value", "answer", "out", "got")


def _expected_pair(tree: ast.Module, words: list[str], rng: random.Random) -> tuple[str, str]:
    """An expected value of one of the module's real checks and a near value of the
    same type (source texts); a module word and a near spelling when it has none."""
    literals = [s.node for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                for s in sites(n) if s.kind == "literal"]
    for node in rng.sample(literals, len(literals)):
        text = ast.unparse(node)
        src = Source(text)
        expr = ast.parse(text, mode="eval").body
        edit = mutation(src, Site("literal", expr, True), rng)
        if edit is not None:
            start, end, new = edit
            return text, src.text(0, start) + new + src.text(end, len(src.data))
    word = rng.choice(words)
    src = Source(repr(word))
    edit = mutation(src, Site("literal", ast.parse(repr(word), mode="eval").body, True), rng)
    return repr(word), (edit[2] if edit is not None else repr(word + "s"))


def _plant_one(module: Path, rng: random.Random) -> str | None:
    text = module.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    words = module_words(text) or [module.stem.removeprefix("test_") or "value"]
    expected, near = _expected_pair(tree, words, rng)
    functions = _plain_tests(tree.body, 0)
    classes = collected_classes(tree)
    if classes and (not functions or rng.random() < 0.5):
        cls = rng.choice(classes)
        unittest_style = any(base_name(b).endswith("TestCase") for b in cls.bases)
        methods = _plain_tests(cls.body, 1)
        model = rng.choice(methods) if methods else None
        name = _canary_name(model, cls.body, words, rng)
        check = "self.assertEqual({0}, {1})" if unittest_style else "assert {0} == {1}"
        indent = " " * (cls.body[0].col_offset if cls.body else cls.col_offset + 4)
        source = _function(name, "self", model, expected, near, check, indent, rng)
        anchors = [m for m in cls.body if isinstance(m, ast.FunctionDef)] or [cls]
        at = rng.choice(anchors).end_lineno or len(text.splitlines())
        nodeid = f"{cls.name}::{name}"
    else:
        model = rng.choice(functions) if functions else None
        name = _canary_name(model, tree.body, words, rng)
        source = "\n" + _function(name, "", model, expected, near, "assert {0} == {1}", "", rng)
        anchors = [n for n in tree.body if isinstance(n, ast.FunctionDef)] or tree.body[-1:]
        at = rng.choice(anchors).end_lineno if anchors else 0
        at = at or 0
        nodeid = name
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    planted = "".join([*lines[:at], source, *lines[at:]])
    try:
        ast.parse(planted)
    except SyntaxError:  # never lose a real module to a canary
        return None
    module.write_text(planted, encoding="utf-8")
    return nodeid


def _canary_name(model: ast.FunctionDef | None, block: list[ast.stmt], words: list[str],
                 rng: random.Random) -> str:
    return twin_name(model.name if model is not None else "test", words, bound_names(block),
                     rng)


def _function(name: str, args: str, model: ast.FunctionDef | None, expected: str, near: str,
              check: str, indent: str, rng: random.Random) -> str:
    body = [ast.unparse(stmt) for stmt in model.body] if model is not None else []
    used = {n.id for stmt in (model.body if model else []) for n in ast.walk(stmt)
            if isinstance(n, ast.Name)}
    bound = rng.choice([n for n in _BOUND_NAMES if n not in used] or ["expected_value"])
    lines = [f"{bound} = {expected}",
             *(line for stmt in body for line in stmt.splitlines()),
             check.format(bound, near)]
    inner = indent + "    "
    return f"\n{indent}def {name}({args}):\n" + "".join(f"{inner}{line}\n" for line in lines)


def runs_pytest(argv: Sequence[str]) -> bool:
    """True for a `... -m pytest ...` command: those get the results channel."""
    return with_plugin(list(argv), "_") is not None


def with_plugin(argv: list[str], module: str) -> list[str] | None:
    """`argv` with `-p module` right after `-m pytest`; None when it is no pytest run."""
    for i in range(len(argv) - 1):
        if argv[i] == "-m" and argv[i + 1] == "pytest":
            return [*argv[: i + 2], "-p", module, *argv[i + 2 :]]
    return None


async def run_pytest(
    argv: list[str],
    *,
    cwd: Path,
    walls: Walls,
    wall_seconds: float,
    plugin_dir: Path,
    trusted_tests: list[Path],
    canaries: set[str],
    twins: Mapping[str, str] | None = None,
    originals: Collection[str] | None = None,
    test_seconds: float | None = None,
) -> tuple[EvaluatorRun, ChannelResult]:
    """Run a `-m pytest` command walled with the results channel; `plugin_dir` must be a
    folder the run cannot write. `twins` and `originals` as in `read_records`;
    `test_seconds`: the per-test time limit (none when None)."""
    channel = open_channel(plugin_dir)
    try:
        command = with_plugin(argv, channel.module)
        if command is None:
            raise ValueError("not a `python -m pytest` command")
        limit = ()
        if test_seconds is not None:
            channel.stall_seconds = test_seconds + STALL_GRACE_SECONDS
            limit = (("COGOLF_TEST_SECONDS", f"{test_seconds:g}"),)
        walls = dataclasses.replace(
            walls,
            readable=(*walls.readable, plugin_dir),
            env=(*walls.env, *channel.environment(trusted_tests).items(), *limit),
            pass_fds=(channel.write_fd,),
            stdin=channel.stdin,
        )
        channel.start()
        run = await run_evaluator(command, cwd=cwd, walls=walls, wall_seconds=wall_seconds)
        data = await asyncio.to_thread(channel.finish)
    finally:
        channel.close()
    result = read_records(data, channel.token, canaries, twins, originals)
    if channel.stalled:
        result.report.note(f"a test ran {channel.stall_seconds:g}s without a result (over "
                           "the per-test time limit, never back in Python): the run was "
                           "stopped there")
    return run, result
