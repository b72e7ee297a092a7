"""Which pairs to play next: the pairings expected to tell the most about the ranking.

The ladder and a night's `schedule = "adaptive"` both ask this one question. The
strengths are the night's Bradley–Terry fit (`ratings.py`) with its Laplace
covariance; the ranking is wrong where two strengths are in the wrong order, so a
pairing of i and j (both seat orders on one seed, two games) is worth the chance
that their order is now wrong times the share of the uncertainty on their
difference that it is expected to remove:

    d = theta_i - theta_j,   v = var_i + var_j - 2 cov_ij,   I = 2 p (1 - p)
    gain = Phi(-|d| / sqrt(v)) * v I / (1 + v I)

where p is the chance that i beats j. So close ratings (p near 1/2), wide intervals
(a new bot's v is large: it plays more until its interval narrows) and pairs not yet
measured come first; a pair whose order is already clear is left alone, however
wide its intervals. Nothing else tried did better in both the narrow and the wide
field (`cogolf bench ladder`, 40 simulated fields per size): the variance removed alone
or the chance of a wrong order alone (8 and 16 entrants), that chance's expected drop
(a preposterior: for the pair alone, 8 and 16; summed over every pair its covariance
reaches, 8, at n^2 times the cost), a star or a chain of first pairings (8). With 8
entrants in the wide field each needs a median 10 to 12 pairings (36-43% of the
round-robin's matches) to reach tau 0.9; a chooser allowed to look at the true rates
and the round-robin's order needs about 6 (12 fields), so the gap is in what the
results so far can tell, not in how the fit is used. A pair's recent meetings divide
its gain, and a hard cap keeps any bot from farming one opponent: a pair may make at
most half of either bot's last ten pairings. Two bots of one owner never meet.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from cogolf.league.ratings import Game, covariance, fit_from

FARM_WINDOW = 10  # a bot's most recent pairings looked at
FARM_SHARE = 0.5  # the largest share of them one opponent may have
LEGS = 2  # a pairing is two games: both seat orders on one seed
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Belief:
    """Log-strengths and their covariance, as fitted from the games so far."""

    theta: list[float]
    cov: list[list[float]]

    @property
    def n(self) -> int:
        return len(self.theta)


def belief(n: int, games: Sequence[Game], start: Sequence[float] | None = None) -> Belief:
    theta = fit_from(n, games, start)
    return Belief(theta, covariance(n, games, theta))


@dataclass(frozen=True)
class Candidate:
    index: int  # the bot's index in the belief
    free: int = 1  # pairings it may start now
    owner: str | None = None  # bots of one owner never meet


def gain(b: Belief, i: int, j: int) -> float:
    """What one pairing of i and j is worth to the ranking (see the module docstring)."""
    v = max(b.cov[i][i] + b.cov[j][j] - 2.0 * b.cov[i][j], 1e-12)
    d = abs(b.theta[i] - b.theta[j])
    p = 1.0 / (1.0 + math.exp(-d))
    info = LEGS * p * (1.0 - p)
    return _NORMAL.cdf(-d / math.sqrt(v)) * v * info / (1.0 + v * info)


def farmed(history: Sequence[tuple[int, int]], i: int, j: int) -> bool:
    """Whether one more pairing of i and j would exceed the farming cap for either."""
    for bot in (i, j):
        recent = [p for p in history if bot in p][-FARM_WINDOW:]
        met = sum(1 for p in recent if set(p) == {i, j})
        if met + 1 > FARM_SHARE * FARM_WINDOW:
            return True
    return False


def pick(
    b: Belief,
    candidates: Sequence[Candidate],
    history: Sequence[tuple[int, int]],
    *,
    most: int | None = None,
    exclude: Collection[tuple[int, int]] = (),
) -> list[tuple[int, int]]:
    """Pairs to start now, best first; every candidate in at most `free` of them.

    `history` lists earlier pairings, oldest first; `exclude` pairs (lower index first)
    never to pick. The seat order within a pair does not matter (both orders are played);
    the lower index comes first."""
    owners = {c.index: c.owner for c in candidates}
    free = {c.index: c.free for c in candidates if c.free > 0}
    recent: dict[tuple[int, int], int] = {}
    for p in history[-FARM_WINDOW * max(1, len(free)) :]:
        key = (min(p), max(p))
        recent[key] = recent.get(key, 0) + 1
    scored = []
    ids = sorted(free)
    for x, i in enumerate(ids):
        for j in ids[x + 1 :]:
            if owners[i] is not None and owners[i] == owners[j]:
                continue
            if (i, j) in exclude or farmed(history, i, j):
                continue
            scored.append((gain(b, i, j) / (1 + recent.get((i, j), 0)), i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    chosen: list[tuple[int, int]] = []
    for _, i, j in scored:
        if most is not None and len(chosen) >= most:
            break
        if free[i] > 0 and free[j] > 0:
            chosen.append((i, j))
            free[i] -= 1
            free[j] -= 1
    return chosen
