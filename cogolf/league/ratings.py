"""Bradley–Terry ratings fitted on all matches of a night at once, with bootstrap intervals.

Each match gives seat A an outcome in [0, 1]: a draw is 0.5, a win at least
`WIN_FLOOR` and a win by `MARGIN_CAP` points or more a full 1.0 (a loss is the
mirror), so the model sees both who won and by how much, and one blow-out cannot
outweigh many narrow results. Strengths are fitted by Newton's method on the
log-likelihood plus one virtual draw of every entrant against a fixed reference
player: that keeps an entrant that won (or lost) everything finite, and makes
the problem strictly concave so the fit is unique. Ratings are on the Elo scale
(400 points = 10:1 odds) and shifted so that the anchor entrant is 1000.

Intervals come from refitting on whole matches resampled with replacement by a
`random.Random` seeded with a constant, over matches sorted by id: the same
replays always give the same intervals, in any reading order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

MARGIN_CAP = 9  # one hole's largest swing: 5 breaches plus 4 par fails
WIN_FLOOR = 0.75
PRIOR_GAMES = 1.0
ANCHOR_RATING = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)
BOOTSTRAP_SAMPLES = 200
BOOTSTRAP_SEED = 20240
INTERVAL = 0.95
MAX_NEWTON_STEPS = 100
TOLERANCE = 1e-10


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


def _tables(n: int, games: Sequence[Game]) -> tuple[list[list[float]], list[list[float]]]:
    """Outcome totals won[i][j] (i's share against j) and game counts per pair."""
    won = [[0.0] * n for _ in range(n)]
    count = [[0.0] * n for _ in range(n)]
    for g in games:
        y = outcome(g.margin)
        won[g.a][g.b] += y
        won[g.b][g.a] += 1.0 - y
        count[g.a][g.b] += 1.0
        count[g.b][g.a] += 1.0
    return won, count


def _loglik(theta: list[float], won: list[list[float]], count: list[list[float]]) -> float:
    n = len(theta)
    total = 0.0
    for i in range(n):
        total += PRIOR_GAMES * (0.5 * theta[i] - _log1pexp(theta[i]))
        for j in range(i + 1, n):
            if count[i][j]:
                d = theta[i] - theta[j]
                # won[i][j] + won[j][i] == count[i][j]
                total += won[i][j] * d - count[i][j] * _log1pexp(d)
    return total


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve a symmetric positive definite system by Cholesky decomposition."""
    n = len(rhs)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = matrix[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            low[i][j] = math.sqrt(s) if i == j else s / low[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (rhs[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def fit(n: int, games: Sequence[Game], start: Sequence[float] | None = None) -> list[float]:
    """Log-strengths maximising the penalised Bradley–Terry likelihood."""
    won, count = _tables(n, games)
    theta = list(start) if start is not None else [0.0] * n
    current = _loglik(theta, won, count)
    for _ in range(MAX_NEWTON_STEPS):
        grad = [0.0] * n
        info = [[0.0] * n for _ in range(n)]  # the negated Hessian
        for i in range(n):
            p = _sigmoid(theta[i])
            grad[i] += PRIOR_GAMES * (0.5 - p)
            info[i][i] += PRIOR_GAMES * p * (1.0 - p)
            for j in range(n):
                if j == i or not count[i][j]:
                    continue
                s = _sigmoid(theta[i] - theta[j])
                grad[i] += won[i][j] - count[i][j] * s
                w = count[i][j] * s * (1.0 - s)
                info[i][i] += w
                info[i][j] -= w
        step = _solve(info, grad)
        scale = 1.0
        while True:
            trial = [t + scale * d for t, d in zip(theta, step, strict=True)]
            value = _loglik(trial, won, count)
            if value >= current or scale < 1e-6:
                break
            scale /= 2.0
        theta, current = trial, value
        if max(abs(scale * d) for d in step) < TOLERANCE:
            break
    return theta


def _anchored(theta: Sequence[float], anchor: int | None) -> list[float]:
    base = theta[anchor] if anchor is not None else sum(theta) / len(theta)
    return [ANCHOR_RATING + ELO_SCALE * (t - base) for t in theta]


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    return sorted_values[round(q * (len(sorted_values) - 1))]


def rate(
    n: int,
    games: Sequence[Game],
    anchor: int | None,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[Rating]:
    """Ratings and bootstrap intervals for entrants 0..n-1. `games` must already be in a
    canonical order (by match id) for the intervals to be reproducible. Without an
    anchor the mean rating is 1000."""
    theta = fit(n, games)
    point = _anchored(theta, anchor)
    draws: list[list[float]] = [[] for _ in range(n)]
    rng = random.Random(seed)
    if games:
        for _ in range(samples):
            sample = [games[rng.randrange(len(games))] for _ in games]
            for i, r in enumerate(_anchored(fit(n, sample, theta), anchor)):
                draws[i].append(r)
    tail = (1.0 - INTERVAL) / 2.0
    out = []
    for i in range(n):
        values = sorted(draws[i]) or [point[i]]
        out.append(Rating(point[i], _percentile(values, tail), _percentile(values, 1.0 - tail)))
    return out
