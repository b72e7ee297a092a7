"""The solo games' own tables in a night's standings: golf, Commit-0, project.

Each table is built by the game's own ranking code (`golf.leaderboard`,
`commit0_table`, `project_table`) from the result files of the night's folder
only. What the night plays (courses, tasks, attempts, entrants) comes from the
manifest; without one it is inferred from the files. A result for an entrant,
course or task the night does not have is a problem, not a row. Every list is
sorted and every float rounded, so the tables do not depend on file order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from cogolf.games.commit0.results import Commit0Record, commit0_table
from cogolf.games.commit0.results import ResultError as Commit0ResultError
from cogolf.games.golf.leaderboard import combined_board, course_board
from cogolf.games.project.results import ATTEMPTS_PER_TASK, AttemptRecord, project_table
from cogolf.games.project.results import ResultError as ProjectResultError
from cogolf.league.records import Manifest
from cogolf.league.solo_files import SoloRecords, SoloVoid

DECIMALS = 6


@dataclass(frozen=True)
class SoloSetup:
    """What the night's solo games are: from the manifest, or inferred from the files."""

    golf_courses: tuple[str, ...]
    commit0_tasks: tuple[str, ...]
    project_tasks: tuple[str, ...]
    project_attempts: int
    entrants: frozenset[str] | None  # None: any name found in the files

    @property
    def games(self) -> tuple[str, ...]:
        out = []
        if self.golf_courses:
            out.append("golf")
        if self.commit0_tasks:
            out.append("commit0")
        if self.project_tasks:
            out.append("project")
        return tuple(out)


@dataclass
class GameTable:
    """One game's part of the standings: its document and, for the combined table, a
    sort key (lower is better) for each entrant with a complete result in it."""

    doc: dict[str, Any]
    keys: dict[str, tuple[float, ...]] = field(default_factory=dict)


def setup_for(manifest: Manifest | None, solo: SoloRecords) -> SoloSetup:
    if manifest is not None and manifest.solo is not None:
        s = manifest.solo
        return SoloSetup(tuple(s.golf_courses), tuple(s.commit0_tasks), tuple(s.project_tasks),
                         s.project_attempts, frozenset(e.name for e in manifest.entrants))
    entrants = frozenset(e.name for e in manifest.entrants) if manifest is not None else None
    if manifest is not None:
        # A night run without solo games: any solo file in its folder does not belong.
        return SoloSetup((), (), (), 0, entrants)
    return SoloSetup(
        tuple(sorted({d.course for d in solo.golf})),
        tuple(sorted({r.task for r in solo.commit0})),
        tuple(sorted({r.task for r in solo.project})),
        ATTEMPTS_PER_TASK,
        None,
    )


def _round(x: float) -> float:
    return round(x, DECIMALS) + 0.0


def _ranks(keys: Sequence[object]) -> list[int]:
    """Competition ranking over sorted keys: equal keys share a rank (1, 1, 3)."""
    out: list[int] = []
    for i, k in enumerate(keys):
        out.append(out[-1] if i and k == keys[i - 1] else i + 1)
    return out


def _void_docs(void: Iterable[SoloVoid], game: str) -> list[dict[str, Any]]:
    rows = [
        {"entrant": v.entrant, "item": v.item, "attempt": v.attempt, "cause": v.cause}
        for v in void
        if v.game == game
    ]
    return sorted(rows, key=lambda r: (r["entrant"], r["item"], r["attempt"]))


def _keep(
    items: Iterable[Any],
    setup: SoloSetup,
    allowed: Sequence[str],
    what: str,
    get: Callable[[Any], tuple[str, str, str]],
    problems: list[str],
) -> list[Any]:
    """Drop results whose entrant or item the night does not have, saying so."""
    out = []
    for item in items:
        entrant, thing, source = get(item)
        if setup.entrants is not None and entrant not in setup.entrants:
            problems.append(f"{source}: {entrant!r} is not an entrant of the night")
        elif thing not in allowed:
            problems.append(f"{source}: {what} {thing!r} is not played this night")
        else:
            out.append(item)
    return out


def golf_table(solo: SoloRecords, setup: SoloSetup, problems: list[str]) -> GameTable:
    courses = setup.golf_courses
    docs = _keep(solo.golf, setup, courses, "course",
                 lambda d: (d.model, d.course, f"golf/{d.model}.{d.course}"), problems)

    def row(r: Any) -> dict[str, Any]:
        d = msgspec.to_builtins(r)
        d["entrant"] = d.pop("model")
        d.pop("run_id", None)  # the night's name, for every row
        for k in ("score", "penalty"):
            if k in d:
                d[k] = _round(d[k])
        if "courses" in d:
            d["courses"] = {c: _round(v) for c, v in sorted(d["courses"].items())}
        return d

    combined = combined_board(docs, courses)
    keys = {r.model: (_round(r.score),) for r in combined if r.rank is not None}
    return GameTable(
        {
            "courses": list(courses),
            "per_course": {c: [row(r) for r in course_board(docs, c)] for c in courses},
            "combined": [row(r) for r in combined],
            "void": _void_docs(solo.void, "golf"),
        },
        keys,
    )


def commit0_game_table(solo: SoloRecords, setup: SoloSetup, problems: list[str]) -> GameTable:
    tasks = setup.commit0_tasks
    records: list[Commit0Record] = _keep(
        solo.commit0, setup, tasks, "task", lambda r: (r.entrant, r.task, r.source), problems)
    try:
        rows = commit0_table(records)
    except Commit0ResultError as exc:  # two results for one entrant and task
        problems.append(str(exc))
        rows = []
    table = []
    for r in rows:
        per_task = {t: r.per_task.get(t) for t in tasks}
        # The mean is over the night's tasks: one nobody has a result for still counts as 0.
        mean = _round(sum(v or 0.0 for v in per_task.values()) / len(tasks))
        shown = {t: None if v is None else _round(v) for t, v in per_task.items()}
        table.append({"entrant": r.entrant, "mean_pass_rate": mean, "per_task": shown,
                      "tasks_scored": sum(v is not None for v in per_task.values()),
                      "complete": all(v is not None for v in per_task.values())})
    table.sort(key=lambda row: (-row["mean_pass_rate"], row["entrant"]))
    for row, rank in zip(table, _ranks([row["mean_pass_rate"] for row in table]), strict=True):
        row["rank"] = rank
    keys = {row["entrant"]: (-row["mean_pass_rate"],) for row in table if row["complete"]}
    return GameTable({"tasks": list(tasks), "table": table, "void": _void_docs(solo.void,
                                                                               "commit0")}, keys)


def project_game_table(solo: SoloRecords, setup: SoloSetup, problems: list[str]) -> GameTable:
    tasks, attempts = setup.project_tasks, setup.project_attempts
    records: list[AttemptRecord] = []
    for r in _keep(solo.project, setup, tasks, "task",
                   lambda r: (r.entrant, r.task, r.source), problems):
        if r.attempt > attempts:
            problems.append(f"{r.source}: attempt {r.attempt} is beyond the night's {attempts}")
        else:
            records.append(r)
    try:
        rows = project_table(records)
    except ProjectResultError as exc:
        problems.append(str(exc))
        rows = []
    table = []
    for r in rows:
        per_task = {t: _round(r.per_task.get(t, 0.0)) for t in tasks}
        found = {t: r.attempts.get(t, 0) for t in tasks}
        breakdown = {t: [a.breakdown() for a in r.breakdown.get(t, [])] for t in tasks}
        table.append({"entrant": r.entrant, "per_task": per_task, "total": _round(r.total),
                      "attempts": found, "breakdown": breakdown,
                      "complete": all(n == attempts for n in found.values())})
    table.sort(key=lambda row: (-row["total"], row["entrant"]))
    for row, rank in zip(table, _ranks([row["total"] for row in table]), strict=True):
        row["rank"] = rank
    keys = {row["entrant"]: (-row["total"],) for row in table if row["complete"]}
    return GameTable({"tasks": list(tasks), "attempts": attempts, "out_of": attempts,
                      "table": table, "void": _void_docs(solo.void, "project")}, keys)


def solo_tables(
    solo: SoloRecords, manifest: Manifest | None, problems: list[str]
) -> dict[str, GameTable]:
    """The tables of the solo games the night plays, by game name."""
    setup = setup_for(manifest, solo)
    out: dict[str, GameTable] = {}
    if setup.golf_courses:
        out["golf"] = golf_table(solo, setup, problems)
    if setup.commit0_tasks:
        out["commit0"] = commit0_game_table(solo, setup, problems)
    if setup.project_tasks:
        out["project"] = project_game_table(solo, setup, problems)
    played = set(setup.games)
    for v in solo.void:
        if v.game not in played:
            problems.append(f"{v.game}/void/{v.entrant}.{v.item}: the night has no {v.game} game")
    for name, records in (("golf", solo.golf), ("commit0", solo.commit0),
                          ("project", solo.project)):
        if records and name not in played:
            problems.append(f"{name}/: {len(records)} result file(s), but the night has no "
                            f"{name} game")
    return out
