"""Bradley–Terry: the fit is the maximum, anchored, finite, and responds to margins."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from cogolf.league import ratings as bt


def gradient(n: int, games: list[bt.Game], theta: list[float]) -> list[float]:
    """The penalised log-likelihood's gradient, written out independently of the fit."""
    g = [bt.PRIOR_GAMES * (0.5 - 1 / (1 + math.exp(-t))) for t in theta]
    for game in games:
        p = 1 / (1 + math.exp(theta[game.b] - theta[game.a]))
        y = bt.outcome(game.margin)
        g[game.a] += y - p
        g[game.b] -= y - p
    return g


games_strategy = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(-30, 30))
            .filter(lambda t: t[0] != t[1])
            .map(lambda t: bt.Game(*t)),
            max_size=30,
        ),
    )
)


@settings(max_examples=60, deadline=None)
@given(games_strategy)
def test_the_fit_is_a_stationary_point(case: tuple[int, list[bt.Game]]):
    n, games = case
    theta = bt.fit(n, games)
    assert all(math.isfinite(t) for t in theta)
    assert max(abs(x) for x in gradient(n, games, theta)) < 1e-6


def test_outcome_is_margin_aware_and_symmetric():
    assert bt.outcome(0) == 0.5
    assert bt.outcome(1) == bt.WIN_FLOOR + (1 - bt.WIN_FLOOR) / bt.MARGIN_CAP
    assert bt.outcome(bt.MARGIN_CAP) == 1.0 == bt.outcome(100)
    for d in range(1, 20):
        assert bt.outcome(-d) == 1.0 - bt.outcome(d)
        assert bt.outcome(d) >= bt.outcome(d - 1)


def test_anchor_is_1000_and_order_follows_results():
    games = [bt.Game(0, 1, 3), bt.Game(1, 2, 3), bt.Game(0, 2, 3)] * 3
    rated = bt.rate(3, games, anchor=1, samples=50)
    assert rated[1].rating == 1000.0
    assert rated[0].rating > rated[1].rating > rated[2].rating
    assert rated[1].low == rated[1].high == 1000.0


def test_a_perfect_record_stays_finite_and_bigger_margins_rate_higher():
    narrow = bt.rate(2, [bt.Game(0, 1, 1)] * 5, anchor=1, samples=10)
    wide = bt.rate(2, [bt.Game(0, 1, 9)] * 5, anchor=1, samples=10)
    assert math.isfinite(wide[0].rating)
    assert 1000.0 < narrow[0].rating < wide[0].rating


def test_bootstrap_is_deterministic():
    games = [bt.Game(0, 1, 2), bt.Game(1, 0, 1), bt.Game(2, 0, -4), bt.Game(1, 2, 0)]
    assert bt.rate(3, games, 0) == bt.rate(3, games, 0)
    assert bt.rate(3, games, 0) != bt.rate(3, games, 0, seed=bt.BOOTSTRAP_SEED + 1)


def test_no_games_gives_everyone_the_anchor_rating():
    assert [r.rating for r in bt.rate(3, [], None)] == [1000.0] * 3
