"""Standings from real replay files: order independence, zero-sum margins, void matches,
tie-breaks, and files that cannot be read."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf.league.publish import standings_for_dir
from cogolf.league.records import read_night_dir
from cogolf.league.standings import compute, to_json

from .synth import SynthMatch, write_match, write_night

NAMES = ["alpha", "beta", "gamma", "delta", "eps"]
hole = st.tuples(*(st.integers(0, 5) for _ in range(2)), *(st.integers(0, 4) for _ in range(2)))


@st.composite
def nights(draw: st.DrawFn) -> list[SynthMatch]:
    count = draw(st.integers(2, 5))
    names = NAMES[:count]
    pairs = [(a, b) for a in names for b in names if a != b]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs), unique=True))
    out = []
    for a, b in chosen:
        holes = draw(st.lists(hole, min_size=1, max_size=4))
        ending = draw(st.sampled_from(["complete"] * 6 + ["deadline", "harness_fault", "torn"]))
        causes = draw(st.lists(st.sampled_from(["late", "malformed"]), max_size=2))
        out.append(SynthMatch(f"n-{a}-vs-{b}", (a, b), tuple(holes), ending, (tuple(causes), ())))
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(matches=nights(), seed=st.integers(0, 2**32))
def test_standings_are_byte_identical_in_any_file_order(matches: list[SynthMatch], seed: int):
    rng = random.Random(seed)
    shuffled = matches[:]
    rng.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as tmp:
        one, two = Path(tmp) / "n", Path(tmp) / "other" / "n"
        write_night(one, matches, [f"{x.match_id}.ndjson" for x in matches])
        # Other file names and another creation order: only the records may matter.
        write_night(
            two, shuffled, [f"{rng.getrandbits(40):x}-{i}.ndjson" for i, _ in enumerate(shuffled)]
        )
        first = to_json(standings_for_dir(one))
        second = to_json(standings_for_dir(two))
        assert first == second
        records = read_night_dir(one)
        reversed_records = read_night_dir(one)
        reversed_records.played.reverse()
        reversed_records.void.reverse()
        assert to_json(compute(records)) == to_json(compute(reversed_records))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(matches=nights())
def test_margins_are_zero_sum_and_void_matches_are_not_scored(matches: list[SynthMatch]):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "n"
        write_night(d, matches, [f"{x.match_id}.ndjson" for x in matches])
        game = standings_for_dir(d)["games"]["cogolf"]
    table = game["table"]
    scored = [x for x in matches if x.ending in ("complete", "deadline")]
    assert sum(r["margin"] for r in table) == 0
    assert sum(r["matches"] for r in table) == 2 * len(scored)
    assert game["matches"]["played"] == len(scored)
    assert game["matches"]["void"] == len(matches) - len(scored)
    assert sum(r["void"] for r in table) == 2 * game["matches"]["void"]
    for r in table:
        assert r["wins"] + r["draws"] + r["losses"] == r["matches"]
        assert r["points"] == 3 * r["wins"] + r["draws"]
    assert sum(r["wins"] for r in table) == sum(r["losses"] for r in table)
    h2h = game["head_to_head"]
    for a in h2h:
        assert sum(h2h[a].values()) == next(r["margin"] for r in table if r["name"] == a)
        for b in h2h[a]:
            assert h2h[a][b] == -h2h[b][a]
    # Entrants with no scored match are unrated: no rank, no rating, listed last.
    rated = [r for r in table if r["matches"]]
    assert table[: len(rated)] == rated
    assert all(r["rank"] is None and r["unrated"] for r in table[len(rated) :])
    assert {r["name"] for r in game["ratings"]["entrants"]} == {r["name"] for r in rated}
    ranks = [r["rank"] for r in rated]
    assert ranks == sorted(ranks)
    points = [r["points"] for r in rated]
    assert points == sorted(points, reverse=True)


def test_void_matches_are_listed_with_their_cause(tmp_path: Path):
    d = tmp_path / "v"
    write_match(d / "a.ndjson", SynthMatch("v-a-vs-b", ("a", "b"), ((2, 0, 0, 0),)))
    write_match(d / "b.ndjson", SynthMatch("v-b-vs-a", ("b", "a"), ((1, 0, 0, 0),), "torn"))
    write_match(
        d / "c.ndjson", SynthMatch("v-a-vs-c", ("a", "c"), ((1, 0, 0, 0),), "harness_fault")
    )
    (d / "v-c-vs-a.void.json").write_text(
        json.dumps({"match_id": "v-c-vs-a", "names": ["c", "a"], "cause": "boom", "attempts": 2})
    )
    game = standings_for_dir(d)["games"]["cogolf"]
    assert [(v["match_id"], v["cause"]) for v in game["void"]] == [
        ("v-a-vs-c", "harness fault: sandbox failed to start"),
        ("v-b-vs-a", "incomplete replay: no result line"),
        ("v-c-vs-a", "boom"),
    ]
    rows = {r["name"]: r for r in game["table"]}
    assert rows["a"]["matches"] == 1 and rows["a"]["margin"] == 4 and rows["a"]["void"] == 3
    assert rows["c"]["matches"] == 0 and rows["c"]["points"] == 0 and rows["c"]["void"] == 2
    assert [r["match_id"] for r in game["results"]] == ["v-a-vs-b"]


def test_unreadable_and_duplicate_files_are_problems_not_crashes(tmp_path: Path):
    d = tmp_path / "p"
    write_match(d / "one.ndjson", SynthMatch("p-a-vs-b", ("a", "b"), ((1, 0, 0, 0),)))
    write_match(d / "two.ndjson", SynthMatch("p-a-vs-b", ("a", "b"), ((0, 3, 0, 0),)))
    write_match(d / "ok.ndjson", SynthMatch("p-b-vs-a", ("b", "a"), ((0, 0, 1, 0),)))
    (d / "junk.ndjson").write_bytes(b'{"kind": "header"}\nnot json\n')
    (d / "bad.void.json").write_text("[1, 2]")
    (d / "self.ndjson").write_bytes(b"")
    write_match(d / "selfplay.ndjson", SynthMatch("p-a-vs-a", ("a", "a"), ((1, 0, 0, 0),)))
    doc = standings_for_dir(d)
    problems = doc["problems"]
    assert any("p-a-vs-b: more than one replay" in p for p in problems)
    assert any(p.startswith("junk.ndjson:1:") for p in problems)
    assert any(p.startswith("bad.void.json:") for p in problems)
    assert any(p.startswith("self.ndjson") and "empty" in p for p in problems)
    assert any("plays itself" in p for p in problems)
    assert all(str(tmp_path) not in p for p in problems)
    game = doc["games"]["cogolf"]
    assert [r["match_id"] for r in game["results"]] == ["p-b-vs-a"]


def test_ties_on_points_are_broken_by_head_to_head_then_margin(tmp_path: Path):
    d = tmp_path / "t"
    ms = [
        SynthMatch("t-a-vs-b", ("a", "b"), ((1, 0, 0, 0),)),  # a beats b narrowly
        SynthMatch("t-b-vs-c", ("b", "c"), ((5, 0, 0, 0),)),  # b beats c by a lot
        SynthMatch("t-d-vs-x", ("d", "x"), ((3, 0, 0, 0),)),
        SynthMatch("t-e-vs-y", ("e", "y"), ((1, 0, 0, 0),)),
        SynthMatch("t-f-vs-g", ("f", "g"), ((2, 2, 1, 1),)),  # a draw: level on everything
    ]
    write_night(d, ms, [f"{x.match_id}.ndjson" for x in ms])
    table = standings_for_dir(d)["games"]["cogolf"]["table"]
    order = [(r["rank"], r["name"], r["points"]) for r in table]
    # On 3 points: a won the only game among the tied (a, b, d, e), so a leads although b has
    # the best total margin; b lost it, so b is last of them; d and e go by total margin.
    assert order == [
        (1, "a", 3),
        (2, "d", 3),
        (3, "e", 3),
        (4, "b", 3),
        (5, "f", 1),
        (5, "g", 1),
        (7, "y", 0),
        (8, "x", 0),
        (9, "c", 0),
    ]


def test_ratings_are_anchored_and_tied_when_intervals_overlap(tmp_path: Path):
    d = tmp_path / "r"
    ms = []
    # Eight rounds: with fewer, twin's own interval (even games against the anchor) still
    # reaches the lower end of strong's.
    for i in range(8):
        for victim in ("literalist", "twin"):
            ms.append(SynthMatch(f"r-strong-vs-{victim}-{i}", ("strong", victim), ((5, 0, 0, 4),)))
        # literalist and twin split their games evenly
        lt = (i % 2, (i + 1) % 2, 0, 0)
        ms.append(SynthMatch(f"r-literalist-vs-twin-{i}", ("literalist", "twin"), (lt,)))
    write_night(d, ms, [f"{x.match_id}.ndjson" for x in ms])
    ratings = standings_for_dir(d)["games"]["cogolf"]["ratings"]
    rows = {r["name"]: r for r in ratings["entrants"]}
    assert ratings["anchor"] == "literalist"
    assert rows["literalist"]["rating"] == 1000.0
    assert rows["twin"]["rating"] == 1000.0
    assert rows["strong"]["rating"] > 1300.0
    assert rows["strong"]["low"] > max(rows["twin"]["high"], rows["literalist"]["high"])
    assert rows["strong"]["rank"] == 1 and rows["strong"]["tied_with"] == []
    assert rows["twin"]["rank"] == rows["literalist"]["rank"] == 2
    assert rows["twin"]["tied_with"] == ["literalist"]
    assert ratings["entrants"][0]["name"] == "strong"
    other = standings_for_dir(d, anchor="strong")["games"]["cogolf"]["ratings"]
    assert {r["name"]: r["rating"] for r in other["entrants"]}["strong"] == 1000.0
    missing = standings_for_dir(d, anchor="nobody")["games"]["cogolf"]["ratings"]
    assert missing["anchor"] is None and missing["centre"] == "mean"
    mean = sum(r["rating"] for r in missing["entrants"]) / 3
    assert abs(mean - 1000.0) < 0.1


def test_two_identical_results_are_too_few_to_say_and_four_are_enough(tmp_path: Path):
    """The night page once showed 731-731 for two equal results: now the interval is wide
    and flagged. The rule's bound is pinned: three scored matches are too few, four not."""
    for count in (2, 3, 4):
        d = tmp_path / f"n{count}"
        ms = [
            SynthMatch(f"n-x-{i}", ("rookie", "literalist"), ((2, 0, 0, 1),)) for i in range(count)
        ]
        write_night(d, ms, [f"{x.match_id}.ndjson" for x in ms])
        ratings = standings_for_dir(d)["games"]["cogolf"]["ratings"]
        rows = {r["name"]: r for r in ratings["entrants"]}
        assert ratings["min_matches"] == 4
        assert [rows[n]["matches"] for n in ("rookie", "literalist")] == [count, count]
        assert rows["rookie"]["too_few_matches"] is (count < 4)
        assert rows["literalist"]["too_few_matches"] is (count < 4)
        if count == 2:
            rookie = rows["rookie"]
            assert rookie["low"] < 1000.0 < rookie["rating"] < rookie["high"]
            assert rookie["high"] - rookie["low"] > 900
            assert rookie["tied_with"] == ["literalist"]
