"""The standings document to the last field: a small night tallied by hand, the
head-to-head mini-league, the tie-break order, rounding and the JSON bytes."""

from __future__ import annotations

import math
from pathlib import Path

from cogolf import messages as m
from cogolf.engine import rules
from cogolf.league import ratings as bt
from cogolf.league.planfile import Plan, PlannedMatch
from cogolf.league.records import Manifest, ManifestEntrant, NightRecords, Played, Void
from cogolf.league.results import read_results
from cogolf.league.standings import _mini_league, _round, compute, to_json

from .solo_synth import SoloResult, write_solo

Pair = tuple[int, int]


def played(
    mid: str,
    names: tuple[str, str],
    scores: Pair,
    *,
    breaches: Pair = (0, 0),
    taken: Pair = (0, 0),
    par: Pair = (0, 0),
    illegal: Pair = (0, 0),
    fired: Pair = (0, 0),
    causes: tuple[dict[str, int], dict[str, int]] = ({}, {}),
) -> Played:
    winner = None if scores[0] == scores[1] else (0 if scores[0] > scores[1] else 1)
    result = m.MatchResult(
        match_id=mid, names=list(names), aliases=list(rules.ALIASES), scores=list(scores),
        hole_scores=[list(scores)], breaches=list(breaches), breaches_taken=list(taken),
        par_fails=list(par), tests_fired=list(fired), illegal_tests=list(illegal),
        holes_played=1, fallbacks=[sum(c.values()) for c in causes],
        fallback_causes=[dict(c) for c in causes], reason="complete", wall_clock_seconds=1.0,
        seed=1, deck_version="d-1", deck_digest="sha256:d", winner=winner, killer_test=None,
    )  # fmt: skip
    return Played(mid, names, result)


def planned(mid: str, names: tuple[str, str]) -> PlannedMatch:
    return PlannedMatch(
        match_id=mid, game="cogolf", seed=1, names=names, holes=1, deck="d",
        deck_digest="sha256:d", hole_deadline=1.0, retry_deadline=1.0, match_deadline=1.0,
    )  # fmt: skip


PLAYED = [
    played("m1", ("a", "b"), (3, -3), breaches=(2, 1), taken=(1, 2), par=(0, 3), illegal=(1, 0),
           fired=(5, 4), causes=({"late": 1}, {})),
    played("m2", ("b", "a"), (1, -1), breaches=(1, 1), taken=(1, 1), par=(2, 0), illegal=(0, 2),
           fired=(3, 6), causes=({}, {"late": 1, "malformed": 1})),
    played("m3", ("a", "c"), (0, 0), par=(1, 1), fired=(2, 2), causes=({}, {"late": 1})),
    played("m4", ("c", "b"), (2, -2), breaches=(3, 0), taken=(0, 3), illegal=(1, 1),
           fired=(7, 1), causes=({"crash": 1}, {"late": 1})),
]  # fmt: skip
VOID = [Void("m5", ("a", "d"), "boom")]
MANIFEST = Manifest(
    name="n", seed=1, anchor="b",
    entrants=[ManifestEntrant(name=x, kind="policy") for x in "abcd"],
    matches=["m1", "m2", "m3", "m4", "m5", "m7"],
)  # fmt: skip
PLAN = Plan(
    night="n", revision=2,
    matches=[planned(f"m{i}", ("a", "b")) for i in range(1, 6)] + [planned("m6", ("d", "e"))],
)  # fmt: skip


def row(name: str, rank: int | None, **counts: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "rank": rank, "name": name, "matches": 0, "wins": 0, "draws": 0, "losses": 0,
        "points": 0, "margin": 0, "score_for": 0, "score_against": 0, "breaches": 0,
        "breaches_taken": 0, "par_fails": 0, "illegal_tests": 0, "tests_fired": 0,
        "fallbacks": 0, "fallback_causes": {}, "void": 0,
    }  # fmt: skip
    doc.update(counts)
    if rank is None:
        doc["unrated"] = True
    return doc


# Tallied by hand from PLAYED and VOID: a and c level on points (4), their one game a draw
# and their total margins equal, so they share first place.
TABLE = [
    row("a", 1, matches=3, wins=1, draws=1, losses=1, points=4, margin=4, score_for=2,
        score_against=-2, breaches=3, breaches_taken=2, par_fails=1, illegal_tests=3,
        tests_fired=13, fallbacks=3, fallback_causes={"late": 2, "malformed": 1}, void=1),
    row("c", 1, matches=2, wins=1, draws=1, points=4, margin=4, score_for=2, score_against=-2,
        breaches=3, par_fails=1, illegal_tests=1, tests_fired=9, fallbacks=2,
        fallback_causes={"crash": 1, "late": 1}),
    row("b", 3, matches=3, wins=1, losses=2, points=3, margin=-8, score_for=-4, score_against=4,
        breaches=2, breaches_taken=6, par_fails=5, illegal_tests=1, tests_fired=8, fallbacks=1,
        fallback_causes={"late": 1}),
    row("d", None, void=1),
    row("e", None),
]  # fmt: skip
RESULTS = [
    {"match_id": "m1", "names": ["a", "b"], "scores": [3, -3], "winner": "a", "reason": "complete"},
    {"match_id": "m2", "names": ["b", "a"], "scores": [1, -1], "winner": "b", "reason": "complete"},
    {"match_id": "m3", "names": ["a", "c"], "scores": [0, 0], "winner": None, "reason": "complete"},
    {"match_id": "m4", "names": ["c", "b"], "scores": [2, -2], "winner": "c", "reason": "complete"},
]


def test_a_night_tallied_by_hand():
    records = NightRecords("n", list(reversed(PLAYED)), list(VOID), [], MANIFEST, PLAN)
    doc = compute(records)
    assert (doc["format"], doc["format_version"], doc["night"]) == ("cogolf-standings", 4, "n")
    game = doc["games"]["cogolf"]
    assert game["table"] == TABLE
    assert game["results"] == RESULTS
    assert game["void"] == [{"match_id": "m5", "names": ["a", "d"], "cause": "boom"}]
    # The plan is the schedule (m6 in it, not m7); the void m5 is done, not unplayed.
    assert game["matches"] == {"scheduled": 6, "played": 4, "void": 1, "unplayed": ["m6"]}
    assert game["plan"] == {"revision": 2, "matches": 6}
    assert game["points"] == {"win": 3, "draw": 1, "loss": 0}
    ratings = game["ratings"]
    assert ratings["unrated"] == ["d", "e"]
    assert [r["name"] for r in ratings["entrants"]] == ["c", "a", "b"]
    # The manifest's anchor, not the default.
    assert (ratings["anchor"], ratings["centre"]) == ("b", "anchor")
    assert {r["name"]: r["rating"] for r in ratings["entrants"]}["b"] == 1000.0
    assert ratings["interval"] == bt.INTERVAL == 0.95
    assert ratings["interval_method"] == (
        "profile likelihood of the difference to the centre (chi-squared, 1 df)"
    )
    assert ratings["model"] == (
        "Bradley-Terry, margin-aware outcome (draw 0.5, win 0.75..1.0 at a margin of 9+), "
        "one virtual draw per entrant, Elo scale"
    )
    combined = doc["combined"]
    assert [(r["rank"], r["entrant"]) for r in combined["table"]] == [(1, "a"), (1, "c"), (3, "b")]
    assert [r["entrant"] for r in combined["incomplete"]] == ["d", "e"]
    # Without the plan the manifest's list is the schedule.
    bare = compute(NightRecords("n", list(PLAYED), list(VOID), [], MANIFEST, None))
    matches = bare["games"]["cogolf"]["matches"]
    assert matches == {"scheduled": 6, "played": 4, "void": 1, "unplayed": ["m7"]}
    assert bare["games"]["cogolf"]["plan"] is None
    # Without either, nothing is scheduled, and the default anchor (absent here) gives the mean.
    none = compute(NightRecords("n", list(PLAYED), list(VOID)))["games"]["cogolf"]
    assert none["matches"] == {"scheduled": None, "played": 4, "void": 1, "unplayed": []}
    assert (none["ratings"]["anchor"], none["ratings"]["centre"]) == (None, "mean")


def test_the_mini_league_counts_only_games_among_the_tied():
    games = [
        played("g0", ("p", "r"), (3, -3)),  # not among the group: skipped, not the end
        played("g1", ("p", "q"), (2, -2)),
        played("g2", ("q", "p"), (1, -1)),
        played("g3", ("p", "q"), (0, 0)),
        played("g4", ("q", "p"), (0, 0)),
        played("g5", ("p", "q"), (4, -4)),
    ]
    # p: wins g1 and g5 (3 + 3), draws twice (1 + 1); score differences 4 - 2 + 0 + 0 + 8.
    assert _mini_league(["p", "q"], games) == {"p": (8, 10), "q": (5, -10)}
    assert _mini_league(["p"], games) == {"p": (0, 0)}


def test_head_to_head_points_come_before_head_to_head_margin():
    """x, y and z finish on 4 points. Among themselves z has 4 points, x 3, y 1, but by
    head-to-head margin y (-1) is ahead of x (-4), and by total margin y (+1) too."""
    games = [
        played("g1", ("x", "o2"), (0, 0)),  # outside the group, and first
        played("g2", ("x", "y"), (1, -1)),
        played("g3", ("x", "z"), (-5, 5)),
        played("g4", ("z", "y"), (0, 0)),
        played("g5", ("y", "o1"), (2, -2)),
    ]
    table = compute(NightRecords("t", games))["games"]["cogolf"]["table"]
    assert [(r["rank"], r["name"], r["points"]) for r in table] == [
        (1, "z", 4), (2, "x", 4), (3, "y", 4), (4, "o2", 1), (5, "o1", 0),
    ]  # fmt: skip


def test_rounding_to_a_tenth_never_gives_minus_zero():
    for x in (-0.04, -0.0, 0.04):
        assert _round(x) == 0.0 and math.copysign(1.0, _round(x)) == 1.0
    assert _round(1234.56) == 1234.6 and _round(-12.34) == -12.3


def test_json_is_sorted_indented_by_two_and_utf8():
    got = to_json({"b": [1], "a": "é"})
    assert got == '{\n  "a": "é",\n  "b": [\n    1\n  ]\n}\n'.encode()


def test_entrants_found_only_in_a_solo_games_rows_are_in_the_combined_table(tmp_path: Path):
    """No manifest and no matches: beta is only in golf's combined rows (one course of two)
    and delta only in Commit-0's table rows (one task of two); neither has a key."""
    for r in (
        SoloResult("golf", "alpha", "python", 31.0),
        SoloResult("golf", "alpha", "racket", 20.0),
        SoloResult("golf", "beta", "python", 40.0),
        SoloResult("commit0", "gamma", "textkit", 3),
        SoloResult("commit0", "gamma", "cachetools", 5),
        SoloResult("commit0", "delta", "textkit", 4),
    ):
        write_solo(tmp_path, "n", r)
    doc = compute(NightRecords("n"), solo=read_results(tmp_path, "n"))
    assert doc["combined"]["table"] == []
    assert [(r["entrant"], r["has"]) for r in doc["combined"]["incomplete"]] == [
        ("alpha", ["golf"]), ("gamma", ["commit0"]), ("beta", []), ("delta", []),
    ]  # fmt: skip


def test_intervals_that_touch_after_rounding_overlap():
    """up's 95% lower bound against the anchor is 999.97: shown as 1000.0, it touches the
    anchor's own 1000.0-1000.0, and touching is overlapping, both ways round."""
    halves = [0] * 7 + [1, 4] + [5] * 6  # half of each match's margin
    games = [played(f"t-{i:02}", ("up", "literalist"), (h, -h)) for i, h in enumerate(halves)]
    ratings = compute(NightRecords("t", games))["games"]["cogolf"]["ratings"]
    rows = {r["name"]: r for r in ratings["entrants"]}
    assert (rows["up"]["low"], rows["up"]["rating"], rows["up"]["high"]) == (
        1000.0, 1184.6, 1405.5,
    )  # fmt: skip
    assert rows["literalist"]["low"] == rows["literalist"]["high"] == 1000.0
    assert rows["up"]["tied_with"] == ["literalist"]
    assert rows["literalist"]["tied_with"] == ["up"]
    assert rows["up"]["rank"] == rows["literalist"]["rank"] == 1
