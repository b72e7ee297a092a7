"""The disclosure policy itself, record kind by record kind: what a live view serves of
each kind stays within that kind's allow-list, nothing of a hole but its start is
served before its score, and private golf tests never show more than their name and
whether they passed, live or after the end."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogolf.server import disclosure as d
from cogolf.server.disclosure import JournalStream, View, pick, served_journal

TABLES = {"cogolf": d.COGOLF_LIVE, "golf": d.GOLF_LIVE}
KINDS = sorted({k for table in TABLES.values() for k in table} | {"odd"})
# Every key any table lists, and keys no live table lists (secrets of the journal).
LISTED = sorted(
    {
        key
        for table in TABLES.values()
        for allow in table.values()
        if isinstance(allow, dict)
        for key in allow
    }
)
SECRET = ["seed", "names", "sandbox", "hidden", "cases", "ambiguity", "model", "drawn"]

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from([*LISTED, *SECRET]), inner, max_size=4),
    max_leaves=10,
)
records = st.builds(
    lambda kind, hole, rest: {**rest, "kind": kind, **({} if hole is None else {"hole": hole})},
    st.sampled_from(KINDS),
    st.none() | st.integers(1, 3) | st.sampled_from(["1", 1.0, [1]]),
    st.dictionaries(st.sampled_from([*LISTED, *SECRET]), json_values, max_size=6),
)


def within(value: Any, allow: d.Allow) -> bool:
    """Whether `value` holds nothing that `allow` does not list."""
    if allow is True or callable(allow):
        return True
    if isinstance(value, list):
        return all(within(v, allow) for v in value)
    if isinstance(value, dict):
        return all(k in allow and within(v, allow[k]) for k, v in value.items())
    return value is None


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(records, max_size=14), st.sampled_from(["cogolf", "golf"]))
def test_every_kind_is_served_live_within_its_list_and_only_once_its_hole_scored(
    recs: list[dict[str, Any]], game: str
) -> None:
    table = TABLES[game]
    stream = JournalStream(View(game, full=False))
    scored: set[Any] = set()
    served: list[dict[str, Any]] = []
    for rec in recs:
        if rec["kind"] == "hole_score" and isinstance(rec.get("hole"), int | float | str):
            scored.add(rec["hole"])
        for out in stream.feed(rec):
            served.append(out)
            kind = out["kind"]
            assert kind in table, kind
            assert within(out, table[kind]), (kind, out)
            hole = out.get("hole")
            if hole is not None and kind != "hole_start":
                assert hole in scored, out  # nothing of an open hole
            if kind not in ("episode_end", "result"):  # written only at the end
                assert not set(SECRET) & set(out), out
    # the file form serves exactly what the stream serves
    data = b"".join(json.dumps(r).encode() + b"\n" for r in recs)
    assert served_journal(data, View(game, full=False)).splitlines() == [
        msgspec.json.encode(r) for r in served
    ]
    # and nothing is lost: a record of a listed kind is served unless a hole's score
    # never came at or after it
    scored_later: set[Any] = set()
    expected = 0
    for r in reversed(recs):
        hole = r.get("hole")
        numbered = isinstance(hole, int | float | str)
        if r["kind"] == "hole_score" and numbered:
            scored_later.add(hole)
        if r["kind"] in table and (
            hole is None or r["kind"] == "hole_start" or (numbered and hole in scored_later)
        ):
            expected += 1
    assert len(served) == expected


def test_a_hole_is_held_until_its_score_then_served_in_order() -> None:
    stream = JournalStream(View("cogolf", full=False))
    start = {"kind": "hole_start", "hole": 2, "spec_key": "k", "at": 1.0, "seed": 9}
    sub = {"kind": "submission", "hole": 2, "slot": 0, "impl": "x", "source": "seat"}
    other = {"kind": "submission", "hole": 3, "slot": 1, "impl": "y"}
    score = {"kind": "hole_score", "hole": 2, "score": [1, 0], "ambiguity": "secret"}
    assert stream.feed(start) == [{"kind": "hole_start", "hole": 2, "spec_key": "k", "at": 1.0}]
    assert stream.feed(sub) == []
    assert stream.feed(other) == []
    assert stream.feed(score) == [
        {"kind": "submission", "hole": 2, "slot": 0, "impl": "x", "source": "seat"},
        {"kind": "hole_score", "hole": 2, "score": [1, 0]},
    ]
    assert stream.feed({"kind": "submission", "hole": [2], "impl": "z"}) == []
    assert stream.feed({"kind": "hole_score", "hole": 3}) == [
        {"kind": "submission", "hole": 3, "slot": 1, "impl": "y"},
        {"kind": "hole_score", "hole": 3},
    ]
    full = JournalStream(View("cogolf", full=True))
    assert full.feed(sub) == [sub]
    assert full.feed(["not", "a", "record"]) == []  # type: ignore[arg-type]


def test_the_live_cogolf_header_hides_the_seed_names_draw_and_sandbox() -> None:
    header = {
        "kind": "header", "match_id": "m", "seed": 7, "names": ["a", "b"], "holes": ["k1"],
        "aliases": ["Ash", "Birch"], "sandbox": {"mode": "fork"},
        "config": {"seed": 7, "holes": 2, "names": ["a", "b"], "hole_deadline_seconds": 5},
    }
    live = View("cogolf", full=False).record(header)
    assert live == {
        "kind": "header", "match_id": "m", "aliases": ["Ash", "Birch"],
        "config": {"holes": 2, "hole_deadline_seconds": 5},
    }
    assert View("cogolf", full=True).record(header) == header
    assert View("cogolf", full=False).record({"kind": "unlisted", "x": 1}) is None
    assert View("cogolf", full=False).record({"x": 1}) is None
    assert View("golf", full=True).record({"kind": "unlisted"}) is None
    assert View("cogolf", full=False).record("header") is None


def _hole_result() -> dict[str, Any]:
    return {
        "hole": 1, "score": 3, "secret": "s",
        "tests": [
            {"name": "public-1", "passed": True, "status": "ok", "detail": "d", "got": "g",
             "args": ["a"]},
            {"name": "private-1", "passed": False, "status": "wrong", "detail": "Hello",
             "got": "Hello", "args": ["Hello"]},
            "not a test",
        ],
    }


PUBLIC = {"name": "public-1", "passed": True, "status": "ok", "detail": "d", "got": "g"}
PRIVATE = {"name": "private-1", "passed": False, "status": "wrong"}


def test_private_golf_tests_show_only_name_and_pass_live_and_at_the_end() -> None:
    for full in (False, True):
        view = View("golf", full=full)
        rec = {"kind": "hole_score", "hole": 1, "total": 3, "result": _hole_result()}
        out = view.record(rec)
        assert out is not None
        assert out["result"] == {"hole": 1, "score": 3, "tests": [PUBLIC, PRIVATE, None]}
        result = view.result(_Result(document={"holes": [_hole_result()], "secret": 1}))
        assert result == {"document": {"holes": [{"hole": 1, "score": 3,
                                                  "tests": [PUBLIC, PRIVATE, None]}]}}
        snap = view.snapshot(_Snap(resolved=[_hole_result()]))
        assert snap["resolved"] == [{"hole": 1, "score": 3, "tests": [PUBLIC, PRIVATE, None]}]
    odd = View("golf", full=False).record(
        {"kind": "hole_score", "hole": 1, "result": {"tests": "all"}}
    )
    assert odd == {"kind": "hole_score", "hole": 1, "result": {"tests": []}}


def test_the_golf_model_is_served_only_in_full() -> None:
    header = {"kind": "header", "game": "golf", "config": {"course": "py", "model": "M-1"}}
    assert View("golf", full=False).record(header) == {
        "kind": "header", "game": "golf", "config": {"course": "py"}
    }
    assert View("golf", full=True).record(header) == header


class _Result(msgspec.Struct):
    document: dict[str, Any]


class _Snap(msgspec.Struct):
    resolved: list[Any]
    type: str = "snapshot"
    status: str = "running"
    seed: int = 9


def test_status_snapshot_and_result_by_view() -> None:
    doc = {"match_id": "m", "status": "running", "names": ["a", "b"], "game": "golf"}
    assert View("cogolf", full=False).status(doc) == {"match_id": "m", "status": "running"}
    assert View("golf", full=False).status(doc) == {
        "match_id": "m", "status": "running", "game": "golf"
    }
    assert View("cogolf", full=True).status(doc) == doc
    snap = _Snap(resolved=[{"hole": 1, "score": [1, 0], "ambiguity": "a"}])
    assert View("cogolf", full=False).snapshot(snap) == {
        "type": "snapshot", "status": "running", "resolved": [{"hole": 1, "score": [1, 0]}]
    }
    assert View("cogolf", full=True).snapshot(snap) == msgspec.to_builtins(snap)
    assert View("golf", full=False).snapshot(snap) == {
        "type": "snapshot", "status": "running", "resolved": [{"hole": 1, "score": [1, 0]}]
    }
    assert View("golf", full=True).snapshot(snap)["seed"] == 9
    assert View("cogolf", full=False).result(None) is None
    assert View("cogolf", full=False).result(_Result(document={"x": 1})) == {"document": {"x": 1}}


class _Hosted:
    def __init__(self, status: str, game: str | None = None) -> None:
        self.status = status
        if game is not None:
            self.game = game


def test_a_view_is_full_once_ended_or_for_the_admin() -> None:
    assert View.of(_Hosted("running"), admin=False) == View("cogolf", False)
    assert View.of(_Hosted("running"), admin=True) == View("cogolf", True)
    assert View.of(_Hosted("finished", "golf"), admin=False) == View("golf", True)
    assert View.of(_Hosted("failed"), admin=False).full
    assert View("cogolf", True).raw_journal and not View("golf", True).raw_journal
    assert not View("cogolf", False).raw_journal


def test_pick_cuts_to_what_is_listed() -> None:
    assert pick({"a": 1, "b": {"c": 2, "d": 3}}, {"a": True, "b": {"c": True}}) == {
        "a": 1, "b": {"c": 2}
    }
    assert pick([{"a": 1, "z": 0}, 5], {"a": True}) == [{"a": 1}, None]
    assert pick({"a": 1}, {}) is None
    assert pick(3, {"a": True}) is None
    assert pick("x", lambda v: v * 2) == "xx"


def test_a_torn_or_undecodable_line_is_not_served() -> None:
    data = (
        b'{"kind":"hole_start","hole":1}\n\xff\n[1]\n{"kind":"hole_start","hole":2}\n'
        b'{"kind":"hole_start","hole":3'
    )
    out = served_journal(data, View("cogolf", full=False))
    assert out == b'{"kind":"hole_start","hole":1}\n{"kind":"hole_start","hole":2}\n'
