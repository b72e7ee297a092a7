"""The project task file (`task.json`) and its validation.

    {
      "name": "csv_importer",
      "prompt": "../../../deck/projects/csv_importer/prompt.md",     (optional)
      "template": "../../../deck/projects/csv_importer/template",    (needed to run attempts)
      "evaluator_tests": "evaluator",          hidden tests, copied into each attempt
      "evaluator_dest": "evaluator_tests",     where they go inside the workspace
      "command": ["{python}", "-m", "pytest", "--junitxml", "{report}", "{tests}"],
      "time_limit_seconds": 120,
      "report_format": "junit",                one of cogolf.evaluation.reports.PARSERS
      "twins": {"rule": "phpunit", "count": 28,  (optional) hidden twins per run, made by
                "skip": ["<test id>", ...]},   a rule of cogolf.evaluation.ruletwins (an
                                               evaluator written for it); skip: tests
                                               never twinned (too slow to run twice)
      "walls": {"writable": ["bootstrap/cache"]},  what the run needs beyond the default
                                               walls (readable, writable, max_processes,
                                               unix_listen)
      "checks": [{"id": "bom", "label": "floor", "tests": ["<test id>", ...]}, ...],
      "scale": "failure_weighted",             a preset name or an inline scale
      "toolbox": ["playwright"],               (optional) more installed distributions
                                               for the evaluator's environment
      "walls": {"max_processes": 384,          (optional) widenings a browser-driving
                "readable": ["/proc"],         evaluator needs: tasks, absolute paths
                "unix_listen": true}           to read, unix sockets to listen on
    }

Paths are relative to the task directory (the public half may live in `deck/`).
Command placeholders: {python} this interpreter, {workspace} the attempt's copy,
{tests} the copied evaluator tests, {report} the file the evaluator must write.
A task without template/evaluator/command can only be scored with `ingest`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.evaluation.reports import PARSERS
from cogolf.evaluation.ruletwins import RULES
from cogolf.games.project.scales import Scale, ScaleError, load_scale

LABELS = ("floor", "signal", "optional")
"""`floor` and `signal` checks count towards the scale; `optional` ones are reported only."""

COUNTED_LABELS = ("floor", "signal")
PLACEHOLDERS = ("python", "workspace", "tests", "report")
MAX_TIME_LIMIT_SECONDS = 3600
DEFAULT_TIME_LIMIT_SECONDS = 300
MAX_TASKS = 1024
MAX_TWINS = 1000


class TaskError(ValueError):
    """The task file is malformed; the message names the file and field."""


@dataclass(frozen=True)
class Check:
    id: str
    label: str
    tests: tuple[str, ...]


@dataclass(frozen=True)
class TaskWalls:
    """What a task's evaluator needs beyond the default walls (say why in the task)."""

    max_processes: int | None = None
    readable: tuple[Path, ...] = ()
    unix_listen: bool = False
    writable: tuple[str, ...] = ()  # workspace folders (framework caches); the rest read-only


@dataclass(frozen=True)
class TwinSpec:
    """Hidden twins per run for an evaluator written for a rule (see `ruletwins`)."""

    rule: str
    count: int
    skip: tuple[str, ...] = ()  # test ids never twinned


@dataclass(frozen=True)
class ProjectTask:
    root: Path
    name: str
    report_format: str
    checks: tuple[Check, ...]
    scale: Scale
    prompt: Path | None = None
    template: Path | None = None
    evaluator_tests: Path | None = None
    evaluator_dest: str = "evaluator_tests"
    command: tuple[str, ...] = ()
    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS
    toolbox: tuple[str, ...] = ()
    walls: TaskWalls = TaskWalls()
    twins: TwinSpec | None = None

    @property
    def runnable(self) -> bool:
        return self.template is not None and self.evaluator_tests is not None and bool(self.command)

    @property
    def counted_checks(self) -> int:
        return sum(1 for c in self.checks if c.label in COUNTED_LABELS)


def load_task(task_dir: Path) -> ProjectTask:
    path = task_dir / "task.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskError(f"{path}: no task file") from exc
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: cannot read as JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a JSON object")
    return parse_task(data, task_dir, where=str(path))


def parse_task(data: dict[str, Any], root: Path, *, where: str = "task.json") -> ProjectTask:
    known = {
        "name", "prompt", "template", "evaluator_tests", "evaluator_dest", "command",
        "time_limit_seconds", "report_format", "checks", "scale", "description",
        "toolbox", "walls", "twins",
    }
    unknown = set(data) - known
    if unknown:
        raise TaskError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    name = _string(data, "name", where)
    fmt = _string(data, "report_format", where)
    if fmt not in PARSERS:
        raise TaskError(f"{where}: report_format {fmt!r} is not one of {', '.join(PARSERS)}")
    try:
        scale = load_scale(data.get("scale", "failure_weighted"), where=f"{where}: scale")
    except ScaleError as exc:
        raise TaskError(str(exc)) from exc
    checks = _checks(data.get("checks"), where)
    command = data.get("command", [])
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise TaskError(f"{where}: command must be a list of strings")
    for arg in command:
        try:
            arg.format(**{p: "" for p in PLACEHOLDERS})
        except (KeyError, IndexError, ValueError) as exc:
            raise TaskError(
                f"{where}: command argument {arg!r} has an unknown placeholder "
                f"(known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
            ) from exc
    limit = data.get("time_limit_seconds", DEFAULT_TIME_LIMIT_SECONDS)
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise TaskError(f"{where}: time_limit_seconds must be a number")
    if not 0 < limit <= MAX_TIME_LIMIT_SECONDS:
        raise TaskError(f"{where}: time_limit_seconds must be in (0, {MAX_TIME_LIMIT_SECONDS}]")
    dest = data.get("evaluator_dest", "evaluator_tests")
    if not isinstance(dest, str) or not _is_plain_relative(dest):
        raise TaskError(f"{where}: evaluator_dest must be a relative path without '..'")
    return ProjectTask(
        root=root,
        name=name,
        report_format=fmt,
        checks=checks,
        scale=scale,
        prompt=_path(data, "prompt", root, where, want_dir=False),
        template=_path(data, "template", root, where, want_dir=True),
        evaluator_tests=_path(data, "evaluator_tests", root, where, want_dir=True),
        evaluator_dest=dest,
        command=tuple(command),
        time_limit_seconds=float(limit),
        toolbox=_toolbox(data.get("toolbox", []), where),
        walls=_walls(data.get("walls", {}), where),
        twins=_twins(data.get("twins"), checks, where),
    )


def _twins(raw: Any, checks: tuple[Check, ...], where: str) -> TwinSpec | None:
    if raw is None:
        return None
    at = f"{where}: twins"
    if not isinstance(raw, dict) or set(raw) - {"rule", "count", "skip"} or "rule" not in raw:
        raise TaskError(f"{at}: expected an object with rule, count and optionally skip")
    rule = raw["rule"]
    if rule not in RULES:
        raise TaskError(f"{at}: rule {rule!r} is not one of {', '.join(RULES)}")
    count = raw.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= MAX_TWINS:
        raise TaskError(f"{at}: count must be an integer in [1, {MAX_TWINS}]")
    skip = raw.get("skip", [])
    scored = {t for c in checks for t in c.tests}
    if not isinstance(skip, list) or not all(isinstance(t, str) for t in skip):
        raise TaskError(f"{at}: skip must be a list of test ids")
    unknown = [t for t in skip if t not in scored]
    if unknown:
        raise TaskError(f"{at}: skip names {unknown[0]!r}, which no check lists")
    return TwinSpec(rule=rule, count=count, skip=tuple(skip))


def _toolbox(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(
        isinstance(n, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", n) for n in raw
    ):
        raise TaskError(f"{where}: toolbox must be a list of distribution names")
    return tuple(raw)


def _walls(raw: Any, where: str) -> TaskWalls:
    at = f"{where}: walls"
    if not isinstance(raw, dict) or set(raw) - {"max_processes", "readable", "unix_listen",
                                                "writable"}:
        raise TaskError(
            f"{at}: expected an object with max_processes, readable, unix_listen, writable"
        )
    tasks = raw.get("max_processes")
    if tasks is not None and (
        isinstance(tasks, bool) or not isinstance(tasks, int) or not 0 < tasks <= MAX_TASKS
    ):
        raise TaskError(f"{at}: max_processes must be an integer in [1, {MAX_TASKS}]")
    readable = raw.get("readable", [])
    if not isinstance(readable, list) or not all(
        isinstance(p, str) and p.startswith("/") and ".." not in Path(p).parts for p in readable
    ):
        raise TaskError(f"{at}: readable must be a list of absolute paths without '..'")
    unix_listen = raw.get("unix_listen", False)
    if not isinstance(unix_listen, bool):
        raise TaskError(f"{at}: unix_listen must be true or false")
    writable = raw.get("writable", [])
    if not isinstance(writable, list) or not all(
        isinstance(w, str) and _is_plain_relative(w) for w in writable
    ):
        raise TaskError(f"{at}: writable must be a list of relative paths without '..'")
    return TaskWalls(max_processes=tasks, readable=tuple(Path(p) for p in readable),
                     unix_listen=unix_listen, writable=tuple(writable))


def _checks(raw: Any, where: str) -> tuple[Check, ...]:
    if not isinstance(raw, list) or not raw:
        raise TaskError(f"{where}: checks must be a non-empty list")
    seen: set[str] = set()
    out: list[Check] = []
    for i, item in enumerate(raw):
        at = f"{where}: checks[{i}]"
        if not isinstance(item, dict) or set(item) - {"id", "label", "tests", "note"}:
            raise TaskError(f"{at}: expected an object with id, label, tests and optionally note")
        check_id = _string(item, "id", at)
        if check_id in seen:
            raise TaskError(f"{at}: duplicate check id {check_id!r}")
        seen.add(check_id)
        label = item.get("label")
        if label not in LABELS:
            raise TaskError(f"{at}: label must be one of {', '.join(LABELS)}, got {label!r}")
        tests = item.get("tests")
        if not isinstance(tests, list) or not tests or not all(
            isinstance(t, str) and t for t in tests
        ):
            raise TaskError(f"{at}: tests must be a non-empty list of test ids")
        out.append(Check(id=check_id, label=label, tests=tuple(tests)))
    if not any(c.label in COUNTED_LABELS for c in out):
        raise TaskError(f"{where}: at least one check must be labelled floor or signal")
    return tuple(out)


def _string(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise TaskError(f"{where}: {key} must be a non-empty string")
    return value


def _path(data: dict[str, Any], key: str, root: Path, where: str, *, want_dir: bool) -> Path | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise TaskError(f"{where}: {key} must be a path string")
    path = (root / value).resolve()
    if want_dir and not path.is_dir():
        raise TaskError(f"{where}: {key} {value!r} is not a directory")
    if not want_dir and not path.is_file():
        raise TaskError(f"{where}: {key} {value!r} is not a file")
    return path


def _is_plain_relative(value: str) -> bool:
    p = Path(value)
    return bool(value) and not p.is_absolute() and ".." not in p.parts
