"""Project result files and the per-task table a league night shows.

One attempt is one JSON file:

    {"game": "project", "schema": 1, "task": "csv_importer", "entrant": "alice",
     "attempt": 1, "scale": "failure_weighted", "status": "ok", "points": 0.5,
     "checks": {"passed": 21, "total": 22, "failed": ["bom"], "failed_optional": []},
     "by_label": {"floor": {"passed": 11, "total": 11}, "signal": {...}, "optional": {...}},
     "tests": {"passed": 30, "total": 31, "complete": true},
     "notes": [...], "seconds": 3.2, "walled": true, "twins": 8}

`walled` is null for ingested reports (the evaluator ran elsewhere). `twins` is how
many hidden twin tests a pytest evaluator's run had (null for other evaluators);
no count, id or note ever names one. The table
reads a folder of such files: per entrant and task, the sum of attempts 1..5
(a missing attempt scores 0), the total over every task in the folder (out of 5
per task: 20 for the four leaderboard projects), and per attempt its points and
floor/signal checks passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogolf import resultdocs
from cogolf.agents.summary import agent_summary
from cogolf.games.project.scoring import AttemptScore
from cogolf.games.project.task import COUNTED_LABELS

SCHEMA = 1
ATTEMPTS_PER_TASK = 5
MAX_CHECKS = 100_000


class ResultError(ValueError):
    """A result file is malformed or conflicts with another; the message names it."""


@dataclass
class AttemptResult:
    task: str
    entrant: str
    attempt: int
    scale: str
    score: AttemptScore
    seconds: float
    walled: bool | None
    twins: int | None = None

    @property
    def points(self) -> float:
        return self.score.points

    def to_json(self) -> dict[str, Any]:
        return {
            "game": "project",
            "schema": SCHEMA,
            "task": self.task,
            "entrant": self.entrant,
            "attempt": self.attempt,
            "scale": self.scale,
            **self.score.to_json(),
            "seconds": self.seconds,
            "walled": self.walled,
            "twins": self.twins,
        }


@dataclass(frozen=True)
class AttemptRecord:
    """The fields of a result file the table needs, as read back."""

    task: str
    entrant: str
    attempt: int
    points: float
    source: str
    status: str = ""
    by_label: tuple[tuple[str, int, int], ...] = ()  # (label, passed, total), counted labels
    agent: dict[str, Any] | None = None  # an agent's attempt: status, tokens, cost, seconds

    def breakdown(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "points": self.points, "status": self.status,
                **{label: [passed, total] for label, passed, total in self.by_label},
                **({"agent": self.agent} if self.agent is not None else {})}


@dataclass
class ProjectRow:
    entrant: str
    per_task: dict[str, float]  # task -> sum of its attempts (0..5)
    total: float
    attempts: dict[str, int]  # task -> attempts found
    breakdown: dict[str, list[AttemptRecord]] = field(default_factory=dict)  # by attempt

    @property
    def out_of(self) -> int:
        return ATTEMPTS_PER_TASK * len(self.per_task)

    def to_json(self) -> dict[str, Any]:
        return {"entrant": self.entrant, "per_task": self.per_task, "total": self.total,
                "out_of": self.out_of, "attempts": self.attempts,
                "breakdown": {t: [r.breakdown() for r in rs] for t, rs in self.breakdown.items()}}


def read_record(data: Any, source: str) -> AttemptRecord:
    if not isinstance(data, dict) or data.get("game") != "project":
        raise ResultError(f"{source}: not a project result (game must be 'project')")
    if data.get("schema") != SCHEMA:
        raise ResultError(f"{source}: schema {data.get('schema')!r} is not {SCHEMA}")
    for key in ("task", "entrant"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ResultError(f"{source}: {key} must be a non-empty string")
    attempt = data.get("attempt")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not (
        1 <= attempt <= ATTEMPTS_PER_TASK
    ):
        raise ResultError(f"{source}: attempt must be an integer 1..{ATTEMPTS_PER_TASK}")
    points = data.get("points")
    if isinstance(points, bool) or not isinstance(points, int | float) or not 0 <= points <= 1:
        raise ResultError(f"{source}: points must be a number within 0..1")
    status = data.get("status", "")
    if not isinstance(status, str):
        raise ResultError(f"{source}: status must be a string")
    return AttemptRecord(data["task"], data["entrant"], attempt, float(points), source,
                         status, _by_label(data.get("by_label"), source),
                         agent_summary(data.get("agent"), source, ResultError))


def _by_label(raw: Any, source: str) -> tuple[tuple[str, int, int], ...]:
    """Passed/total per counted label; absent in files from before it was kept."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ResultError(f"{source}: by_label must be an object")
    out: list[tuple[str, int, int]] = []
    for label in COUNTED_LABELS:
        entry = raw.get(label)
        if entry is None:
            continue
        passed, total = (entry.get(k) if isinstance(entry, dict) else None
                         for k in ("passed", "total"))
        if not (isinstance(passed, int) and isinstance(total, int) and _count(passed)
                and _count(total) and passed <= total):
            raise ResultError(f"{source}: by_label.{label} must be "
                              f"{{passed, total}} with 0 <= passed <= total <= {MAX_CHECKS}")
        out.append((label, passed, total))
    return tuple(out)


def _count(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_CHECKS


def load_records(folder: Path) -> list[AttemptRecord]:
    """Every `*.json` project result under `folder` (other games' files are skipped)."""
    return resultdocs.load_records(folder, "project", read_record, ResultError)


def project_table(records: Iterable[AttemptRecord]) -> list[ProjectRow]:
    """Rows best first (by total, then entrant name); a duplicate attempt is an error."""
    seen: dict[tuple[str, str, int], str] = {}
    tasks: set[str] = set()
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, dict[str, int]] = {}
    kept: dict[str, dict[str, list[AttemptRecord]]] = {}
    for r in records:
        key = (r.entrant, r.task, r.attempt)
        if key in seen:
            raise ResultError(
                f"{r.source}: attempt {r.attempt} of {r.entrant} on {r.task} "
                f"is also in {seen[key]}"
            )
        seen[key] = r.source
        tasks.add(r.task)
        sums.setdefault(r.entrant, {})
        sums[r.entrant][r.task] = sums[r.entrant].get(r.task, 0.0) + r.points
        counts.setdefault(r.entrant, {})
        counts[r.entrant][r.task] = counts[r.entrant].get(r.task, 0) + 1
        kept.setdefault(r.entrant, {}).setdefault(r.task, []).append(r)
    rows = []
    for entrant, per in sums.items():
        per_task = {t: round(per.get(t, 0.0), 6) for t in sorted(tasks)}
        breakdown = {t: sorted(kept[entrant].get(t, []), key=lambda r: r.attempt)
                     for t in sorted(tasks)}
        rows.append(ProjectRow(entrant, per_task, round(sum(per_task.values()), 6),
                               {t: counts[entrant].get(t, 0) for t in sorted(tasks)}, breakdown))
    rows.sort(key=lambda row: (-row.total, row.entrant))
    return rows


def attempt_cell(record: dict[str, Any] | None) -> str:
    """One attempt as the tables show it: points, then floor (F) and signal (S)
    checks passed/total, e.g. `0.50 F1/1 S17/18`; `-` for an attempt not played."""
    if record is None:
        return "-"
    parts = [f"{record['points']:.2f}"]
    for label, letter in (("floor", "F"), ("signal", "S")):
        if label in record:
            passed, total = record[label]
            parts.append(f"{letter}{passed}/{total}")
    if record.get("status") not in ("", "ok", None):
        parts.append(str(record["status"]))
    agent = record.get("agent")
    if isinstance(agent, dict):
        if agent.get("status") not in ("ok", None):
            parts.append(str(agent["status"]))
        tokens = agent.get("input_tokens", 0) + agent.get("output_tokens", 0)
        cost = agent.get("cost")
        parts.append(f"{tokens}tok" + ("" if cost is None else f" ${cost:.2f}")
                     + f" {agent.get('seconds') or 0:.0f}s")
    return " ".join(parts)


def attempt_cells(breakdown: list[dict[str, Any]], attempts: int) -> list[str]:
    """Cells for attempts 1..attempts from a breakdown list (missing ones `-`)."""
    by_number = {b["attempt"]: b for b in breakdown}
    return [attempt_cell(by_number.get(n)) for n in range(1, attempts + 1)]
