"""The circle-method schedule, seeds and match ids."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cogolf.league.night import Entrant, parse_night
from cogolf.league.schedule import (
    circle_rounds,
    double_round_robin,
    match_id,
    match_seed,
    schedule,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "league" / "example.toml"


@given(st.integers(2, 32))
def test_every_pair_meets_once_per_leg_and_nobody_plays_twice_in_a_round(n: int):
    rounds = circle_rounds(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    seen = set()
    for pairs in rounds:
        players = [p for pair in pairs for p in pair]
        assert len(players) == len(set(players))
        assert len(pairs) == n // 2
        for a, b in pairs:
            key = frozenset((a, b))
            assert a != b and key not in seen
            seen.add(key)
    assert len(seen) == n * (n - 1) // 2


@given(st.integers(2, 32))
def test_double_round_robin_plays_every_ordered_pair_once(n: int):
    ordered = [pair for pairs in double_round_robin(n) for pair in pairs]
    assert len(ordered) == n * (n - 1)
    assert set(ordered) == {(a, b) for a in range(n) for b in range(n) if a != b}


@given(st.integers(2, 32))
def test_first_leg_seats_are_balanced(n: int):
    firsts = [0] * n
    for pairs in circle_rounds(n):
        for a, _ in pairs:
            firsts[a] += 1
    assert max(firsts) - min(firsts) <= 1 + (n > 3)


def test_example_night_has_twelve_matches_mirrored_on_the_same_seed():
    night = parse_night(EXAMPLE)
    jobs = schedule(night, "sha256:x")
    assert len(jobs) == 12
    assert len({j.match_id for j in jobs}) == 12
    by_pair = {j.names: j for j in jobs}
    for (a, b), job in by_pair.items():
        mirror = by_pair[(b, a)]
        assert job.seed == mirror.seed
        assert job.match_id != mirror.match_id
        assert job.round != mirror.round
    assert [j.round for j in jobs] == sorted(j.round for j in jobs)
    assert max(j.round for j in jobs) == 6


def test_seeds_and_ids_depend_only_on_night_seed_and_names():
    night = parse_night(EXAMPLE)
    jobs = {j.match_id: j.seed for j in schedule(night, "d")}
    bigger = replace(
        night,
        entrants=(*reversed(night.entrants), Entrant("newcomer", "pedant", None, 0)),
    )
    again = {j.match_id: j.seed for j in schedule(bigger, "d")}
    assert all(again[mid] == seed for mid, seed in jobs.items())
    other_night = {j.match_id: j.seed for j in schedule(replace(night, seed=night.seed + 1), "d")}
    assert all(other_night[mid] != seed for mid, seed in jobs.items())
    assert match_seed(7, "a", "b") == match_seed(7, "b", "a") != match_seed(7, "a", "c")
    assert 0 <= match_seed(2**63 - 1, "x", "y") < 2**63
    assert match_id("n", "a", "b") == "n-a-vs-b"
