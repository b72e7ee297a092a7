"""Test results that the process under test cannot rewrite: the scorer's side.

A pytest run gets `results_plugin` under a per-run module name (`-p`), the write
end of a pipe (inherited, its number in the environment) and a per-run token on
stdin. The plugin streams one JSON line per test phase; this side reads them
while the run goes on, outside the walls, and builds the `TestReport` itself:

- a test passes only when its setup, call and teardown all reported passed; a
  test that never reported (early exit, crash, kill) is not passed;
- canaries: per run, a few test functions with plausible names are appended to
  real test modules; each must fail. A canary reported as passed, a tripwire
  from the plugin, or a line that is not the plugin's makes the run `tampered`.

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
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.walled import EvaluatorRun, Walls, run_evaluator

PLUGIN_SOURCE = Path(__file__).with_name("results_plugin.py")
MAX_CHANNEL_BYTES = 32 * 1024 * 1024
CANARIES_PER_RUN = 3
_PHASES = ("setup", "call", "teardown")


@dataclass
class Channel:
    """One run's channel: the plugin module, the pipe and the token."""

    plugin_dir: Path
    module: str
    token: str
    read_fd: int
    write_fd: int
    _chunks: list[bytes] = field(default_factory=list)
    _size: int = 0
    _overflow: bool = False
    _reader: threading.Thread | None = None

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
        while chunk := os.read(self.read_fd, 1 << 16):
            if self._size + len(chunk) > MAX_CHANNEL_BYTES:
                self._overflow = True
                continue  # keep draining so the writer never blocks
            self._chunks.append(chunk)
            self._size += len(chunk)

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
    tampered: list[str]  # reasons; empty when nothing suspicious was seen
    started: bool  # the plugin spoke at all
    finished: bool  # pytest reached the end of its session
    # call phase per node id: passed | failed | skipped | xfailed | xpassed (no call: absent)
    calls: dict[str, str] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)  # node ids that failed to collect
    collected: list[str] = field(default_factory=list)  # node ids of every collected test


def junit_id(nodeid: str) -> str:
    """The id pytest's JUnit XML gives a node: `tests.test_x.Class::test_y[param]`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


def read_records(data: bytes, token: str, canaries: set[str]) -> ChannelResult:
    report = TestReport()
    tampered: list[str] = []
    phases: dict[str, dict[str, str]] = {}
    calls: dict[str, str] = {}
    collect_errors: list[str] = []
    collected: list[str] = []
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
            tampered.append(f"tripwire: {str(record['tripwire'])[:200]}")
        elif record.get("event") == "start":
            started = True
        elif record.get("event") == "finish":
            finished = True
        elif isinstance(record.get("collect_error"), str):
            collect_errors.append(record["collect_error"])
        elif isinstance(record.get("collected"), list):
            collected.extend(str(n) for n in record["collected"] if str(n) not in canaries)
        elif isinstance(record.get("id"), str) and record.get("when") in _PHASES:
            outcome = record.get("outcome")
            if record["when"] == "call":
                xfail = record.get("xfail") is True
                calls[record["id"]] = {("skipped", True): "xfailed", ("passed", True): "xpassed"
                                       }.get((str(outcome), xfail), str(outcome))
            previous = phases.setdefault(record["id"], {}).get(record["when"])
            if previous is None or previous == "passed":
                phases[record["id"]][record["when"]] = str(outcome)
    for nodeid, seen in phases.items():
        outcome = _outcome(seen)
        if nodeid in canaries:
            if outcome is Outcome.PASSED:
                tampered.append("a canary test that must fail was reported as passed")
            continue
        report.record(junit_id(nodeid), outcome)
    report.complete = finished
    for canary in canaries:
        calls.pop(canary, None)
    return ChannelResult(report, list(dict.fromkeys(tampered)), started, finished, calls,
                         collect_errors, collected)


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
    body of a real test of the same place, is named from the module's own words,
    and ends with an assertion that cannot hold.
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


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _test_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """Top-level classes pytest collects as they are (not bases of other classes)."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and not n.decorator_list]
    used_as_base = {_base_name(b) for c in classes for b in c.bases}
    return [
        c
        for c in classes
        if c.name not in used_as_base
        and (c.name.startswith("Test") or any(_base_name(b).endswith("TestCase") for b in c.bases))
        and not any(isinstance(m, ast.FunctionDef) and m.name == "__init__" for m in c.body)
    ]


def _plant_one(module: Path, rng: random.Random) -> str | None:
    text = module.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    words = sorted(
        {
            w
            for n in ast.walk(tree)
            if isinstance(n, ast.Name)
            for w in n.id.lower().split("_")
            if w.isalpha() and 2 < len(w) < 12
        }
    )
    words = words or [module.stem.removeprefix("test_") or "value"]
    name = f"test_{rng.choice(words)}_{rng.choice(words)}_{rng.randrange(2, 99)}"
    left, right = rng.sample(words, 2) if len(words) > 1 else (words[0], words[0] + "s")
    functions = _plain_tests(tree.body, 0)
    classes = _test_classes(tree)
    if classes and (not functions or rng.random() < 0.5):
        cls = rng.choice(classes)
        if any(getattr(m, "name", None) == name for m in cls.body):
            return None
        unittest_style = any(_base_name(b).endswith("TestCase") for b in cls.bases)
        fail = (
            f"self.assertEqual({left!r}, {right!r})"
            if unittest_style
            else (f"assert {left!r} == {right!r}")
        )
        methods = _plain_tests(cls.body, 1)
        indent = " " * (cls.body[0].col_offset if cls.body else cls.col_offset + 4)
        source = _function(name, "self", methods, fail, rng, indent)
        lines = text.splitlines(keepends=True)
        end = cls.end_lineno or len(lines)
        if lines and not lines[end - 1].endswith("\n"):
            lines[end - 1] += "\n"
        planted = "".join([*lines[:end], source, *lines[end:]])
        try:
            ast.parse(planted)
        except SyntaxError:  # never lose a real module to a canary
            return None
        module.write_text(planted, encoding="utf-8")
        return f"{cls.name}::{name}"
    if any(getattr(n, "name", None) == name for n in tree.body):
        return None
    source = _function(name, "", functions, f"assert {left!r} == {right!r}", rng, "")
    with module.open("a", encoding="utf-8") as fh:
        fh.write("\n" + source)
    return name


def _function(
    name: str, args: str, models: list[ast.FunctionDef], fail: str, rng: random.Random, indent: str
) -> str:
    body = [ast.unparse(stmt) for stmt in rng.choice(models).body] if models else []
    lines = [line for stmt in body for line in stmt.splitlines()] + [fail]
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
) -> tuple[EvaluatorRun, ChannelResult]:
    """Run a `-m pytest` command walled with the results channel; `plugin_dir` must be a
    folder the run cannot write."""
    channel = open_channel(plugin_dir)
    try:
        command = with_plugin(argv, channel.module)
        if command is None:
            raise ValueError("not a `python -m pytest` command")
        walls = dataclasses.replace(
            walls,
            readable=(*walls.readable, plugin_dir),
            env=(*walls.env, *channel.environment(trusted_tests).items()),
            pass_fds=(channel.write_fd,),
            stdin=channel.stdin,
        )
        channel.start()
        run = await run_evaluator(command, cwd=cwd, walls=walls, wall_seconds=wall_seconds)
        data = await asyncio.to_thread(channel.finish)
    finally:
        channel.close()
    return run, read_records(data, channel.token, canaries)
