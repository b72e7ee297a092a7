"""What a night's folder says happened: played matches, void matches, and the night manifest.

The standings are a pure function of these files (and of the night's plan, which
screens every replay and marker first: `planfile`). A replay is played (and scored)
when it is complete and did not end in a harness fault; an incomplete replay, a
harness fault or a void marker (`<match_id>.void.json`, written when a match could
not be played twice in a row) makes the match void: listed, never scored. Files
that cannot be read are reported as problems and otherwise ignored, so one bad
file never hides the rest of a night.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from cogolf import messages as m
from cogolf.league.planfile import Plan, marker_problem, replay_problem
from cogolf.replay import Replay, ReplayError, read_replay

REPLAY_SUFFIX = ".ndjson"
VOID_SUFFIX = ".void.json"
MANIFEST_NAME = "night.json"
MAX_SIDE_FILE_BYTES = 1024 * 1024


class VoidMarker(msgspec.Struct, kw_only=True):
    format: str = "cogolf-void"
    match_id: str
    names: list[str]
    cause: str
    attempts: int


class ManifestEntrant(msgspec.Struct, kw_only=True):
    name: str
    kind: str  # "policy", "command" or "agent" (an agent plays only the offline games)
    solo: list[str] = []  # the file games it has submissions for


class ManifestGame(msgspec.Struct, kw_only=True):
    items: list[str]
    attempts: int = 0


class ManifestSolo(msgspec.Struct, kw_only=True):
    """The night's games scored from files, so the combined table knows what "every game"
    means. The first three games have fields of their own (the format predates the game
    interface); any other game is listed under `more`, absent when there is none."""

    golf_courses: list[str] = []
    commit0_tasks: list[str] = []
    project_tasks: list[str] = []
    project_attempts: int = 0
    more: dict[str, ManifestGame] | msgspec.UnsetType = msgspec.UNSET

    def games(self) -> dict[str, tuple[list[str], int]]:
        """(items, attempts) of each game, by name."""
        more = {} if isinstance(self.more, msgspec.UnsetType) else self.more
        return {
            "golf": (self.golf_courses, 0),
            "commit0": (self.commit0_tasks, 0),
            "project": (self.project_tasks, self.project_attempts),
            **{name: (g.items, g.attempts) for name, g in more.items()},
        }

    @classmethod
    def of(cls, games: dict[str, tuple[list[str], int]]) -> ManifestSolo:
        none: tuple[list[str], int] = ([], 0)
        more = {name: ManifestGame(items=items, attempts=attempts)
                for name, (items, attempts) in games.items()
                if name not in ("golf", "commit0", "project")}
        return cls(
            golf_courses=games.get("golf", none)[0],
            commit0_tasks=games.get("commit0", none)[0],
            project_tasks=games.get("project", none)[0],
            project_attempts=games.get("project", none)[1],
            more=more or msgspec.UNSET,
        )


class Manifest(msgspec.Struct, kw_only=True):
    """Written by `league run` beside the replays: who was entered and what was scheduled,
    so entrants without a played match and unplayed matches still show in the standings."""

    format: str = "cogolf-night"
    name: str
    seed: int
    anchor: str
    entrants: list[ManifestEntrant]
    matches: list[str]
    solo: ManifestSolo | None = None  # absent in nights without solo games


@dataclass(frozen=True)
class Played:
    match_id: str
    names: tuple[str, str]
    result: m.MatchResult
    source: str = ""  # the replay's file name in the night's folder


@dataclass(frozen=True)
class Void:
    match_id: str
    names: tuple[str, str]
    cause: str


@dataclass
class NightRecords:
    night: str
    played: list[Played] = field(default_factory=list)
    void: list[Void] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    manifest: Manifest | None = None
    plan: Plan | None = None  # what was screened against (`planfile`); None: nothing was


def harness_fault(replay: Replay) -> str:
    """The void cause of a replay that ended in a harness fault, with the driver's detail."""
    detail = next((e.detail for e in replay.events if isinstance(e, m.EpisodeEnd) and e.detail), "")
    return f"harness fault: {detail}" if detail else "harness fault"


def classify(replay: Replay) -> Played | Void:
    header = replay.header
    names = (header.names[0], header.names[1])
    result = replay.result
    if result is None:
        return Void(header.match_id, names, "incomplete replay: no result line")
    if result.reason == "harness_fault":
        return Void(header.match_id, names, harness_fault(replay))
    return Played(header.match_id, names, result, replay.path.name)


def _check_names(names: list[str], where: str) -> str | None:
    if len(names) != 2:
        return f"{where}: expected two names, got {len(names)}"
    if names[0] == names[1]:
        return f"{where}: {names[0]!r} plays itself"
    return None


def _read_side_file(path: Path, kind: type[Any]) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SIDE_FILE_BYTES + 1)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_SIDE_FILE_BYTES:
        raise ReplayError(f"{path}: larger than {MAX_SIDE_FILE_BYTES} bytes")
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.DecodeError as exc:
        raise ReplayError(f"{path}: {exc}") from None


def collect(
    night: str,
    replays: Iterable[Replay],
    markers: Iterable[VoidMarker] = (),
    manifest: Manifest | None = None,
    problems: Iterable[str] = (),
) -> NightRecords:
    """Combine replays and void markers into one record per match id, independent of order."""
    out = NightRecords(night=night, manifest=manifest, problems=sorted(problems))
    by_id: dict[str, Played | Void] = {}
    duplicates: set[str] = set()
    for replay in replays:
        bad = _check_names(replay.header.names, replay.path.name)
        if bad:
            out.problems.append(bad)
            continue
        rec = classify(replay)
        if rec.match_id in by_id:
            duplicates.add(rec.match_id)
        by_id[rec.match_id] = rec
    for marker in markers:
        bad = _check_names(marker.names, f"void marker {marker.match_id}")
        if bad:
            out.problems.append(bad)
            continue
        # A scored replay beats a marker left from an earlier, failed attempt.
        if not isinstance(by_id.get(marker.match_id), Played):
            by_id[marker.match_id] = Void(
                marker.match_id, (marker.names[0], marker.names[1]), marker.cause
            )
    for match_id in sorted(duplicates):
        # Which copy would win depends on reading order, so neither is used.
        out.problems.append(f"{match_id}: more than one replay has this match id; none is used")
        del by_id[match_id]
    for match_id in sorted(by_id):
        rec = by_id[match_id]
        (out.played if isinstance(rec, Played) else out.void).append(rec)
    out.problems.sort()
    return out


def read_night_dir(directory: Path, plan: Plan | None = None) -> NightRecords:
    """Read every replay, void marker and the manifest of a night's folder. With `plan`,
    a replay or marker that is not of a planned match is a problem, not a record."""
    directory = Path(directory)
    planned = plan.by_id() if plan is not None else None
    if not directory.is_dir():
        raise ReplayError(f"{directory}: not a directory")
    replays: list[Replay] = []
    markers: list[VoidMarker] = []
    problems: list[str] = []
    manifest: Manifest | None = None
    for path in sorted(directory.iterdir()):
        try:
            if path.name == MANIFEST_NAME:
                manifest = _read_side_file(path, Manifest)
            elif path.name.endswith(VOID_SUFFIX):
                marker = _read_side_file(path, VoidMarker)
                why = None if planned is None else marker_problem(
                    planned, marker.match_id, marker.names, path.name)
                if why is None:
                    markers.append(marker)
                else:
                    problems.append(why)
            elif path.name.endswith(REPLAY_SUFFIX):
                replay = read_replay(path)
                why = None if planned is None else replay_problem(
                    planned, replay.header, path.name)
                if why is None:
                    replays.append(replay)
                else:
                    problems.append(why)
        except ReplayError as exc:
            # Named by file name only, so the standings do not depend on where the folder is.
            problems.append(str(exc).replace(str(path), path.name, 1))
        except Exception as exc:  # a hostile file is a problem, never a crash
            problems.append(f"{path.name}: cannot read: {type(exc).__name__}")
    night = manifest.name if manifest is not None else directory.name
    records = collect(night, replays, markers, manifest, problems)
    records.plan = plan
    return records
