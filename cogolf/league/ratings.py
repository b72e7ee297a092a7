"""Bradley–Terry ratings fitted on all matches of a night at once, with likelihood intervals.

Each match gives seat A an outcome in [0, 1]: a draw is 0.5, a win at least
`WIN_FLOOR` and a win by `MARGIN_CAP` points or more a full 1.0 (a loss is the
mirror), so the model sees both who won and by how much, and one blow-out cannot
outweigh many narrow results. Strengths are fitted by Newton's method on the
log-likelihood plus one virtual draw of every entrant against a fixed reference
player: that keeps an entrant that won (or lost) everything finite, and makes
the problem strictly concave so the fit is unique. Ratings are on the Elo scale
(400 points = 10:1 odds) and shifted so that the anchor entrant is 1000.

An entrant's 95% interval is the profile-likelihood interval of its difference
to the anchor (or to the mean): every difference the penalised likelihood,
maximised over everyone else's strength, finds no less likely than the fit by
more than the chi-squared cut. The virtual draws keep it finite, two matches
leave it wide, and it is asymmetric where the evidence is (a clean sweep pins
the lower end, not the upper). Resampling the matches (a bootstrap) would not
do: it sees only the results played, so two identical results come out certain.
It is deterministic arithmetic: the same games in the same (canonical) order
always give the same bounds.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

MARGIN_CAP = 9  # one hole's largest swing: 5 breaches plus 4 par fails
WIN_FLOOR = 0.75
PRIOR_GAMES = 1.0
ANCHOR_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)
INTERVAL = 0.95
# Under this many scored matches an entrant's interval is shown as "too few matches": it
# is the fewest for which even a clean sweep of blow-outs against the anchor gives an
# interval that excludes the anchor (3 such wins leave 953-2343 around 1407; 4 give
# 1015-2372), so with fewer no result at all could set an entrant apart.
MIN_MATCHES = 4
# Twice the log-likelihood drop that bounds the interval: chi-squared, 1 degree of freedom.
CUT = NormalDist().inv_cdf(0.5 + INTERVAL / 2.0) ** 2
MAX_NEWTON_STEPS = 100
MAX_ROOT_STEPS = 100
TOLERANCE = 1e-10
ROOT_TOLERANCE = 1e-7  # in log-strength: 2e-5 Elo, far below the 0.1 shown


@dataclass(frozen=True)
class Game:
    a: int
    b: int
    margin: int  # a's score minus b's


@dataclass(frozen=True)
class Rating:
    rating: float
    low: float
    high: float


def outcome(margin: int) -> float:
    """A's share of a match won (or lost) by `margin` points."""
    if margin == 0:
        return 0.5
    share = WIN_FLOOR + (1.0 - WIN_FLOOR) * min(abs(margin), MARGIN_CAP) / MARGIN_CAP
    return share if margin > 0 else 1.0 - share


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log1pexp(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


@dataclass(frozen=True)
class Tables:
    """The games as the likelihood sees them: each pair that met, once (i < j), with i's
    total share and the number of games."""

    n: int
    pairs: tuple[tuple[int, int, float, float], ...]  # (i, j, i's share, games)


def _tables(n: int, games: Sequence[Game]) -> Tables:
    won: dict[tuple[int, int], float] = {}
    count: dict[tuple[int, int], float] = {}
    for g in games:
        if g.a == g.b:
            continue  # no information, and no pair
        y = outcome(g.margin)
        i, j, y = (g.a, g.b, y) if g.a < g.b else (g.b, g.a, 1.0 - y)
        won[(i, j)] = won.get((i, j), 0.0) + y
        count[(i, j)] = count.get((i, j), 0.0) + 1.0
    return Tables(n, tuple((i, j, won[(i, j)], count[(i, j)]) for i, j in sorted(count)))


def _loglik(theta: Sequence[float], tables: Tables) -> float:
    total = sum(PRIOR_GAMES * (0.5 * t - _log1pexp(t)) for t in theta)
    for i, j, won, count in tables.pairs:
        d = theta[i] - theta[j]
        total += won * d - count * _log1pexp(d)
    return total


def _slope(theta: Sequence[float], tables: Tables) -> tuple[list[float], list[list[float]]]:
    """The gradient and the information matrix (the negated Hessian) at `theta`."""
    n = tables.n
    grad = [0.0] * n
    info = [[0.0] * n for _ in range(n)]
    for i in range(n):
        p = _sigmoid(theta[i])
        grad[i] = PRIOR_GAMES * (0.5 - p)
        info[i][i] = PRIOR_GAMES * p * (1.0 - p)
    for i, j, won, count in tables.pairs:
        s = _sigmoid(theta[i] - theta[j])
        g = won - count * s
        grad[i] += g
        grad[j] -= g
        w = count * s * (1.0 - s)
        info[i][i] += w
        info[j][j] += w
        info[i][j] -= w
        info[j][i] -= w
    return grad, info


def _cholesky(matrix: list[list[float]]) -> list[list[float]]:
    """The lower factor of a symmetric positive definite matrix."""
    n = len(matrix)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        row, given = low[i], matrix[i]
        for j in range(i + 1):
            other = low[j]
            s = given[j] - sum(map(operator.mul, row[:j], other[:j]))
            row[j] = math.sqrt(s) if i == j else s / other[j]
    return low


def _solve(low: list[list[float]], rhs: Sequence[float]) -> list[float]:
    """x with (low low^T) x = rhs."""
    n = len(rhs)
    y = [0.0] * n
    for i in range(n):
        y[i] = (rhs[i] - sum(map(operator.mul, low[i][:i], y[:i]))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(map(operator.mul, a, b))


def _maximise(
    theta: list[float], tables: Tables, along: Sequence[float] | None = None
) -> tuple[list[float], float]:
    """Newton's method from `theta`; with `along` (c), only moves keeping c.theta fixed."""
    current = _loglik(theta, tables)
    for _ in range(MAX_NEWTON_STEPS):
        grad, info = _slope(theta, tables)
        low = _cholesky(info)
        step = _solve(low, grad)
        if along is not None:
            # The Newton step projected onto c.step = 0, in the metric of the information.
            towards = _solve(low, along)
            nu = _dot(along, step) / _dot(along, towards)
            step = [s - nu * t for s, t in zip(step, towards, strict=True)]
        scale = 1.0
        while True:
            trial = [t + scale * d for t, d in zip(theta, step, strict=True)]
            value = _loglik(trial, tables)
            if value >= current or scale < 1e-6:
                break
            scale /= 2.0
        theta, current = trial, value
        if max(abs(scale * d) for d in step) < TOLERANCE:
            break
    return theta, current


def fit(n: int, games: Sequence[Game]) -> list[float]:
    """Log-strengths maximising the penalised Bradley–Terry likelihood."""
    return _maximise([0.0] * n, _tables(n, games))[0]


def _bound(theta: list[float], best: float, tables: Tables, c: list[float], side: float) -> float:
    """The difference c.theta on `side` (+1 or -1) where the profile likelihood has fallen
    by CUT / 2 from `best`. The drop is convex in the distance from the fit, so Newton's
    method on it, kept inside a bracket, converges."""
    cc = _dot(c, c)
    centre = _dot(c, theta)
    _, info = _slope(theta, tables)
    spread = math.sqrt(_dot(c, _solve(_cholesky(info), c)))  # the curvature's standard error
    near, far = 0.0, math.inf  # distances with the drop below and above the cut
    distance, start = math.sqrt(CUT) * spread, theta
    for _ in range(MAX_ROOT_STEPS):
        delta = centre + side * distance
        shift = (delta - _dot(c, start)) / cc
        at, value = _maximise([t + shift * x for t, x in zip(start, c, strict=True)], tables, c)
        drop = 2.0 * (best - value) - CUT
        if abs(drop) < 1e-12:
            return delta
        if drop < 0:
            near, start = distance, at
        else:
            far = distance
        # d(profile)/d(difference) is the gradient's component along c; the drop falls
        # twice as fast, and distance runs along `side`.
        rise = -2.0 * side * _dot(c, _slope(at, tables)[0]) / cc
        step = drop / rise if rise > 0 else math.inf
        nxt = distance - step
        if not near < nxt < far:
            nxt = 2.0 * distance if far == math.inf else (near + far) / 2.0
        if abs(nxt - distance) < ROOT_TOLERANCE:
            return centre + side * nxt
        distance = nxt
    return centre + side * distance


def rate(n: int, games: Sequence[Game], anchor: int | None) -> list[Rating]:
    """Ratings and profile-likelihood intervals for entrants 0..n-1, relative to the anchor
    (or, without one, to the mean rating, which is then 1000). `games` in a canonical
    order (by match id) give the same bounds to the last bit."""
    tables = _tables(n, games)
    theta, best = _maximise([0.0] * n, tables)  # the fit
    out = []
    for i in range(n):
        if anchor is not None:
            c = [(k == i) - (k == anchor) for k in range(n)]
        else:
            c = [(k == i) - 1.0 / n for k in range(n)]
        centre = _dot(c, theta)
        if not any(c):  # the anchor itself, or a lone entrant: 1000 by definition
            low = high = centre
        else:
            low, high = (_bound(theta, best, tables, [float(x) for x in c], s) for s in (-1, 1))
        out.append(Rating(*(ANCHOR_RATING + ELO_SCALE * v for v in (centre, low, high))))
    return out


def fit_from(n: int, games: Sequence[Game], start: Sequence[float] | None = None) -> list[float]:
    """`fit`, started from `start` (an earlier fit, extended with zeros for newcomers): after
    one more game the optimum has barely moved, so Newton's method needs a step or two."""
    theta = list(start or ()) + [0.0] * max(0, n - len(start or ()))
    return _maximise(theta[:n], _tables(n, games))[0]


def covariance(n: int, games: Sequence[Game], theta: Sequence[float]) -> list[list[float]]:
    """The inverse of the penalised likelihood's information at `theta`: the Laplace
    approximation of the strengths' covariance (what the profile intervals refine), cheap
    enough to recompute after every game."""
    low = _cholesky(_slope(list(theta), _tables(n, games))[1])
    columns = [_solve(low, [float(k == i) for k in range(n)]) for i in range(n)]
    return [[columns[j][i] for j in range(n)] for i in range(n)]
