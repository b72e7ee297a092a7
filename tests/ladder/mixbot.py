"""Ladder bots of known strength: per hole each plays one of three plays at fixed rates.

A blank play (returns None, no tests) loses every hole to the literalist by about 6.5
points, and the literalist loses to the pedant by about 1 (the core deck's holes as
the engine scores them), so these six are in this order, weakest first.
"""

from __future__ import annotations

import random
from typing import Any

from cogolf.bots.scripted import baseline_play
from cogolf.deck import load_public

DECK = load_public()
_rng = random.SystemRandom()


def _blank(observation: dict[str, Any]) -> dict[str, Any]:
    params = [p["name"] for p in observation["spec"]["signature"]["params"]]
    return {"impl": f"def solve({', '.join(params)}):\n    return None\n", "tests": [], "note": ""}


def _mix(observation: dict[str, Any], rates: tuple[float, float, float]) -> dict[str, Any]:
    pick = _rng.random()
    if pick < rates[0]:
        return _blank(observation)
    name = "literalist" if pick < rates[0] + rates[1] else "pedant"
    return baseline_play(DECK, observation["spec"]["key"], name)


def blank(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (1.0, 0.0, 0.0))


def third(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (2 / 3, 1 / 3, 0.0))


def two_thirds(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (1 / 3, 2 / 3, 0.0))


def literal(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (0.0, 1.0, 0.0))


def half(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (0.0, 0.5, 0.5))


def pedant(observation: dict[str, Any]) -> dict[str, Any]:
    return _mix(observation, (0.0, 0.0, 1.0))


ORDER = ["blank", "third", "two_thirds", "literal", "half", "pedant"]  # weakest first
