"""The solo-game sections of a night file: `[golf]`, `[commit0]`, `[project]`.

A night can fold the solo benchmarks in beside its Cogolf matches. A section
lists what is played (golf courses, Commit-0 tasks, project tasks); each
entrant says where its submissions live with a path template per game,
relative to the night file:

    [golf]
    courses = ["python", "racket"]
    [commit0]
    tasks = ["../references/commit0/textkit"]
    [project]
    tasks = ["../references/projects/csv_importer"]
    attempts = 5
    [[entrant]]
    golf = "subs/alice/golf/{course}/"
    commit0 = "subs/alice/commit0/{task}/"
    project = "subs/alice/project/{task}/{attempt}/"

Only the shape is checked here; whether the folders exist and the tasks load
is checked in `cogolf.league.checks` before the night starts.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.games.golf.courses import COURSES
from cogolf.games.golf.runners.base import DEFAULT_LIMITS
from cogolf.games.project.results import ATTEMPTS_PER_TASK
from cogolf.league.nightfields import Problems, Reader, error, resolve
from cogolf.league.tomllines import Path as KeyPath

SOLO_GAMES = ("golf", "commit0", "project")
GOLF_FIELDS = ("courses", "per_test_seconds", "per_hole_seconds")
COMMIT0_FIELDS = ("tasks", "quality")
PROJECT_FIELDS = ("tasks", "attempts")
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "golf": ("course",),
    "commit0": ("task",),
    "project": ("task", "attempt"),
}
MAX_TASKS = 64
MAX_GOLF_TEST_SECONDS = 60.0
MAX_GOLF_HOLE_SECONDS = 600.0
TASK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")


@dataclass(frozen=True)
class GolfGame:
    courses: tuple[str, ...]
    per_test_seconds: float = DEFAULT_LIMITS.per_test_seconds
    per_hole_seconds: float = DEFAULT_LIMITS.per_hole_seconds


@dataclass(frozen=True)
class Commit0Game:
    tasks: tuple[Path, ...]  # a prepared task (task.json) or a library source to prepare
    quality: bool = True  # run ruff and mypy beside the pass rate


@dataclass(frozen=True)
class ProjectGame:
    tasks: tuple[Path, ...]
    attempts: int = ATTEMPTS_PER_TASK


@dataclass(frozen=True)
class SoloGames:
    golf: GolfGame | None = None
    commit0: Commit0Game | None = None
    project: ProjectGame | None = None

    def played(self) -> tuple[str, ...]:
        return tuple(g for g in SOLO_GAMES if getattr(self, g) is not None)


def _section(
    file: Path,
    lines: dict[KeyPath, int],
    doc: dict[str, Any],
    name: str,
    known: tuple[str, ...],
    problems: Problems,
) -> Reader | None:
    if name not in doc:
        return None
    table = doc[name]
    if not isinstance(table, dict):
        problems.add(error(file, lines, (name,), f"must be a table ([{name}])"))
        return None
    r = Reader(file, lines, table, (name,))
    with problems.check():
        r.check_known(known)
    return r


def _task_dirs(r: Reader, base: Path) -> tuple[Path, ...]:
    texts = r.string_list("tasks", required=True)
    if len(texts) > MAX_TASKS:
        raise r.fail("tasks", f"at most {MAX_TASKS} tasks, got {len(texts)}")
    out: list[Path] = []
    for i, text in enumerate(texts):
        path = resolve(base, text).resolve()
        if path in out:
            raise error(r.file, r.lines, (*r.at, "tasks", i),
                        f"{text!r} is already tasks[{out.index(path)}]")
        out.append(path)
    return tuple(out)


def parse_solo(
    file: Path, lines: dict[KeyPath, int], doc: dict[str, Any], problems: Problems | None = None
) -> SoloGames:
    """The solo sections; their problems go to `problems` (raised here without one)."""
    found = problems if problems is not None else Problems(file)
    base = file.parent
    golf = commit0 = project = None
    r = _section(file, lines, doc, "golf", GOLF_FIELDS, found)
    if r is not None:
        courses = found.value(lambda: r.string_list("courses", required=True), [])
        for i, course in enumerate(courses):
            if course not in COURSES:
                found.add(error(file, lines, ("golf", "courses", i),
                                f"unknown course {course!r} (expected one of: "
                                f"{', '.join(COURSES)})"))
            elif courses.index(course) != i:
                found.add(error(file, lines, ("golf", "courses", i),
                                f"{course!r} is listed twice"))
        golf = GolfGame(
            courses=tuple(courses),
            per_test_seconds=found.value(lambda: r.number(
                "per_test_seconds", DEFAULT_LIMITS.per_test_seconds, MAX_GOLF_TEST_SECONDS),
                DEFAULT_LIMITS.per_test_seconds),
            per_hole_seconds=found.value(lambda: r.number(
                "per_hole_seconds", DEFAULT_LIMITS.per_hole_seconds, MAX_GOLF_HOLE_SECONDS),
                DEFAULT_LIMITS.per_hole_seconds),
        )
    r = _section(file, lines, doc, "commit0", COMMIT0_FIELDS, found)
    if r is not None:
        commit0 = Commit0Game(tasks=found.value(lambda: _task_dirs(r, base), ()),
                              quality=found.value(lambda: r.boolean("quality", True), True))
    r = _section(file, lines, doc, "project", PROJECT_FIELDS, found)
    if r is not None:
        project = ProjectGame(
            tasks=found.value(lambda: _task_dirs(r, base), ()),
            attempts=found.value(
                lambda: r.integer("attempts", ATTEMPTS_PER_TASK, 1, ATTEMPTS_PER_TASK),
                ATTEMPTS_PER_TASK),
        )
    if problems is None:
        found.raise_any()
    return SoloGames(golf=golf, commit0=commit0, project=project)


def submission_template(r: Reader, game: str, solo: SoloGames) -> str | None:
    """An entrant's path template for `game`, its placeholders checked."""
    text = r.string(game)
    if text is None:
        return None
    if getattr(solo, game) is None:
        raise r.fail(game, f"the night has no [{game}] section")
    allowed = PLACEHOLDERS[game]
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise r.fail(game, f"{text!r}: {exc} (write a literal brace as {{{{ or }}}})") from None
    names = ", ".join("{" + a + "}" for a in allowed)
    for f in fields:
        if f not in allowed:
            raise r.fail(game, f"unknown placeholder {{{f}}} (allowed: {names})")
    if not text.strip():
        raise r.fail(game, "is empty")
    return text


def submission_path(base: Path, template: str, **fields: str | int) -> Path:
    return resolve(base, template.format(**fields))


def task_name_problem(name: str) -> str | None:
    """None when `name` can name result files, else the problem."""
    if TASK_NAME.match(name):
        return None
    return (f"task name {name!r}: use 1-80 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit")
