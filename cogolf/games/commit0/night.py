"""Commit-0 in a league night: every entrant's implementation scored on the night's libraries.

    [commit0]
    tasks = ["../references/commit0/textkit"]   # prepared tasks or library sources
    quality = true
    [[entrant]]
    commit0 = "subs/alice/commit0/{task}/"

A library source is prepared once into the night's folder
(`tasks/commit0/<name>/`) and reused by later runs. A result is Commit-0's own
document (`<entrant>.<task>.json`); a kept one must have the task's test count.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

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
from cogolf.games.commit0.agent import FEEDBACK, Commit0AgentTask
from cogolf.games.commit0.layout import SourceError
from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.results import Commit0Record, ResultError, commit0_table, read_record
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import Commit0Task, TaskError, load_task
from cogolf.gametables import keep, ranks, round6, void_lines
from cogolf.grid import grid
from cogolf.nightfiles import check_name, read_json, task_dirs, task_names_problem, write_json
from cogolf.text import clip

log = structlog.get_logger("cogolf.league")

TASKS_DIR = "tasks"  # prepared Commit-0 tasks, kept apart from the result files
NAME_WIDTH = 20


@dataclass(frozen=True)
class Commit0Section:
    tasks: tuple[Path, ...]  # a prepared task (task.json) or a library source to prepare
    quality: bool = True  # run ruff and mypy beside the pass rate
    feedback: str = "lint"  # what an agent entrant may check its work with


@dataclass(frozen=True)
class Commit0Source:
    """A Commit-0 task of the night: prepared already, or a library source to prepare."""

    name: str
    path: Path
    task: Commit0Task | None  # None: prepare from `path` into the night's folder


@dataclass(frozen=True)
class Commit0Plan:
    sources: tuple[Commit0Source, ...]
    quality: bool
    feedback: str = "lint"


def read_commit0(path: Path, source: str = "") -> tuple[Commit0Record, dict[str, Any]]:
    """`source` names the file in the record (default: its path)."""
    data = read_json(path, ResultError)
    record = read_record(data, source or str(path))
    check_name(path, f"{record.entrant}.{record.task}.json", ResultError)
    return record, data


class Commit0Session:
    def __init__(self, plan: Commit0Plan, night_dir: Path) -> None:
        self.plan, self.night_dir = plan, night_dir
        self.tasks: dict[str, Commit0Task | str] = {}  # task, or why it could not be prepared

    async def prepare(self) -> None:
        """Prepared tasks are used as they are; sources are prepared once into the night's
        folder (`tasks/commit0/<name>/`) and reused by later runs."""
        for source in self.plan.sources:
            if source.task is not None:
                self.tasks[source.name] = source.task
                continue
            dest = self.night_dir / TASKS_DIR / "commit0" / source.name
            try:
                self.tasks[source.name] = load_task(dest)
                continue
            except TaskError:
                shutil.rmtree(dest, ignore_errors=True)
            try:
                task = await prepare(str(source.path), dest, name=source.name)
            except (SourceError, TaskError, OSError) as exc:
                log.warning("commit0_prepare_failed", task=source.name, error=str(exc))
                self.tasks[source.name] = f"cannot prepare the task: {exc}"
                shutil.rmtree(dest, ignore_errors=True)
                continue
            self.tasks[source.name] = task

    def close(self) -> None:
        return None

    def kept(self, job: NightJob, path: Path) -> bool:
        record, data = read_commit0(path)
        task = self.tasks.get(job.item)
        return (isinstance(task, Commit0Task) and record.entrant == job.entrant
                and data.get("total") == len(task.reference_ids)
                and (job.agent is None) == (data.get("agent") is None))

    def _task(self, job: NightJob) -> Commit0Task:
        task = self.tasks[job.item]
        if isinstance(task, str):
            raise JobFault(task, retry=False)
        return task

    def agent_task(self, job: NightJob) -> AgentTask:
        return Commit0AgentTask(self._task(job), self.plan.feedback, self.plan.quality)

    async def play(self, job: NightJob, path: Path) -> str:
        task = self._task(job)
        assert job.submission is not None  # an agent's job is played by the night's agents
        c0 = await score_submission(task, job.submission, entrant=job.entrant,
                                    quality=self.plan.quality)
        write_json(path, c0.to_json())
        return f"{c0.status}, pass rate {c0.pass_rate:.3f} ({c0.passed}/{c0.total})"


class Commit0Night:
    name = "commit0"
    fields = ("tasks", "quality", "feedback")
    placeholders = ("task",)
    with_attempts = False
    patch_files = False

    def parse_section(self, section: Section, base: Path) -> Commit0Section:
        feedback = section.string("feedback", "lint")
        if feedback not in FEEDBACK:
            raise section.fail("feedback", f"must be one of {', '.join(FEEDBACK)}, got "
                               f"{feedback!r}")
        return Commit0Section(tasks=task_dirs(section, base),
                              quality=section.boolean("quality", True), feedback=feedback or "lint")

    def plan(self, settings: Commit0Section, *, check_toolchains: bool) -> GamePlan:
        out: list[Commit0Source] = []
        for i, path in enumerate(settings.tasks):
            if (path / "task.json").is_file():
                try:
                    task = load_task(path)
                except TaskError as exc:
                    raise SectionError(("tasks", i), str(exc)) from None
                out.append(Commit0Source(task.name, path, task))
            elif path.is_dir():
                out.append(Commit0Source(path.name, path, None))
            else:
                raise SectionError(("tasks", i),
                                   f"no directory {path} (a prepared task or a library source)")
        names = [s.name for s in out]
        task_names_problem(names)
        return GamePlan(tuple(names), 0, Commit0Plan(tuple(out), settings.quality,
                                                     settings.feedback))

    def template_fields(self, item: str, attempt: int) -> dict[str, str | int]:
        return {"task": item}

    def result_name(self, entrant: str, item: str, attempt: int, night: str) -> str:
        return f"{entrant}.{item}.json"

    def session(self, plan: GamePlan, night_dir: Path, night: str) -> Commit0Session:
        return Commit0Session(plan.state, night_dir)

    def read_result(self, path: Path, night: str, source: str) -> Commit0Record:
        try:
            return read_commit0(path, source)[0]
        except ResultError as exc:
            raise ResultFileError(str(exc)) from None

    def result_key(self, record: Commit0Record) -> tuple[str, str, int]:
        return record.entrant, record.task, 0

    def default_setup(self, records: list[Commit0Record]) -> NightSetup:
        return NightSetup(tuple(sorted({r.task for r in records})), 0, None)

    def table(self, records: list[Commit0Record], setup: NightSetup, void: list[dict[str, Any]],
              problems: list[str]) -> GameTable:
        tasks = setup.items
        kept: list[Commit0Record] = keep(
            records, setup, "task", lambda r: (r.entrant, r.task, r.source), problems)
        try:
            rows = commit0_table(kept)
        except ResultError as exc:  # two results for one entrant and task
            problems.append(str(exc))
            rows = []
        table = []
        for r in rows:
            per_task = {t: r.per_task.get(t) for t in tasks}
            # The mean is over the night's tasks: one nobody has a result for still counts as 0.
            mean = round6(sum(v or 0.0 for v in per_task.values()) / len(tasks))
            shown = {t: None if v is None else round6(v) for t, v in per_task.items()}
            costs = [a["cost"] for a in r.agents.values() if a["cost"] is not None]
            table.append({"entrant": r.entrant, "mean_pass_rate": mean, "per_task": shown,
                          "tasks_scored": sum(v is not None for v in per_task.values()),
                          "complete": all(v is not None for v in per_task.values()),
                          "detail": {t: r.detail[t] for t in tasks if t in r.detail},
                          **({"agent": r.agents,
                              "cost": round6(sum(costs)) if costs else None}
                             if r.agents else {})})
        table.sort(key=lambda row: (-row["mean_pass_rate"], row["entrant"]))
        for row, rank in zip(table, ranks([row["mean_pass_rate"] for row in table]),
                             strict=True):
            row["rank"] = rank
        keys = {row["entrant"]: (-row["mean_pass_rate"],) for row in table if row["complete"]}
        return GameTable({"tasks": list(tasks), "table": table, "void": void}, keys)

    def render(self, game: dict[str, Any]) -> list[str]:
        tasks = game["tasks"]
        agents = any("agent" in r for r in game["table"])
        rows = [
            [
                str(r["rank"]),
                clip(r["entrant"], NAME_WIDTH),
                f"{r['mean_pass_rate']:.3f}",
                *["-" if r["per_task"][t] is None else _cell(r["per_task"][t],
                                                            r.get("detail", {}).get(t))
                  + _agent_note(r.get("agent", {}).get(t)) for t in tasks],
                *([] if not agents else ["-" if r.get("cost") is None else f"{r['cost']:.4f}"]),
            ]
            for r in game["table"]
        ]
        out = ["", "Commit-0: mean pass rate over the night's libraries "
               "('-': no result, counts 0); each: the rate (tests passed/of the reference's), "
               "and the status when the run did not complete"]
        return out + grid(["#", "entrant", "mean", *tasks, *(["cost"] if agents else [])], rows,
                          left=2) + void_lines(game["void"])


def _agent_note(agent: dict[str, Any] | None) -> str:
    """An agent's attempt beside its pass rate: its status unless ok, its tokens and time."""
    if agent is None:
        return ""
    status = "" if agent["status"] == "ok" else f" {agent['status']}"
    tokens = agent["input_tokens"] + agent["output_tokens"]
    return f"{status} {tokens}tok {agent.get('seconds') or 0:.0f}s"


def _cell(rate: float, detail: dict[str, Any] | None) -> str:
    """`0.000 (0/48) import_error`: the rate, the counts and a status other than ok."""
    if not detail:
        return f"{rate:.3f}"
    # A record without counts (an older file, a hand-written one) says nothing by "(0/0)".
    total = detail.get("total") or 0
    text = f"{rate:.3f} ({detail.get('passed', 0)}/{total})" if total else f"{rate:.3f}"
    return text if detail.get("status") in ("ok", "", None) else f"{text} {detail['status']}"


GAME = Commit0Night()


