"""Project attempts in a league night: each entrant's attempts scored by the task's evaluator.

    [project]
    tasks = ["../references/projects/csv_importer"]
    attempts = 5
    [[entrant]]
    project = "subs/alice/project/{task}/{attempt}/"   # a folder or a patch file

One result file per attempt (`<entrant>.<task>.<attempt>.json`). An attempt
whose harness failed is not the entrant's fault: it is tried again, then void. A
kept result must have the task's scale and no harness error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.game import (
    AgentTask,
    GamePlan,
    GameTable,
    JobFault,
    NightJob,
    NightSetup,
    ResultFileError,
    Section,
    SectionError,
)
from cogolf.games.project.agent import ProjectAgentTask
from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.results import (
    ATTEMPTS_PER_TASK,
    AttemptRecord,
    ResultError,
    attempt_cells,
    project_table,
    read_record,
)
from cogolf.games.project.scoring import AttemptStatus
from cogolf.games.project.task import ProjectTask, TaskError, load_task
from cogolf.gametables import keep, ranks, round6, void_lines
from cogolf.grid import grid
from cogolf.nightfiles import check_name, read_json, task_dirs, task_names_problem, write_json
from cogolf.text import clip

NAME_WIDTH = 20


@dataclass(frozen=True)
class ProjectSection:
    tasks: tuple[Path, ...]
    attempts: int = ATTEMPTS_PER_TASK


def read_project(path: Path, source: str = "") -> tuple[AttemptRecord, dict[str, Any]]:
    data = read_json(path, ResultError)
    record = read_record(data, source or str(path))
    check_name(path, f"{record.entrant}.{record.task}.{record.attempt}.json", ResultError)
    return record, data


class ProjectSession:
    def __init__(self, plan: GamePlan) -> None:
        self.tasks: dict[str, ProjectTask] = {t.name: t for t in plan.state}

    async def prepare(self) -> None:
        return None

    def close(self) -> None:
        return None

    def kept(self, job: NightJob, path: Path) -> bool:
        record, data = read_project(path)
        return (record.entrant == job.entrant and record.attempt == job.attempt
                and data.get("scale") == self.tasks[job.item].scale.name
                and data.get("status") != AttemptStatus.HARNESS_ERROR
                and (job.agent is None) == (data.get("agent") is None))

    def agent_task(self, job: NightJob) -> AgentTask:
        return ProjectAgentTask(self.tasks[job.item])

    async def play(self, job: NightJob, path: Path) -> str:
        assert job.submission is not None  # an agent's job is played by the night's agents
        attempt = await run_attempt(self.tasks[job.item], job.submission, entrant=job.entrant,
                                    attempt=job.attempt)
        result = attempt.to_json()
        if result["status"] == AttemptStatus.HARNESS_ERROR:
            raise JobFault(f"harness error: {'; '.join(result.get('notes', []))[:300]}")
        write_json(path, result)
        return f"{result['status']}, {result['points']:g} point(s)"


class ProjectNight:
    name = "project"
    fields = ("tasks", "attempts")
    placeholders = ("task", "attempt")
    with_attempts = True
    patch_files = True  # a patch file is a valid project change

    def parse_section(self, section: Section, base: Path) -> ProjectSection:
        return ProjectSection(
            tasks=task_dirs(section, base),
            attempts=section.integer("attempts", ATTEMPTS_PER_TASK, 1, ATTEMPTS_PER_TASK),
        )

    def plan(self, settings: ProjectSection, *, check_toolchains: bool) -> GamePlan:
        out: list[ProjectTask] = []
        for i, path in enumerate(settings.tasks):
            try:
                task = load_task(path)
            except TaskError as exc:
                raise SectionError(("tasks", i), str(exc)) from None
            if not task.runnable:
                raise SectionError(("tasks", i), f"task {task.name} has no template, evaluator "
                                   "or command: its evaluator runs elsewhere, so a night "
                                   "cannot run it")
            out.append(task)
        names = [t.name for t in out]
        task_names_problem(names)
        return GamePlan(tuple(names), settings.attempts, tuple(out))

    def template_fields(self, item: str, attempt: int) -> dict[str, str | int]:
        return {"task": item, "attempt": attempt}

    def result_name(self, entrant: str, item: str, attempt: int, night: str) -> str:
        return f"{entrant}.{item}.{attempt}.json"

    def session(self, plan: GamePlan, night_dir: Path, night: str) -> ProjectSession:
        return ProjectSession(plan)

    def read_result(self, path: Path, night: str, source: str) -> AttemptRecord:
        try:
            return read_project(path, source)[0]
        except ResultError as exc:
            raise ResultFileError(str(exc)) from None

    def result_key(self, record: AttemptRecord) -> tuple[str, str, int]:
        return record.entrant, record.task, record.attempt

    def default_setup(self, records: list[AttemptRecord]) -> NightSetup:
        return NightSetup(tuple(sorted({r.task for r in records})), ATTEMPTS_PER_TASK, None)

    def table(self, records: list[AttemptRecord], setup: NightSetup, void: list[dict[str, Any]],
              problems: list[str]) -> GameTable:
        tasks, attempts = setup.items, setup.attempts
        kept: list[AttemptRecord] = []
        for r in keep(records, setup, "task", lambda r: (r.entrant, r.task, r.source), problems):
            if r.attempt > attempts:
                problems.append(
                    f"{r.source}: attempt {r.attempt} is beyond the night's {attempts}")
            else:
                kept.append(r)
        try:
            rows = project_table(kept)
        except ResultError as exc:
            problems.append(str(exc))
            rows = []
        table = []
        for r in rows:
            per_task = {t: round6(r.per_task.get(t, 0.0)) for t in tasks}
            found = {t: r.attempts.get(t, 0) for t in tasks}
            breakdown = {t: [a.breakdown() for a in r.breakdown.get(t, [])] for t in tasks}
            costs = [a.agent["cost"] for rs in r.breakdown.values() for a in rs
                     if a.agent is not None and a.agent["cost"] is not None]
            table.append({"entrant": r.entrant, "per_task": per_task, "total": round6(r.total),
                          "attempts": found, "breakdown": breakdown,
                          "complete": all(n == attempts for n in found.values()),
                          "cost": round6(sum(costs)) if costs else None})
        table.sort(key=lambda row: (-row["total"], row["entrant"]))
        for row, rank in zip(table, ranks([row["total"] for row in table]), strict=True):
            row["rank"] = rank
        keys = {row["entrant"]: (-row["total"],) for row in table if row["complete"]}
        return GameTable({"tasks": list(tasks), "attempts": attempts, "out_of": attempts,
                          "table": table, "void": void}, keys)

    def render(self, game: dict[str, Any]) -> list[str]:
        tasks, n = game["tasks"], game["out_of"]
        costly = any(r.get("cost") is not None for r in game["table"])
        rows = [
            [
                str(r["rank"]),
                clip(r["entrant"], NAME_WIDTH),
                *[f"{r['per_task'][t]:.2f}/{n}" + ("" if r["attempts"][t] == n else
                                                   f" ({r['attempts'][t]} run)") for t in tasks],
                f"{r['total']:.2f}/{n * len(tasks)}",
                *([] if not costly else ["-" if r.get("cost") is None else f"{r['cost']:.4f}"]),
            ]
            for r in game["table"]
        ]
        out = ["", f"Project: points per task, the sum of {n} attempts"]
        out += grid(["#", "entrant", *tasks, "total", *(["cost"] if costly else [])], rows,
                    left=2)
        detail = [
            [clip(r["entrant"], NAME_WIDTH), t,
             *attempt_cells(r.get("breakdown", {}).get(t, []), n)]
            for r in game["table"]
            for t in tasks
        ]
        if detail:
            out += ["", "  per attempt: points, floor (F) and signal (S) checks passed/total; "
                    "an agent's status, tokens, cost and seconds"]
            out += grid(["entrant", "task", *[f"#{i}" for i in range(1, n + 1)]], detail, left=2)
        return out + void_lines(game["void"])


GAME = ProjectNight()
