"""The night's plan (`league.planfile`): every field a replay must match, one mismatch at a
time; how a plan grows and what it refuses; the file's signature and bounds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from cogolf import messages as m
from cogolf.league.planfile import (
    MAX_PLAN_BYTES,
    PLAN_NAME,
    Plan,
    PlanError,
    PlannedMatch,
    extended,
    load_plan,
    marker_problem,
    plan_bytes,
    replay_problem,
    screening_plan,
    settle_plan,
)

KEY = b"k" * 32
DIGEST = "sha256:" + "ab" * 32


def planned(a: str = "ann", b: str = "bob", seed: int = 11, revision: int = 1) -> PlannedMatch:
    return PlannedMatch(
        match_id=f"n-{a}-vs-{b}", game="cogolf", seed=seed, names=(a, b), holes=2,
        deck="core", deck_digest=DIGEST, hole_deadline=40.0, retry_deadline=15.0,
        match_deadline=1800.0, revision=revision,
    )


def header(entry: PlannedMatch, **changes: Any) -> m.ReplayHeader:
    """The header a server writes for `entry`, with `changes` (config keys by their name)."""
    config = {"hole_deadline_seconds": entry.hole_deadline,
              "retry_deadline_seconds": entry.retry_deadline,
              "match_deadline_seconds": entry.match_deadline, "seed": entry.seed}
    for name in ("hole_deadline", "retry_deadline", "match_deadline"):
        if name in changes:
            config[f"{name}_seconds"] = changes.pop(name)
    fields: dict[str, Any] = {
        "game_version": "1", "protocol": "1", "match_id": entry.match_id,
        "deck_name": entry.deck, "deck_version": "core-1", "deck_digest": entry.deck_digest,
        "seed": entry.seed, "names": list(entry.names), "aliases": ["Ash", "Birch"],
        "holes": ["h1", "h2"][: entry.holes], "config": config, "sandbox": {},
        "started_at": 0.0,
    }
    fields.update(changes)
    return m.ReplayHeader(**fields)


PLAN = Plan(night="n", matches=[planned(), planned("bob", "ann"), planned("ann", "cy", 12)])
BY_ID = PLAN.by_id()
ENTRY = BY_ID["n-ann-vs-bob"]


def test_a_replay_of_a_planned_match_counts():
    assert replay_problem(BY_ID, header(ENTRY), "n-ann-vs-bob.ndjson") is None


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"format": "cogolf-golf"}, "game 'cogolf-golf' here, 'cogolf' in the plan"),
        ({"seed": 12}, "seed 12 here, 11 in the plan"),
        ({"names": ["bob", "ann"]}, "names ['bob', 'ann'] here, ['ann', 'bob'] in the plan"),
        ({"names": ["ann", "ghost"]}, "names ['ann', 'ghost'] here"),
        ({"holes": ["h1"]}, "holes 1 here, 2 in the plan"),
        ({"holes": ["h1", "h2", "h3"]}, "holes 3 here, 2 in the plan"),
        ({"deck_name": "other"}, "deck 'other' here, 'core' in the plan"),
        ({"deck_digest": "sha256:" + "cd" * 32}, "deck_digest 'sha256:cdcd"),
        ({"hole_deadline": 41.0}, "hole_deadline 41.0 here, 40.0 in the plan"),
        ({"retry_deadline": 14.0}, "retry_deadline 14.0 here, 15.0 in the plan"),
        ({"match_deadline": 1799.0}, "match_deadline 1799.0 here, 1800.0 in the plan"),
        ({"config": {}}, "hole_deadline None here, 40.0 in the plan"),
    ],
)
def test_each_field_of_a_planned_match_must_match(changes: dict[str, Any], why: str):
    problem = replay_problem(BY_ID, header(ENTRY, **changes), "n-ann-vs-bob.ndjson")
    assert problem is not None
    assert problem.startswith(f"n-ann-vs-bob.ndjson: not the planned match n-ann-vs-bob: {why}")
    assert problem.endswith("; not counted")


def test_an_unplanned_match_or_a_second_replay_is_not_counted():
    ghost = header(planned("ghost", "ann"))
    assert replay_problem(BY_ID, ghost, "n-ghost-vs-ann.ndjson") == (
        "n-ghost-vs-ann.ndjson: match 'n-ghost-vs-ann' is not in the night's plan; not counted")
    assert replay_problem(BY_ID, header(ENTRY), "copy.ndjson") == (
        "copy.ndjson: a second replay of the planned match n-ann-vs-bob "
        "(its replay is n-ann-vs-bob.ndjson); not counted")
    # A planned match's header under another planned match's file name.
    assert "a second replay" in (replay_problem(BY_ID, header(ENTRY), "n-bob-vs-ann.ndjson")
                                 or "")


def test_a_void_marker_must_stand_for_a_planned_match():
    assert marker_problem(BY_ID, "n-ann-vs-bob", ["ann", "bob"], "n-ann-vs-bob.void.json") is None
    assert "not in the night's plan; ignored" in (
        marker_problem(BY_ID, "n-ghost-vs-ann", ["ghost", "ann"], "n-ghost-vs-ann.void.json")
        or "")
    assert "names ['bob', 'ann'], the plan says ['ann', 'bob']" in (
        marker_problem(BY_ID, "n-ann-vs-bob", ["bob", "ann"], "n-ann-vs-bob.void.json") or "")
    assert "under another name" in (
        marker_problem(BY_ID, "n-ann-vs-bob", ["ann", "bob"], "x.void.json") or "")


def test_a_plan_only_grows():
    assert extended(PLAN, Plan(night="n", matches=list(reversed(PLAN.matches)))) is PLAN
    more = Plan(night="n", matches=[*PLAN.matches, planned("cy", "ann", 12)])
    grown = extended(PLAN, more)
    assert grown.revision == 2 and grown.matches[:3] == PLAN.matches
    assert [(p.match_id, p.revision) for p in grown.matches[3:]] == [("n-cy-vs-ann", 2)]
    assert extended(grown, more) is grown
    with pytest.raises(PlanError, match="planned match n-ann-vs-cy is no longer scheduled"):
        extended(PLAN, Plan(night="n", matches=PLAN.matches[:2]))
    with pytest.raises(PlanError, match="planned match n-ann-vs-bob: seed 11 in the plan, 5 now"):
        extended(PLAN, Plan(night="n", matches=[planned(seed=5), *PLAN.matches[1:]]))
    changed = msgspec.structs.replace(ENTRY, hole_deadline=3.0)
    with pytest.raises(PlanError, match=r"hole_deadline 40\.0 in the plan, 3\.0 now"):
        extended(PLAN, Plan(night="n", matches=[changed, *PLAN.matches[1:]]))
    with pytest.raises(PlanError, match="of night 'n', not 'm'"):
        extended(PLAN, Plan(night="m", matches=PLAN.matches))


def test_the_plan_file_is_signed_and_bounded(tmp_path: Path):
    path = tmp_path / PLAN_NAME
    assert load_plan(tmp_path, KEY) is None
    data = plan_bytes(KEY, PLAN)
    path.write_bytes(data)
    assert load_plan(tmp_path, KEY) == PLAN
    assert screening_plan(tmp_path, KEY) == (PLAN, None)
    # Its bytes may be re-indented; its values may not change.
    path.write_bytes(msgspec.json.encode(msgspec.json.decode(data)))
    assert load_plan(tmp_path, KEY) == PLAN
    refused = {
        b"the signature does not match": data.replace(b'"seed": 11', b'"seed": 12', 1),
        b"not a plan": data.replace(b'"mac"', b'"mac2"'),
        b"not a plan: Expected": b"[]",
    }
    for why, raw in refused.items():
        path.write_bytes(raw)
        with pytest.raises(PlanError, match=why.decode()):
            load_plan(tmp_path, KEY)
    path.write_bytes(data)
    with pytest.raises(PlanError, match="the signature does not match"):
        load_plan(tmp_path, b"o" * 32)  # another night's key
    with pytest.raises(PlanError, match="no night key"):
        load_plan(tmp_path, None)
    # The size bound: the most bytes are read, one more is refused unread.
    path.write_bytes(data + b" " * (MAX_PLAN_BYTES - len(data)))
    assert path.stat().st_size == MAX_PLAN_BYTES and load_plan(tmp_path, KEY) == PLAN
    path.write_bytes(data + b" " * (MAX_PLAN_BYTES + 1 - len(data)))
    with pytest.raises(PlanError, match=f"too large .*the limit is {MAX_PLAN_BYTES}"):
        load_plan(tmp_path, KEY)
    path.unlink()
    (tmp_path / "elsewhere.json").write_bytes(data)
    os.symlink(tmp_path / "elsewhere.json", path)
    with pytest.raises(PlanError, match="symbolic link"):
        load_plan(tmp_path, KEY)
    plan, problem = screening_plan(tmp_path, KEY)
    assert plan is None and problem is not None
    assert problem.startswith("plan.json: cannot read: plan.json: a symbolic link")
    assert "the night is unplanned, so every replay that verifies counts" in problem
    path.unlink()
    assert screening_plan(tmp_path, KEY)[1] == (
        "plan.json: missing (a night made before plans, or its plan was removed): the night is "
        "unplanned, so every replay that verifies counts, planned or not (`cogolf league run` "
        "with its night file plans it; an unusable plan.json must be removed first)")


def test_a_run_writes_keeps_extends_or_refuses_the_plan(tmp_path: Path):
    path = tmp_path / PLAN_NAME
    assert settle_plan(tmp_path, KEY, PLAN) == (PLAN, 3)
    written = path.read_bytes()
    assert settle_plan(tmp_path, KEY, PLAN) == (PLAN, 0) and path.read_bytes() == written
    more = Plan(night="n", matches=[*PLAN.matches, planned("cy", "ann", 12)])
    grown, added = settle_plan(tmp_path, KEY, more)
    assert added == 1 and grown.revision == 2 and load_plan(tmp_path, KEY) == grown
    with pytest.raises(PlanError) as err:
        settle_plan(tmp_path, KEY, Plan(night="n", matches=[planned(seed=5), *more.matches[1:]]))
    assert str(err.value) == (
        f"{path}: planned match n-ann-vs-bob: seed 11 in the plan, 5 now; a started night keeps "
        f"its schedule: give the changed night another name, or remove {tmp_path} to play it "
        "afresh")
    assert load_plan(tmp_path, KEY) == grown  # untouched
    path.write_bytes(path.read_bytes().replace(b'"seed": 11', b'"seed": 5', 1))
    with pytest.raises(PlanError, match="the signature does not match: edited, or signed with "
                       "another key; remove it to plan the night again from its night file"):
        settle_plan(tmp_path, KEY, more)
