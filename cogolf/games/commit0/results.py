"""Commit-0 result files and the table a league night shows.

One scored submission is one JSON file:

    {"game": "commit0", "schema": 1, "task": "cachetools-5.5.0", "entrant": "alice",
     "status": "ok", "pass_rate": 0.42, "passed": 90, "total": 214,
     "not_passed": {"<test id>": "failed" | "error" | "skipped" | "no_result" | "missing"},
     "lint": {"tool": "ruff", "count": 3, "detail": ""},
     "typecheck": {"tool": "mypy", "count": 0, "detail": ""},
     "notes": [...], "seconds": 12.5, "walled": true,
     "counts": {"collected", "passed", "failed", "errors", "skipped", "xfailed",
                "collect_errors", "twins", "over_test_time_limit"},
     "official": {"listed", "passed", "xpassed", "xfailed", "missing", "rate",
                  "failed": [listed ids not passed]} | null}

`official` is the benchmark's own rate over its id list, when the task has one
(`cogolf.games.commit0.official`); `pass_rate` stays ours. `counts.twins` is how
many hidden twin tests the run had (`cogolf.evaluation.pytest_twins`); no count,
id or note ever names one.

`status` is ok, tampered, timeout, no_report, install_failed or bad_submission;
anything but ok has pass_rate 0. The table reads a folder of such files: per
entrant, the mean of per-library pass rates over every task in the folder (a task
an entrant has no result for counts as 0), most complete first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogolf import resultdocs
from cogolf.agents.summary import agent_summary
from cogolf.text import clip

SCHEMA = 1
MAX_LISTED_IDS = 500
MAX_SHOWN_NOTE = 200  # of a result's first note, in a table


class ResultError(ValueError):
    """A result file is malformed or conflicts with another; the message names it."""


@dataclass
class Commit0Result:
    task: str
    entrant: str
    status: str
    passed: int
    total: int
    not_passed: dict[str, str] = field(default_factory=dict)
    lint: dict[str, Any] | None = None
    typecheck: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    walled: bool | None = None
    counts: dict[str, int] | None = None
    official: dict[str, Any] | None = None

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total and self.status == "ok" else 0.0

    def to_json(self) -> dict[str, Any]:
        listed = dict(list(self.not_passed.items())[:MAX_LISTED_IDS])
        return {
            "game": "commit0", "schema": SCHEMA, "task": self.task, "entrant": self.entrant,
            "status": self.status, "pass_rate": round(self.pass_rate, 6), "passed": self.passed,
            "total": self.total, "not_passed": listed, "lint": self.lint,
            "typecheck": self.typecheck, "notes": self.notes[:50], "seconds": self.seconds,
            "walled": self.walled, "counts": self.counts,
            "official": self.official if self.status == "ok" else None,
        }


@dataclass(frozen=True)
class Commit0Record:
    task: str
    entrant: str
    pass_rate: float
    source: str
    agent: dict[str, Any] | None = None  # an agent's attempt: status, tokens, cost, seconds
    # Why the rate is what it is: tests passed of the reference's, the run's status and
    # its first note (e.g. the package raised at import).
    passed: int = 0
    total: int = 0
    status: str = "ok"
    note: str = ""


@dataclass
class Commit0Row:
    entrant: str
    mean_pass_rate: float
    per_task: dict[str, float | None]  # None: no result for that task
    tasks_scored: int
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)  # by task, agents' only
    detail: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> counts, status

    def to_json(self) -> dict[str, Any]:
        return {"entrant": self.entrant, "mean_pass_rate": self.mean_pass_rate,
                "per_task": self.per_task, "tasks_scored": self.tasks_scored}


def read_record(data: Any, source: str) -> Commit0Record:
    if not isinstance(data, dict) or data.get("game") != "commit0":
        raise ResultError(f"{source}: not a Commit-0 result (game must be 'commit0')")
    if data.get("schema") != SCHEMA:
        raise ResultError(f"{source}: schema {data.get('schema')!r} is not {SCHEMA}")
    for key in ("task", "entrant"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ResultError(f"{source}: {key} must be a non-empty string")
    rate = data.get("pass_rate")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        raise ResultError(f"{source}: pass_rate must be a number within 0..1")

    def count(key: str) -> int:
        value = data.get(key)
        return value if type(value) is int and 0 <= value < 2**31 else 0

    status = data.get("status")
    notes = data.get("notes")
    note = notes[0] if isinstance(notes, list) and notes and isinstance(notes[0], str) else ""
    return Commit0Record(
        data["task"], data["entrant"], float(rate), source, passed=count("passed"),
        total=count("total"), status=clip(status, 40) if isinstance(status, str) else "",
        note=clip(note, MAX_SHOWN_NOTE),
        agent=agent_summary(data.get("agent"), source, ResultError),
    )  # fmt: skip


def load_records(folder: Path) -> list[Commit0Record]:
    """Every `*.json` Commit-0 result under `folder` (other games' files are skipped)."""
    return resultdocs.load_records(folder, "commit0", read_record, ResultError)


def commit0_table(records: Iterable[Commit0Record]) -> list[Commit0Row]:
    """Rows best first (mean pass rate, then entrant); two results for one
    entrant and task are an error naming both files."""
    seen: dict[tuple[str, str], Commit0Record] = {}
    for r in records:
        if (r.entrant, r.task) in seen:
            raise ResultError(f"{r.source}: {r.entrant} on {r.task} is also in "
                              f"{seen[(r.entrant, r.task)].source}")
        seen[(r.entrant, r.task)] = r
    tasks = sorted({task for _, task in seen})
    rows = []
    for entrant in sorted({e for e, _ in seen}):
        per_task = {t: (seen[(entrant, t)].pass_rate if (entrant, t) in seen else None)
                    for t in tasks}
        mean = sum(v or 0.0 for v in per_task.values()) / len(tasks)
        agents = {t: a for t in tasks if (entrant, t) in seen
                  and (a := seen[(entrant, t)].agent) is not None}
        detail = {t: {"passed": r.passed, "total": r.total, "status": r.status, "note": r.note}
                  for t in tasks if (r := seen.get((entrant, t))) is not None}  # fmt: skip
        rows.append(Commit0Row(entrant, round(mean, 6), per_task,
                               sum(v is not None for v in per_task.values()), agents, detail))
    rows.sort(key=lambda row: (-row.mean_pass_rate, row.entrant))
    return rows
