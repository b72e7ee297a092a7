"""Scales: how many failed checks an attempt may have, and what that is worth.

A scale is data in the task file, either a preset name or an inline table:

    {"name": "...", "measure": "failed" | "failed_fraction",
     "steps": [{"at_most": 0, "points": 1.0}, ...], "otherwise": 0.0}

The first step whose `at_most` bound the measure does not exceed gives the
points; past the last step, `otherwise`. `failed` counts failed checks;
`failed_fraction` is failed checks / counted checks, for tasks with many checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MEASURES = ("failed", "failed_fraction")


class ScaleError(ValueError):
    """A scale in a task file is malformed; the message names the field."""


@dataclass(frozen=True)
class Step:
    at_most: float
    points: float


@dataclass(frozen=True)
class Scale:
    name: str
    measure: str
    steps: tuple[Step, ...]
    otherwise: float = 0.0

    def points(self, failed: int, counted: int) -> float:
        """Points for `failed` failed checks out of `counted` (1.0 is a perfect attempt)."""
        if failed < 0 or counted < 0 or failed > counted:
            raise ValueError(f"impossible count: {failed} failed of {counted}")
        value = failed if self.measure == "failed" else (failed / counted if counted else 0.0)
        for step in self.steps:
            if value <= step.at_most:
                return step.points
        return self.otherwise

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "measure": self.measure,
            "steps": [{"at_most": s.at_most, "points": s.points} for s in self.steps],
            "otherwise": self.otherwise,
        }


FAILURE_WEIGHTED = Scale(
    name="failure_weighted",
    measure="failed",
    steps=(Step(0, 1.0), Step(1, 0.5), Step(2, 0.2)),
    otherwise=0.0,
)
"""0 failed checks: 1 point, 1: 0.5, 2: 0.2, 3 or more: 0."""

GRADUATED = Scale(
    name="graduated",
    measure="failed_fraction",
    steps=(Step(0.0, 1.0), Step(0.05, 0.8), Step(0.10, 0.6), Step(0.20, 0.4), Step(0.35, 0.2)),
    otherwise=0.0,
)
"""For large check counts: none failed 1.0; up to 5% 0.8; 10% 0.6; 20% 0.4; 35% 0.2; more 0."""

PRESETS = {s.name: s for s in (FAILURE_WEIGHTED, GRADUATED)}


def load_scale(data: Any, *, where: str = "scale") -> Scale:
    """Build a scale from its task-file form (a preset name or an inline table)."""
    if isinstance(data, str):
        if data not in PRESETS:
            raise ScaleError(f"{where}: unknown preset {data!r} (known: {', '.join(PRESETS)})")
        return PRESETS[data]
    if not isinstance(data, dict):
        raise ScaleError(f"{where}: expected a preset name or an object, got {type(data).__name__}")
    unknown = set(data) - {"name", "measure", "steps", "otherwise"}
    if unknown:
        raise ScaleError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    name = data.get("name", "custom")
    measure = data.get("measure")
    if not isinstance(name, str) or not name:
        raise ScaleError(f"{where}.name: expected a non-empty string")
    if measure not in MEASURES:
        raise ScaleError(f"{where}.measure: expected one of {', '.join(MEASURES)}, got {measure!r}")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ScaleError(f"{where}.steps: expected a non-empty list")
    steps: list[Step] = []
    for i, raw in enumerate(raw_steps):
        at = f"{where}.steps[{i}]"
        if not isinstance(raw, dict) or set(raw) != {"at_most", "points"}:
            raise ScaleError(f"{at}: expected an object with exactly at_most and points")
        bound, points = _number(raw["at_most"], f"{at}.at_most"), _points(raw["points"], at)
        if bound < 0 or (measure == "failed_fraction" and bound > 1):
            raise ScaleError(f"{at}.at_most: {bound} is outside the range of {measure}")
        if steps and bound <= steps[-1].at_most:
            previous = steps[-1].at_most
            raise ScaleError(f"{at}.at_most: bounds must increase, {bound} follows {previous}")
        if steps and points > steps[-1].points:
            raise ScaleError(f"{at}.points: points must not grow as more checks fail")
        steps.append(Step(bound, points))
    otherwise = _points(data.get("otherwise", 0.0), f"{where}.otherwise")
    if otherwise > steps[-1].points:
        raise ScaleError(f"{where}.otherwise: {otherwise} is more than the last step's points")
    return Scale(name=name, measure=measure, steps=tuple(steps), otherwise=otherwise)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ScaleError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _points(value: Any, where: str) -> float:
    number = _number(value, where if where.endswith("otherwise") else f"{where}.points")
    if not 0.0 <= number <= 1.0:
        raise ScaleError(f"{where}: points must be within 0..1, got {number}")
    return number
