"""The Commit-0 task directory, as `prepare` writes it and `score` reads it.

    TASK_DIR/task.json      {"game": "commit0", "schema": 1, "name", "source",
                             "package_paths": [...], "tests_paths": ["tests", ...],
                             "time_limit_seconds", "test_time_limit_seconds",
                             "reference_ids": [...],
                             "stubbed": {module: [qualname, ...]},
                             "kept": {module: [qualname, ...]},
                             "plugins": [pytest plugin modules from the wheelhouse],
                             "official_ids": [benchmark node ids, if given],
                             "test_files": [collected test files],
                             "twins": {test key: [site indices]}, "prepare": {...}}
    TASK_DIR/skeleton/      the stubbed library tree: what an entrant receives
    TASK_DIR/hidden_tests/  the library's tests at their own paths, kept from entrants
    TASK_DIR/wheelhouse/    the library's dependencies as wheels, resolved by `prepare`
                            (scoring installs from here only, never from an index)

`twins` is the record of which checks of which tests may be twinned (test key:
`tests/test_x.py::Class::test_y`, site: the check's index in the test, see
`cogolf.evaluation.pytest_twins`), measured by `prepare` on the original. A task
without it (prepared before twins) gets the default: every check that is a
statement of a reference test's own body.

`time_limit_seconds` bounds one run of the suite, `test_time_limit_seconds` one
test in it (setup, call and teardown; a task without it gets the default).
`tests_path` (one string) is still read. `prepare` holds what preparing found
(counts of the reference run, flaky ids, collection errors, dependencies).
`kept` lists functions left whole because the library calls them while being
imported (a skeleton that cannot be imported would fail every test).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = 1
DEFAULT_TIME_LIMIT_SECONDS = 600.0
DEFAULT_TEST_TIME_LIMIT_SECONDS = 60.0
MAX_TIME_LIMIT_SECONDS = 7200.0
MAX_TWIN_TESTS = 200_000
MAX_TWIN_SITES = 1000  # checks of one test


class TaskError(ValueError):
    """The task directory is incomplete or its task.json is malformed."""


@dataclass
class Commit0Task:
    root: Path
    name: str
    source: str
    package_paths: tuple[str, ...]
    tests_paths: tuple[str, ...]
    reference_ids: tuple[str, ...]
    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS
    test_time_limit_seconds: float = DEFAULT_TEST_TIME_LIMIT_SECONDS
    stubbed: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)
    plugins: tuple[str, ...] = ()
    official_ids: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    twins: dict[str, list[int]] | None = None  # None: not measured (the default applies)
    prepare: dict[str, Any] = field(default_factory=dict)

    @property
    def skeleton(self) -> Path:
        return self.root / "skeleton"

    @property
    def hidden_tests(self) -> Path:
        return self.root / "hidden_tests"

    @property
    def wheelhouse(self) -> Path:
        return self.root / "wheelhouse"

    def to_json(self) -> dict[str, Any]:
        return {
            "game": "commit0", "schema": SCHEMA, "name": self.name, "source": self.source,
            "package_paths": list(self.package_paths), "tests_paths": list(self.tests_paths),
            "time_limit_seconds": self.time_limit_seconds,
            "test_time_limit_seconds": self.test_time_limit_seconds,
            "reference_ids": list(self.reference_ids), "stubbed": self.stubbed,
            "kept": self.kept, "plugins": list(self.plugins),
            "official_ids": list(self.official_ids), "test_files": list(self.test_files),
            **({"twins": self.twins} if self.twins is not None else {}),
            "prepare": self.prepare,
        }

    def save(self) -> None:
        (self.root / "task.json").write_text(json.dumps(self.to_json(), indent=2) + "\n",
                                             encoding="utf-8")


def load_task(root: Path) -> Commit0Task:
    path = root / "task.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskError(f"{path}: no task file (build one with `cogolf commit0 prepare`)") from exc
    except (OSError, ValueError) as exc:
        raise TaskError(f"{path}: cannot read as JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("game") != "commit0":
        raise TaskError(f"{path}: not a Commit-0 task (game must be 'commit0')")
    if data.get("schema") != SCHEMA:
        raise TaskError(f"{path}: schema {data.get('schema')!r} is not {SCHEMA}")
    for key in ("name", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise TaskError(f"{path}: {key} must be a non-empty string")
    if "tests_paths" not in data and isinstance(data.get("tests_path"), str):
        data["tests_paths"] = [data["tests_path"]]
    for key in ("package_paths", "reference_ids", "tests_paths", "plugins", "official_ids",
                "test_files"):
        value = data.setdefault(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise TaskError(f"{path}: {key} must be a list of non-empty strings")
    for key in ("package_paths", "reference_ids", "tests_paths"):
        if not data[key]:
            raise TaskError(f"{path}: {key} is empty")
    for plugin in data["plugins"]:
        if not re.fullmatch(r"[A-Za-z_][\w.]*", plugin):
            raise TaskError(f"{path}: plugin {plugin[:60]!r} is not a module name")
    for rel in [*data["package_paths"], *data["tests_paths"]]:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise TaskError(f"{path}: path {rel!r} must be relative, without '..'")
    limit = _seconds(data, "time_limit_seconds", DEFAULT_TIME_LIMIT_SECONDS, path)
    test_limit = _seconds(data, "test_time_limit_seconds", DEFAULT_TEST_TIME_LIMIT_SECONDS, path)
    twins = _twins(data.get("twins"), path)
    task = Commit0Task(
        root=root, name=data["name"], source=data["source"],
        package_paths=tuple(data["package_paths"]), tests_paths=tuple(data["tests_paths"]),
        reference_ids=tuple(data["reference_ids"]), time_limit_seconds=limit,
        test_time_limit_seconds=test_limit,
        stubbed=data.get("stubbed") or {}, kept=data.get("kept") or {},
        plugins=tuple(data["plugins"]), official_ids=tuple(data["official_ids"]),
        test_files=tuple(data["test_files"]), twins=twins,
        prepare=data["prepare"] if isinstance(data.get("prepare"), dict) else {},
    )
    for needed in (task.skeleton, task.hidden_tests):
        if not needed.is_dir():
            raise TaskError(f"{root}: missing {needed.name}/")
    return task


def _seconds(data: dict[str, Any], key: str, default: float, path: Path) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 < value <= MAX_TIME_LIMIT_SECONDS):
        raise TaskError(f"{path}: {key} must be a number in (0, {MAX_TIME_LIMIT_SECONDS:g}]")
    return float(value)


def _twins(value: Any, path: Path) -> dict[str, list[int]] | None:
    if value is None:
        return None
    where = f"{path}: twins"
    if not isinstance(value, dict) or len(value) > MAX_TWIN_TESTS:
        raise TaskError(f"{where} must be an object of at most {MAX_TWIN_TESTS} tests")
    for key, indices in value.items():
        module, sep, name = key.partition("::")
        if not sep or not name or not module.endswith(".py") or ".." in Path(module).parts \
                or Path(module).is_absolute():
            raise TaskError(f"{where}: {key[:120]!r} is not a test key (`tests/test_x.py::test`)")
        if not isinstance(indices, list) or len(indices) > MAX_TWIN_SITES or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < MAX_TWIN_SITES
                for i in indices):
            raise TaskError(f"{where}: {key[:120]!r} must list check indices in "
                            f"0..{MAX_TWIN_SITES - 1}")
    return {k: list(v) for k, v in value.items()}
