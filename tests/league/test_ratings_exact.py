"""Bradley–Terry to the last digits: each piece against an independent formula.

Two entrants have a closed form: the virtual draws are symmetric, so at a fixed
difference d the profile likelihood puts them at +d/2 and -d/2, and the fit, both
bounds and the mean-centred ratings follow from one-dimensional bisections on it.
The linear algebra is checked on a dense 3x3 factor, the information and the
covariance against the likelihood's second derivatives written out by hand.
"""

from __future__ import annotations

import math

from cogolf.league import ratings as bt


def softplus(x: float) -> float:
    """log(1 + e^x), stable at both ends (written apart from the module's)."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def logistic(x: float) -> float:
    return math.exp(-softplus(-x))


def share(games: list[bt.Game]) -> float:
    """Entrant 0's total outcome against entrant 1."""
    return sum(bt.outcome(g.margin) if g.a == 0 else 1.0 - bt.outcome(g.margin) for g in games)


def profile(d: float, games: list[bt.Game]) -> float:
    """The penalised log-likelihood of two entrants at difference d = theta0 - theta1,
    maximised over the rest: at theta = (d/2, -d/2), where the virtual draws balance."""
    prior = -bt.PRIOR_GAMES * (softplus(d / 2) + softplus(-d / 2))
    return prior + share(games) * d - len(games) * softplus(d)


def profile_slope(d: float, games: list[bt.Game]) -> float:
    prior = -bt.PRIOR_GAMES * (logistic(d / 2) - logistic(-d / 2)) / 2
    return prior + share(games) - len(games) * logistic(d)


def bisect(f, lo: float, hi: float) -> float:  # type: ignore[no-untyped-def]
    """The root of an increasing or decreasing f between lo and hi, to the last bit."""
    up = f(hi) > f(lo)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if (f(mid) < 0) == up else (lo, mid)
    return (lo + hi) / 2


def exact(games: list[bt.Game]) -> tuple[float, float, float]:
    """The fitted difference theta0 - theta1 and its 95% profile bounds."""
    centre = bisect(lambda d: profile_slope(d, games), -60.0, 60.0)
    best = profile(centre, games)

    def drop(d: float) -> float:
        return 2 * (best - profile(d, games)) - bt.CUT

    return centre, bisect(drop, centre - 60.0, centre), bisect(drop, centre, centre + 60.0)


CASES = {
    "mixed": [bt.Game(0, 1, 9), bt.Game(1, 0, -3), bt.Game(0, 1, -1)],
    "sweep": [bt.Game(0, 1, bt.MARGIN_CAP)] * 5,
    "narrow": [bt.Game(0, 1, 0)] * 40,
    "many": [bt.Game(0, 1, 2), bt.Game(1, 0, 1), bt.Game(0, 1, -4)] * 15,
    "two": [bt.Game(1, 0, 1)] * 2,
}
TIGHT = 1e-9  # in log-strength; the root finder stops at 1e-7 and Newton squares that


def test_the_fit_of_two_entrants_is_the_closed_form_maximum():
    for games in CASES.values():
        centre, _, _ = exact(games)
        theta = bt.fit(2, games)
        assert abs(theta[0] - centre / 2) < TIGHT and abs(theta[1] + centre / 2) < TIGHT


def test_anchored_bounds_match_the_closed_form_profile():
    for name, games in CASES.items():
        centre, low, high = exact(games)
        for i, anchor, sign in ((0, 1, 1.0), (1, 0, -1.0)):
            r = bt.rate(2, games, anchor)[i]
            lo, hi = sorted((sign * low, sign * high))
            got = [(x - bt.ANCHOR_RATING) / bt.ELO_SCALE for x in (r.rating, r.low, r.high)]
            assert abs(got[0] - sign * centre) < TIGHT, name
            assert abs(got[1] - lo) < TIGHT, (name, i, got[1] - lo)
            assert abs(got[2] - hi) < TIGHT, (name, i, got[2] - hi)
            anchor_row = bt.rate(2, games, anchor)[anchor]
            assert anchor_row == bt.Rating(1000.0, 1000.0, 1000.0)


def test_mean_centred_bounds_are_half_the_difference_and_mirror_each_other():
    for name, games in CASES.items():
        centre, low, high = exact(games)
        first, second = bt.rate(2, games, None)
        expected = {
            0: (centre / 2, low / 2, high / 2),
            1: (-centre / 2, -high / 2, -low / 2),
        }
        for i, r in enumerate((first, second)):
            got = [(x - bt.ANCHOR_RATING) / bt.ELO_SCALE for x in (r.rating, r.low, r.high)]
            for g, e in zip(got, expected[i], strict=True):
                assert abs(g - e) < TIGHT, (name, i, g - e)


def test_log1pexp_and_sigmoid_hold_at_the_ends_of_the_float_range():
    assert bt._log1pexp(800.0) == 800.0
    assert bt._log1pexp(-800.0) == 0.0
    assert bt._log1pexp(0.0) == math.log(2.0)
    assert abs(bt._log1pexp(30.0) - softplus(30.0)) < 1e-12
    assert bt._sigmoid(800.0) == 1.0 and bt._sigmoid(-800.0) == 0.0
    assert bt._sigmoid(0.0) == 0.5
    # A rating far off (a long sweep) uses both ends and stays finite.
    far = bt.rate(2, [bt.Game(0, 1, bt.MARGIN_CAP)] * 400, anchor=1)[0]
    assert all(math.isfinite(x) for x in (far.low, far.rating, far.high))


def test_tables_skip_self_play_and_orient_each_pair_low_index_first():
    games = [bt.Game(1, 1, 5), bt.Game(2, 0, 3), bt.Game(0, 2, -1), bt.Game(0, 1, 0)]
    tables = bt._tables(3, games)
    assert tables.n == 3
    assert [p[:2] for p in tables.pairs] == [(0, 1), (0, 2)]
    (_, _, won01, n01), (_, _, won02, n02) = tables.pairs
    assert (won01, n01, n02) == (0.5, 1.0, 2.0)
    expected = (1.0 - bt.outcome(3)) + bt.outcome(-1)  # 0's share of the two games with 2
    assert abs(won02 - expected) < 1e-15 and abs(expected - (1 / 6 + 2 / 9)) < 1e-15


L3 = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 1.5]]


def product(low: list[list[float]]) -> list[list[float]]:
    n = len(low)
    return [[sum(low[i][k] * low[j][k] for k in range(n)) for j in range(n)] for i in range(n)]


def test_cholesky_returns_the_lower_factor_with_zeros_above():
    got = bt._cholesky(product(L3))
    for i in range(3):
        for j in range(3):
            assert abs(got[i][j] - L3[i][j]) < 1e-12, (i, j)


def test_solve_inverts_the_factored_matrix():
    matrix = product(L3)
    x = [1.5, -2.0, 0.25]
    rhs = [sum(matrix[i][k] * x[k] for k in range(3)) for i in range(3)]
    got = bt._solve(L3, rhs)
    assert max(abs(g - e) for g, e in zip(got, x, strict=True)) < 1e-12


def information(n: int, games: list[bt.Game], theta: list[float]) -> list[list[float]]:
    """Minus the penalised log-likelihood's Hessian, term by term."""
    info = [[0.0] * n for _ in range(n)]
    for i, t in enumerate(theta):
        info[i][i] += bt.PRIOR_GAMES * logistic(t) * logistic(-t)
    for g in games:
        if g.a == g.b:
            continue
        w = logistic(theta[g.a] - theta[g.b]) * logistic(theta[g.b] - theta[g.a])
        info[g.a][g.a] += w
        info[g.b][g.b] += w
        info[g.a][g.b] -= w
        info[g.b][g.a] -= w
    return info


GAMES3 = [bt.Game(0, 1, 2), bt.Game(2, 1, 5), bt.Game(0, 2, -1), bt.Game(1, 0, 0), bt.Game(2, 0, 9)]
THETA3 = [0.4, -1.1, 0.3]


def test_slope_gives_the_gradient_and_the_information():
    grad, info = bt._slope(THETA3, bt._tables(3, GAMES3))
    expected = [bt.PRIOR_GAMES * (0.5 - logistic(t)) for t in THETA3]
    for g in GAMES3:
        y = bt.outcome(g.margin) - logistic(THETA3[g.a] - THETA3[g.b])
        expected[g.a] += y
        expected[g.b] -= y
    assert max(abs(a - b) for a, b in zip(grad, expected, strict=True)) < 1e-12
    want = information(3, GAMES3, THETA3)
    for i in range(3):
        for j in range(3):
            assert abs(info[i][j] - want[i][j]) < 1e-12, (i, j)


def test_covariance_is_the_inverse_of_the_information():
    cov = bt.covariance(3, GAMES3, THETA3)
    info = information(3, GAMES3, THETA3)
    for i in range(3):
        for j in range(3):
            unit = sum(cov[i][k] * info[k][j] for k in range(3))
            assert abs(unit - float(i == j)) < 1e-12, (i, j)
    # Two entrants: the 2x2 inverse by hand.
    games = CASES["mixed"]
    theta = [0.2, -0.5]
    (a, b), (_, d) = information(2, games, theta)
    det = a * d - b * b
    want = [[d / det, -b / det], [-b / det, a / det]]
    got = bt.covariance(2, games, theta)
    assert all(abs(got[i][j] - want[i][j]) < 1e-12 for i in range(2) for j in range(2))


def test_fit_from_an_earlier_fit_reaches_the_same_maximum():
    earlier = [g for g in GAMES3 if 2 not in (g.a, g.b)]
    start = bt.fit(2, earlier)
    full = bt.fit(3, GAMES3)
    for got in (
        bt.fit_from(3, GAMES3, start),  # a newcomer starts at zero
        bt.fit_from(3, GAMES3, None),
        bt.fit_from(3, GAMES3, [*full, 5.0]),  # a longer start is cut to n
    ):
        assert len(got) == 3
        assert max(abs(a - b) for a, b in zip(got, full, strict=True)) < TIGHT
    assert bt.fit_from(2, [], None) == [0.0, 0.0]
    assert bt.fit_from(1, [], [0.0]) == [0.0]
    centre, _, _ = exact(CASES["sweep"])
    two = bt.fit_from(2, CASES["sweep"], [1.0])
    assert abs(two[0] - centre / 2) < TIGHT and abs(two[1] + centre / 2) < TIGHT


def test_with_no_games_the_zero_start_is_already_the_maximum():
    # The virtual draws alone are maximised at theta = 0: nothing moves, to the bit.
    assert bt.fit(3, []) == [0.0, 0.0, 0.0]
    assert bt.fit_from(3, [], [0.0]) == [0.0, 0.0, 0.0]
