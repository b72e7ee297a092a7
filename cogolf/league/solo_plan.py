"""What a night's solo games will play: the loaded tasks and one job per result file.

Built before the first match, so a task that does not load, a missing
submissions folder or a toolchain the machine lacks is reported against its
line in the night file instead of surfacing hours later. A job is one result
file: an entrant on a golf course, on a Commit-0 task, or one attempt of a
project task. Jobs exist only for entrants that gave a path for that game.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cogolf import safeio
from cogolf.games.commit0.task import Commit0Task
from cogolf.games.commit0.task import TaskError as Commit0TaskError
from cogolf.games.commit0.task import load_task as load_commit0_task
from cogolf.games.golf.courses import get_course
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.toolchains import ToolchainError
from cogolf.games.project.task import ProjectTask
from cogolf.games.project.task import TaskError as ProjectTaskError
from cogolf.games.project.task import load_task as load_project_task
from cogolf.league.night import Night
from cogolf.league.night_solo import task_name_problem

TASKS_DIR = "tasks"  # prepared Commit-0 tasks, kept apart from the result files


@dataclass(frozen=True)
class Commit0Source:
    """A Commit-0 task of the night: prepared already, or a library source to prepare."""

    name: str
    path: Path
    task: Commit0Task | None  # None: prepare from `path` into the night's folder


@dataclass(frozen=True)
class SoloJob:
    game: str  # golf | commit0 | project
    entrant: str
    item: str  # the course or task name
    attempt: int  # project attempts count from 1; 0 for the other games
    submission: Path

    @property
    def key(self) -> str:
        """The result file's stem, unique within the game's folder."""
        if self.game == "project":
            return f"{self.entrant}.{self.item}.{self.attempt}"
        return f"{self.entrant}.{self.item}"

    @property
    def label(self) -> str:
        what = f"{self.item} attempt {self.attempt}" if self.game == "project" else self.item
        return f"{self.game} {self.entrant} {what}"


@dataclass(frozen=True)
class SoloPlan:
    golf_courses: tuple[str, ...]
    golf_limits: RunLimits
    commit0: tuple[Commit0Source, ...]
    commit0_quality: bool
    project: tuple[ProjectTask, ...]
    project_attempts: int
    jobs: tuple[SoloJob, ...]

    @property
    def games(self) -> tuple[str, ...]:
        out = []
        if self.golf_courses:
            out.append("golf")
        if self.commit0:
            out.append("commit0")
        if self.project:
            out.append("project")
        return tuple(out)


def _commit0_sources(night: Night) -> tuple[Commit0Source, ...]:
    game = night.solo.commit0
    if game is None:
        return ()
    out: list[Commit0Source] = []
    for i, path in enumerate(game.tasks):
        at = ("commit0", "tasks", i)
        if (path / "task.json").is_file():
            try:
                task = load_commit0_task(path)
            except Commit0TaskError as exc:
                raise night.error(at, str(exc)) from None
            out.append(Commit0Source(task.name, path, task))
        elif path.is_dir():
            out.append(Commit0Source(path.name, path, None))
        else:
            raise night.error(at, f"no directory {path} (a prepared task or a library source)")
    return tuple(out)


def _project_tasks(night: Night) -> tuple[ProjectTask, ...]:
    game = night.solo.project
    if game is None:
        return ()
    out: list[ProjectTask] = []
    for i, path in enumerate(game.tasks):
        at = ("project", "tasks", i)
        try:
            task = load_project_task(path)
        except ProjectTaskError as exc:
            raise night.error(at, str(exc)) from None
        if not task.runnable:
            raise night.error(at, f"task {task.name} has no template, evaluator or command: "
                                  "its evaluator runs elsewhere, so a night cannot run it")
        out.append(task)
    return tuple(out)


def _check_names(night: Night, game: str, names: list[str]) -> None:
    for i, name in enumerate(names):
        problem = task_name_problem(name)
        if problem is not None:
            raise night.error((game, "tasks", i), problem)
        if names.index(name) != i:
            raise night.error((game, "tasks", i),
                              f"task name {name!r} is also the name of tasks[{names.index(name)}]")


def _golf_limits(night: Night) -> RunLimits:
    golf = night.solo.golf
    if golf is None:
        return RunLimits()
    return RunLimits(per_test_seconds=golf.per_test_seconds, per_hole_seconds=golf.per_hole_seconds)


def solo_plan(night: Night, *, check_toolchains: bool = True) -> SoloPlan:
    """Load every solo task of `night` and list its jobs; errors name the night file's field."""
    courses = night.solo.golf.courses if night.solo.golf is not None else ()
    limits = _golf_limits(night)
    if check_toolchains:
        for i, course in enumerate(courses):
            try:
                get_course(course).runner(limits)
            except ToolchainError as exc:
                raise night.error(("golf", "courses", i), f"cannot run {course}: {exc}") from None
    commit0 = _commit0_sources(night)
    _check_names(night, "commit0", [s.name for s in commit0])
    project = _project_tasks(night)
    _check_names(night, "project", [t.name for t in project])
    attempts = night.solo.project.attempts if night.solo.project is not None else 0
    quality = night.solo.commit0.quality if night.solo.commit0 is not None else True

    jobs: list[SoloJob] = []
    for idx, e in enumerate(night.entrants):
        wanted: list[tuple[str, str, int, dict[str, str | int]]] = []
        wanted += [("golf", c, 0, {"course": c}) for c in courses]
        wanted += [("commit0", s.name, 0, {"task": s.name}) for s in commit0]
        wanted += [("project", t.name, n, {"task": t.name, "attempt": n})
                   for t in project for n in range(1, attempts + 1)]
        for game, item, attempt, fields in wanted:
            path = night.submission(e, game, **fields)
            if path is None:
                continue
            try:  # a link anywhere the template leads is never followed
                safeio.check_no_links(night.path.parent, path)
            except safeio.UnsafeFile as exc:
                raise night.error(("entrant", idx, game), f"{item}: {exc}") from None
            # A patch file is a valid project change; every other submission is a folder.
            if not (path.is_dir() or (game == "project" and path.is_file())):
                raise night.error(("entrant", idx, game),
                                  f"no submission for {item}: {path} does not exist")
            jobs.append(SoloJob(game, e.name, item, attempt, path))
    return SoloPlan(
        golf_courses=tuple(courses),
        golf_limits=limits,
        commit0=commit0,
        commit0_quality=quality,
        project=project,
        project_attempts=attempts,
        jobs=tuple(jobs),
    )
