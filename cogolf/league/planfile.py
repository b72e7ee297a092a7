"""The night's plan: the schedule a replay must match to count, signed before the first match.

`league run` writes `plan.json` into the night's folder before it plays anything:
every Cogolf match of the night (id, game, seed, seat order with names, holes, the
pack's name and digest, deadlines) and an HMAC-SHA256 of it with the night's key
(`proof`), in the one file, so no crash leaves a plan without its signature. The
standings are a function of the plan and the folder: a replay counts only when it
is the file `<match_id>.ndjson` of a planned match, its header says exactly what
the plan says, and it verifies. Anything else (an unplanned id, a planned id with
another seed or the seats swapped, a second replay of one match, a void marker of
a match never planned) is a problem with its reason, never counted.

A plan only grows. A night file that schedules exactly the planned matches keeps
it; one that adds matches (a new entrant: the other matches keep their ids and
seeds, `schedule`) extends it, the new matches marked with the plan's next
revision; one that changes or drops a planned match is refused, naming the match
and the field. A night without a plan that checks (made before plans, or whose
plan is missing, unreadable, edited or signed with another key) is *unplanned*:
its standings count every replay that verifies, as before plans, and say so first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from cogolf import messages as m
from cogolf import safeio
from cogolf.league.jobs import MatchJob
from cogolf.league.proof import mac_of, signed

PLAN_NAME = "plan.json"
PLAN_FORMAT = "cogolf-plan"
PLAN_VERSION = 1
MAX_PLAN_BYTES = 16 * 1024 * 1024  # 64 entrants plan 4,032 matches in about 1.6 MB
GAME = "cogolf"
REPLAY_FORMATS = {"cogolf-replay": GAME}  # a replay's header format -> its game
PURPOSE = b"plan"  # what the night's key signs here, so no other signed file reads as a plan


class PlanError(ValueError):
    """The night's plan cannot be used: unreadable, not signed, or not what is scheduled."""


class PlannedMatch(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    match_id: str
    game: str
    seed: int
    names: tuple[str, str]  # in seat order
    holes: int
    deck: str  # the pack's name
    deck_digest: str
    hole_deadline: float
    retry_deadline: float
    match_deadline: float
    revision: int = 1  # the revision of the plan that added it

    @property
    def replay_name(self) -> str:
        return f"{self.match_id}.ndjson"

    @classmethod
    def of(cls, job: MatchJob, deck: str) -> PlannedMatch:
        cfg = job.config()
        return cls(
            match_id=job.match_id,
            game=GAME,
            seed=job.seed,
            names=job.names,
            holes=job.holes,
            deck=deck,
            deck_digest=job.deck_digest,
            hole_deadline=cfg.hole_deadline_seconds,
            retry_deadline=cfg.retry_deadline_seconds,
            match_deadline=cfg.match_deadline_seconds,
        )

    def fields(self) -> dict[str, Any]:
        """What a replay must say, by field, in a fixed order."""
        doc = msgspec.structs.asdict(self)
        del doc["revision"]
        return doc


class Plan(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    format: str = PLAN_FORMAT
    format_version: int = PLAN_VERSION
    night: str
    revision: int = 1
    matches: list[PlannedMatch]

    def by_id(self) -> dict[str, PlannedMatch]:
        return {p.match_id: p for p in self.matches}


class PlanFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    plan: Plan
    mac: str  # of the plan's compact JSON, with the night's key


def plan_for(night: str, jobs: Sequence[MatchJob], deck: str) -> Plan:
    return Plan(night=night, matches=[PlannedMatch.of(job, deck) for job in jobs])


def header_fields(header: m.ReplayHeader) -> dict[str, Any]:
    """What a replay's header says about the fields a plan fixes."""
    return {
        "match_id": header.match_id,
        "game": REPLAY_FORMATS.get(header.format, header.format),
        "seed": header.seed,
        "names": tuple(header.names),
        "holes": len(header.holes),
        "deck": header.deck_name,
        "deck_digest": header.deck_digest,
        "hole_deadline": header.config.get("hole_deadline_seconds"),
        "retry_deadline": header.config.get("retry_deadline_seconds"),
        "match_deadline": header.config.get("match_deadline_seconds"),
    }


def first_difference(
    got: Mapping[str, Any], want: Mapping[str, Any]
) -> tuple[str, Any, Any] | None:
    """The first field of `want` that `got` says otherwise: (field, got, wanted)."""
    for name, value in want.items():
        if got.get(name) != value:
            return name, got.get(name), value
    return None


def _show(value: Any) -> str:
    return repr(list(value) if isinstance(value, tuple) else value)


def replay_problem(
    planned: Mapping[str, PlannedMatch], header: m.ReplayHeader, file_name: str
) -> str | None:
    """Why the replay `file_name` with `header` is not the replay of a planned match."""
    entry = planned.get(header.match_id)
    if entry is None:
        return f"{file_name}: match {header.match_id!r} is not in the night's plan; not counted"
    diff = first_difference(header_fields(header), entry.fields())
    if diff is not None:
        name, got, want = diff
        return (f"{file_name}: not the planned match {entry.match_id}: {name} {_show(got)} "
                f"here, {_show(want)} in the plan; not counted")
    if file_name != entry.replay_name:
        return (f"{file_name}: a second replay of the planned match {entry.match_id} "
                f"(its replay is {entry.replay_name}); not counted")
    return None


def marker_problem(
    planned: Mapping[str, PlannedMatch], match_id: str, names: Sequence[str], file_name: str
) -> str | None:
    """Why a void marker does not stand for a planned match."""
    entry = planned.get(match_id)
    if entry is None:
        return (f"{file_name}: void marker of {match_id!r}, which is not in the night's plan; "
                "ignored")
    if tuple(names) != entry.names:
        return (f"{file_name}: void marker of {match_id} names {_show(tuple(names))}, the plan "
                f"says {_show(entry.names)}; ignored")
    if file_name != f"{match_id}.void.json":
        return f"{file_name}: a void marker of {match_id} under another name; ignored"
    return None


def unplanned(reason: str) -> str:
    """The problem that says a night's standings are not screened by a plan, and why."""
    return (f"{PLAN_NAME}: {reason}: the night is unplanned, so every replay that verifies "
            "counts, planned or not (`cogolf league run` with its night file plans it; an "
            "unusable plan.json must be removed first)")


def screening_plan(night_dir: Path, key: bytes | None) -> tuple[Plan | None, str | None]:
    """The plan the standings screen the folder with, or the problem saying there is none."""
    try:
        plan = load_plan(night_dir, key)
    except PlanError as exc:
        return None, unplanned(str(exc))
    if plan is None:
        return None, unplanned("missing (a night made before plans, or its plan was removed)")
    return plan, None


def extended(stored: Plan, fresh: Plan) -> Plan:
    """`stored` with the matches of `fresh` it lacks (at the next revision); PlanError when
    `fresh` changes or drops a planned match."""
    if fresh.night != stored.night:
        raise PlanError(f"the plan is of night {stored.night!r}, not {fresh.night!r}")
    wanted = fresh.by_id()
    for old in stored.matches:
        new = wanted.get(old.match_id)
        if new is None:
            raise PlanError(f"planned match {old.match_id} is no longer scheduled")
        diff = first_difference(new.fields(), old.fields())
        if diff is not None:
            name, now, planned = diff
            raise PlanError(f"planned match {old.match_id}: {name} {_show(planned)} in the plan, "
                            f"{_show(now)} now")
    known = {p.match_id for p in stored.matches}
    added = [p for p in fresh.matches if p.match_id not in known]
    if not added:
        return stored
    revision = stored.revision + 1
    return Plan(night=stored.night, revision=revision, matches=[
        *stored.matches, *(msgspec.structs.replace(p, revision=revision) for p in added)
    ])


def _encoded(plan: Plan) -> bytes:
    return msgspec.json.encode(plan)


def plan_bytes(key: bytes, plan: Plan) -> bytes:
    """The contents of `plan.json`: the plan and its signature, indented for readers."""
    doc = PlanFile(plan=plan, mac=mac_of(key, PURPOSE, _encoded(plan)))
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"


def load_plan(night_dir: Path, key: bytes | None) -> Plan | None:
    """The night's signed plan; None when it has none; PlanError when it has one that
    cannot be used (the reason names what is wrong)."""
    try:
        data = safeio.read_file(PLAN_NAME, MAX_PLAN_BYTES, top=night_dir)
    except FileNotFoundError:
        return None
    except (OSError, safeio.UnsafeFile) as exc:
        raise PlanError(f"cannot read: {exc}".replace(str(Path(night_dir) / PLAN_NAME),
                                                      PLAN_NAME)) from None
    try:
        doc = msgspec.json.decode(data, type=PlanFile)
    except msgspec.DecodeError as exc:
        raise PlanError(f"not a plan: {exc}") from None
    if key is None:
        raise PlanError("not signed by this night's runner (the folder has no night key)")
    if not signed(key, PURPOSE, _encoded(doc.plan), doc.mac):
        raise PlanError("the signature does not match: edited, or signed with another key")
    plan = doc.plan
    if (plan.format, plan.format_version) != (PLAN_FORMAT, PLAN_VERSION):
        raise PlanError(f"format {plan.format} {plan.format_version}; this version reads "
                        f"{PLAN_FORMAT} {PLAN_VERSION}")
    if len(plan.by_id()) != len(plan.matches):
        raise PlanError("a match id is planned twice")
    return plan


def write_plan(night_dir: Path, key: bytes, plan: Plan) -> None:
    path = Path(night_dir) / PLAN_NAME
    tmp = path.with_name(f".{PLAN_NAME}.{os.getpid()}.tmp")
    tmp.write_bytes(plan_bytes(key, plan))
    tmp.replace(path)


def settle_plan(night_dir: Path, key: bytes, fresh: Plan) -> tuple[Plan, int]:
    """The plan this run plays, and how many matches it adds: `fresh` for a night without
    one, else the stored plan extended by `fresh` (written back, signed, when it grew).
    PlanError, with the way out, when the stored plan is unusable or `fresh` changes it."""
    path = Path(night_dir) / PLAN_NAME
    try:
        stored = load_plan(night_dir, key)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}; remove it to plan the night again from its "
                        "night file") from None
    try:
        plan = fresh if stored is None else extended(stored, fresh)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}; a started night keeps its schedule: give the changed "
                        f"night another name, or remove {night_dir} to play it afresh") from None
    if plan is not stored:
        write_plan(night_dir, key, plan)
    return plan, len(plan.matches) - (len(stored.matches) if stored is not None else 0)
