"""Both shipped scales and the validation of inline scales."""

from __future__ import annotations

import pytest

from cogolf.games.project.scales import FAILURE_WEIGHTED, GRADUATED, ScaleError, load_scale


@pytest.mark.parametrize(("failed", "points"), [(0, 1.0), (1, 0.5), (2, 0.2), (3, 0.0), (9, 0.0)])
def test_failure_weighted(failed: int, points: float) -> None:
    assert FAILURE_WEIGHTED.points(failed, 20) == points


@pytest.mark.parametrize(
    ("failed", "points"),
    [(0, 1.0), (1, 0.8), (10, 0.8), (11, 0.6), (20, 0.6), (40, 0.4), (41, 0.2), (70, 0.2),
     (71, 0.0), (200, 0.0)],
)
def test_graduated_uses_the_failed_fraction(failed: int, points: float) -> None:
    assert GRADUATED.points(failed, 200) == points


def test_presets_load_by_name_and_round_trip() -> None:
    assert load_scale("failure_weighted") is FAILURE_WEIGHTED
    assert load_scale(GRADUATED.to_json()) == GRADUATED


def test_inline_scale() -> None:
    scale = load_scale({"measure": "failed", "steps": [{"at_most": 0, "points": 1},
                                                       {"at_most": 4, "points": 0.25}]})
    assert [scale.points(n, 10) for n in (0, 3, 4, 5)] == [1.0, 0.25, 0.25, 0.0]


def test_impossible_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="impossible count"):
        FAILURE_WEIGHTED.points(3, 2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("steep", "unknown preset 'steep'"),
        (3, "expected a preset name or an object"),
        ({"measure": "passed", "steps": [{"at_most": 0, "points": 1}]}, "measure"),
        ({"measure": "failed", "steps": []}, "steps: expected a non-empty list"),
        ({"measure": "failed", "steps": [{"at_most": 0}]}, r"steps\[0\]: expected an object"),
        ({"measure": "failed",
          "steps": [{"at_most": 1, "points": 1}, {"at_most": 1, "points": 0}]},
         r"steps\[1\].at_most: bounds must increase"),
        ({"measure": "failed",
          "steps": [{"at_most": 0, "points": 0.5}, {"at_most": 1, "points": 1}]},
         r"steps\[1\].points: points must not grow"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 2}]}, "within 0..1"),
        ({"measure": "failed_fraction", "steps": [{"at_most": 1.5, "points": 1}]}, "outside"),
        ({"measure": "failed", "steps": [{"at_most": "x", "points": 1}]}, "expected a number"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 0.5}], "otherwise": 0.9},
         "more than the last step"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 1}], "bonus": 1},
         "unknown field"),
    ],
)
def test_bad_scales_name_the_field(data: object, message: str) -> None:
    with pytest.raises(ScaleError, match=message):
        load_scale(data)
