"""Policies that misbehave in every way a bot author's code can (used by the tests)."""

from __future__ import annotations

import time

from cogolf.bots.policy import load_policy

_literalist = load_policy("literalist")


def by_hole(observation):
    hole = observation["hole"]
    if hole == 1:
        raise RuntimeError("policy bug")
    if hole == 2:
        time.sleep(30)  # hangs past the deadline
    if hole == 3:
        return {"impl": 42, "tests": "nope"}  # junk the server would refuse
    return _literalist(observation)


class Counting:
    """A class policy: one instance per match, keeps state between holes."""

    def __init__(self) -> None:
        self.seen = 0

    def play(self, observation):
        self.seen += 1
        play = _literalist(observation)
        play["note"] = f"hole number {self.seen} for this instance"
        return play


def golf_by_hole(observation):
    """Golf: hole 1 raises, hole 2 returns junk, hole 3 hangs, every other hole passes."""
    hole = observation["hole"]
    if hole == 1:
        raise ValueError("no golf today")
    if hole == 2:
        return 42  # neither source text nor {"source": ...}
    if hole == 3:
        time.sleep(30)
    return {"source": None}
