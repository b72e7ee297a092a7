"""Bradley–Terry: the fit is the maximum, anchored, finite, and responds to margins."""

from __future__ import annotations

import math
import random

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
    rated = bt.rate(3, games, anchor=1)
    assert rated[1].rating == 1000.0
    assert rated[0].rating > rated[1].rating > rated[2].rating
    assert rated[1].low == rated[1].high == 1000.0  # the anchor is the reference, not a guess


def test_a_perfect_record_stays_finite_and_bigger_margins_rate_higher():
    narrow = bt.rate(2, [bt.Game(0, 1, 1)] * 5, anchor=1)
    wide = bt.rate(2, [bt.Game(0, 1, 9)] * 5, anchor=1)
    assert all(math.isfinite(x) for x in (wide[0].rating, wide[0].low, wide[0].high))
    assert 1000.0 < narrow[0].rating < wide[0].rating


def test_intervals_are_deterministic():
    games = [bt.Game(0, 1, 2), bt.Game(1, 0, 1), bt.Game(2, 0, -4), bt.Game(1, 2, 0)]
    assert bt.rate(3, games, 0) == bt.rate(3, games, 0)
    assert bt.rate(3, games, None) == bt.rate(3, games, None)


def test_no_games_gives_everyone_the_anchor_rating():
    assert [r.rating for r in bt.rate(3, [], None)] == [1000.0] * 3


def width(r: bt.Rating) -> float:
    return r.high - r.low


def test_two_identical_results_give_a_wide_interval_and_more_matches_narrow_it():
    """The night page once showed 731-731: a bootstrap of two identical matches resamples
    the same result every time. Two matches say little, and the interval says so."""
    two = bt.rate(2, [bt.Game(0, 1, 1)] * 2, anchor=1)[0]
    assert two.low < 1000.0 < two.rating < two.high  # not even better than the anchor
    assert two.rating - two.low > 400 and two.high - two.rating > 400
    widths = [width(bt.rate(2, [bt.Game(0, 1, 1)] * k, anchor=1)[0]) for k in (2, 4, 8, 16, 64)]
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0] / 3
    # The same without an anchor (centred on the mean): wide, and narrowing.
    mean = [bt.rate(2, [bt.Game(0, 1, 0)] * k, None)[0] for k in (2, 32)]
    assert mean[0].rating == 1000.0 and width(mean[0]) > 400 and width(mean[1]) < width(mean[0]) / 2


def profile(delta: float, games: list[bt.Game]) -> float:
    """The penalised log-likelihood of two entrants at difference `delta`, maximised over
    the second's strength by golden-section search: independent of the module's Newton."""

    def loglik(t1: float) -> float:
        t0 = t1 + delta
        total = sum(bt.PRIOR_GAMES * (0.5 * t - math.log1p(math.exp(t))) for t in (t0, t1))
        for g in games:
            d = t0 - t1 if g.a == 0 else t1 - t0
            total += bt.outcome(g.margin) * d - math.log1p(math.exp(d))
        return total

    lo, hi = -20.0, 20.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        lo, hi = (lo, x2) if loglik(x1) > loglik(x2) else (x1, hi)
    return loglik((lo + hi) / 2)


def test_the_bounds_are_where_the_profile_likelihood_drops_by_the_chi_squared_cut():
    games = [bt.Game(0, 1, 9), bt.Game(1, 0, -3), bt.Game(0, 1, -1)]
    r = bt.rate(2, games, anchor=1)[0]
    assert abs(bt.CUT - 3.841458820694124) < 1e-12  # chi-squared, 1 df, 95%
    to_theta = 1 / bt.ELO_SCALE
    best = profile((r.rating - 1000.0) * to_theta, games)
    for bound in (r.low, r.high):
        drop = 2 * (best - profile((bound - 1000.0) * to_theta, games))
        assert abs(drop - bt.CUT) < 1e-5
    assert r.high - r.rating > r.rating - r.low  # skewed where the evidence is one-sided


def test_min_matches_is_the_fewest_a_clean_sweep_needs_to_clear_the_anchor():
    """Pins the "too few matches" rule: with MIN_MATCHES - 1 matches not even a sweep of
    blow-outs against the anchor sets an entrant apart from it; with MIN_MATCHES it does."""
    below = bt.rate(2, [bt.Game(0, 1, bt.MARGIN_CAP)] * (bt.MIN_MATCHES - 1), anchor=1)[0]
    at = bt.rate(2, [bt.Game(0, 1, bt.MARGIN_CAP)] * bt.MIN_MATCHES, anchor=1)[0]
    assert below.low < 1000.0 < at.low


@settings(max_examples=40, deadline=None)
@given(games_strategy, st.booleans())
def test_every_interval_holds_its_rating_and_is_finite(
    case: tuple[int, list[bt.Game]], anchored: bool
):
    n, games = case
    for r in bt.rate(n, games, 0 if anchored else None):
        assert all(math.isfinite(x) for x in (r.low, r.rating, r.high))
        assert r.low <= r.rating <= r.high
        assert r.high - r.low < 4000  # the virtual draws keep every bound finite


def test_95_percent_intervals_hold_the_true_difference_about_95_percent_of_the_time():
    """Four entrants of known strength play 100 seeded nights of two double round robins
    (a win is a full point, as the Bradley-Terry model has it): the intervals should hold
    each true difference to the anchor in about 95% of the 300 cases."""
    rng = random.Random(7)
    true = (1000, 1100, 900, 1250)
    hit = total = 0
    for _ in range(100):
        games = []
        for a, b in [(a, b) for a in range(4) for b in range(4) if a != b] * 2:
            p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
            games.append(bt.Game(a, b, bt.MARGIN_CAP if rng.random() < p else -bt.MARGIN_CAP))
        for i, r in enumerate(bt.rate(4, games, 0)[1:], start=1):
            total += 1
            hit += r.low <= true[i] <= r.high
    assert 0.92 <= hit / total <= 0.98, hit / total
