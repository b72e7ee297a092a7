"""Choosing one of several attempts at a hole, on public tests only.

Private tests must never influence which file is scored, or a player could
probe them by submitting many variants. The order: most public tests passed,
then lowest public-test score, then fewest bytes, then the earliest attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PublicRun:
    """How one attempt did on the public tests."""

    index: int  # attempt order, 0 = earliest
    size: int
    public_passed: int
    public_total: int
    penalty: float  # the hole's penalty constant

    @property
    def public_score(self) -> float:
        correctness = self.public_passed / self.public_total if self.public_total else 0.0
        return self.size + self.penalty * (1.0 - correctness) ** 2


def choose_attempt(runs: Sequence[PublicRun]) -> PublicRun:
    if not runs:
        raise ValueError("no attempts to choose from")
    return min(runs, key=lambda r: (-r.public_passed, r.public_score, r.size, r.index))
