"""The pairing core: what it prefers, the farming cap (bound pinned), owners, capacity;
and `cogolf bench ladder`, which measures it."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from cogolf.league.pairing import FARM_SHARE, FARM_WINDOW, Candidate, belief, farmed, gain, pick
from cogolf.league.ratings import Game, covariance, fit, fit_from


def test_covariance_inverts_the_information_and_a_warm_fit_is_the_fit() -> None:
    rng = random.Random(3)
    games = [Game(*rng.sample(range(5), 2), rng.randint(-9, 9)) for _ in range(40)]
    theta = fit(5, games)
    warm = fit_from(5, games, [t + 0.3 for t in theta[:4]])  # a newcomer starts at 0
    assert max(abs(a - b) for a, b in zip(theta, warm, strict=True)) < 1e-8
    cov = covariance(5, games, theta)
    from cogolf.league.ratings import _slope, _tables

    info = _slope(theta, _tables(5, games))[1]
    for i in range(5):
        for j in range(5):
            product = sum(cov[i][k] * info[k][j] for k in range(5))
            assert abs(product - (i == j)) < 1e-9


def test_close_and_unknown_pairs_are_worth_more_than_settled_ones() -> None:
    # 0 beat 1 by a lot many times; 2 and 3 never played; 4 is new.
    games = [Game(0, 1, 9), Game(1, 0, -9)] * 10 + [Game(2, 0, 0), Game(3, 1, 0)]
    b = belief(5, games)
    assert gain(b, 0, 1) < gain(b, 2, 3)
    assert gain(b, 0, 1) < gain(b, 4, 0)
    chosen = pick(b, [Candidate(i) for i in range(5)], [])
    assert (0, 1) not in chosen and len(chosen) == 2


def test_farming_cap_allows_five_of_the_last_ten_and_refuses_the_sixth() -> None:
    assert FARM_WINDOW == 10 and FARM_SHARE == 0.5
    others = [(0, 2), (0, 3), (0, 4), (0, 5)]
    five = [(0, 1)] * 4 + others  # 0 met 1 four times in its last 8
    assert not farmed(five, 0, 1)  # the fifth meeting: allowed
    assert farmed([*five, (0, 1)], 0, 1)  # a sixth: refused
    # only the last ten of each bot's pairings count
    assert farmed([(0, 1)] * 5 + [(0, 2)] * 10, 0, 1)  # all of 1's last ones were with 0
    assert not farmed([(0, 1)] * 5 + [(0, 2), (1, 3)] * 10, 0, 1)
    # two bots alone on the ladder stop after five pairings
    history: list[tuple[int, int]] = []
    b = belief(2, [])
    while chosen := pick(b, [Candidate(0), Candidate(1)], history):
        history += chosen
        assert len(history) < 20
    assert len(history) == 5


def test_owners_never_meet_and_capacity_is_kept() -> None:
    b = belief(4, [])
    chosen = pick(b, [Candidate(0, 1, "ann"), Candidate(1, 1, "ann")], [])
    assert chosen == []
    chosen = pick(
        b, [Candidate(0, 2, "ann"), Candidate(1, 1, "ann"), Candidate(2, 1), Candidate(3, 0)], []
    )
    assert all(3 not in pair for pair in chosen)
    assert (0, 1) not in chosen
    assert chosen in ([(0, 2)], [(1, 2)])  # 2 has room for one pairing
    assert sum(0 in pair for pair in chosen) <= 2 and sum(2 in pair for pair in chosen) <= 1


@pytest.mark.slow
def test_bench_ladder_prints_both_fields_and_the_server_numbers_side_by_side() -> None:
    argv = [sys.executable, "-m", "cogolf", "bench", "ladder", "--entrants", "4"]
    small = ["--trials", "1", "--matches", "2", "--bots", "2", "--holes", "1", "--rounds", "1"]
    done = subprocess.run(
        [*argv, *small, "--json"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [(p["field"], p["entrants"]) for p in doc["pairing"]] == [("narrow", 4), ("wide", 4)]
    for p in doc["pairing"]:
        assert p["round_robin_matches"] == 12
        assert -1.0 <= p["tau_vs_round_robin_at_mark"] <= 1.0
    (run,) = doc["server"]
    assert run["ladder"]["matches"] >= 2 and run["ladder"]["matches_per_second"] > 0
    assert run["bench_server"]["matches_per_second"] > 0
    refused = subprocess.run([*argv[:-1], "2"], capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "--entrants 3..64" in refused.stderr
