"""Both shipped scales and the validation of inline scales."""

from __future__ import annotations

import pytest

from cogolf.games.project.scales import FAILURE_WEIGHTED, GRADUATED, ScaleError, load_scale


@pytest.mark.parametrize(("failed", "points"), [(0, 1.0), (1, 0.5), (2, 0.2), (3, 0.0), (9, 0.0)])
def test_failure_weighted(failed: int, points: float) -> None:
    assert FAILURE_WEIGHTED.points(failed, 20) == points


@pytest.mark.parametrize(
    ("failed", "points"),
    # each step at its bound and one past it (of 200: 5% is 10, 10% is 20, 20% 40, 35% 70)
    [(0, 1.0), (1, 0.8), (10, 0.8), (11, 0.6), (20, 0.6), (21, 0.4), (40, 0.4), (41, 0.2),
     (70, 0.2), (71, 0.0), (200, 0.0)],
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


@pytest.mark.parametrize(
    ("failed", "counted", "points"),
    [(1, 20, 0.8), (2, 20, 0.6), (3, 20, 0.4), (4, 20, 0.4), (7, 20, 0.2), (8, 20, 0.0),
     (0, 0, 1.0), (1, 1, 0.0)],
)
def test_graduated_on_other_counts(failed: int, counted: int, points: float) -> None:
    assert GRADUATED.points(failed, counted) == points


def test_failure_weighted_ignores_how_many_were_counted() -> None:
    assert [FAILURE_WEIGHTED.points(n, n) for n in (0, 1, 2, 3)] == [1.0, 0.5, 0.2, 0.0]


@pytest.mark.parametrize(("failed", "counted"), [(3, 2), (-1, 2), (0, -1), (1, 0)])
def test_impossible_counts_are_refused(failed: int, counted: int) -> None:
    with pytest.raises(ValueError, match=f"impossible count: {failed} failed of {counted}"):
        FAILURE_WEIGHTED.points(failed, counted)


def test_the_last_values_accepted_load() -> None:
    scale = load_scale(
        {
            "name": "edge",
            "measure": "failed_fraction",
            "steps": [{"at_most": 0, "points": 1}, {"at_most": 1, "points": 0}],
            "otherwise": 0,
        },
        where="task.scale",
    )
    assert scale == load_scale(scale.to_json())
    assert scale.to_json() == {
        "name": "edge",
        "measure": "failed_fraction",
        "steps": [{"at_most": 0.0, "points": 1.0}, {"at_most": 1.0, "points": 0.0}],
        "otherwise": 0.0,
    }
    flat = load_scale({"measure": "failed", "steps": [{"at_most": 0, "points": 0.5},
                                                      {"at_most": 2.5, "points": 0.5}],
                       "otherwise": 0.5})
    assert (flat.name, flat.otherwise, flat.points(3, 3)) == ("custom", 0.5, 0.5)
    assert [s.at_most for s in flat.steps] == [0.0, 2.5]


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


ONE = [{"at_most": 0, "points": 1}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("steep", "task.scale: unknown preset 'steep' (known: failure_weighted, graduated)"),
        ([1], "task.scale: expected a preset name or an object, got list"),
        ({"measure": "failed", "steps": ONE, "b": 1, "a": 2}, "task.scale: unknown field(s) a, b"),
        ({"name": "", "measure": "failed", "steps": ONE}, "task.scale.name: expected a non-empty"),
        ({"name": 3, "measure": "failed", "steps": ONE}, "task.scale.name: expected a non-empty"),
        ({"measure": None, "steps": ONE},
         "task.scale.measure: expected one of failed, failed_fraction, got None"),
        ({"measure": "failed", "steps": {"at_most": 0}}, "task.scale.steps: expected a non-empty"),
        ({"measure": "failed", "steps": [[0, 1]]},
         "task.scale.steps[0]: expected an object with exactly at_most and points"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 1, "x": 0}]},
         "task.scale.steps[0]: expected an object with exactly"),
        ({"measure": "failed", "steps": [{"at_most": -0.5, "points": 1}]},
         "task.scale.steps[0].at_most: -0.5 is outside the range of failed"),
        ({"measure": "failed_fraction", "steps": [{"at_most": 1.0000001, "points": 1}]},
         "task.scale.steps[0].at_most: 1.0000001 is outside the range of failed_fraction"),
        ({"measure": "failed", "steps": [{"at_most": True, "points": 1}]},
         "task.scale.steps[0].at_most: expected a number, got True"),
        ({"measure": "failed", "steps": [{"at_most": float("nan"), "points": 1}]},
         "task.scale.steps[0].at_most: expected a number, got nan"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": "1"}]},
         "task.scale.steps[0].points: expected a number, got '1'"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 1.01}]},
         "task.scale.steps[0]: points must be within 0..1, got 1.01"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": -0.01}]},
         "task.scale.steps[0]: points must be within 0..1, got -0.01"),
        ({"measure": "failed", "steps": [{"at_most": 2, "points": 1}, {"at_most": 1, "points": 0}]},
         "task.scale.steps[1].at_most: bounds must increase, 1.0 follows 2.0"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 0.5},
                                         {"at_most": 1, "points": 0.51}]},
         "task.scale.steps[1].points: points must not grow as more checks fail"),
        ({"measure": "failed", "steps": [{"at_most": 0, "points": 0.5}], "otherwise": 0.51},
         "task.scale.otherwise: 0.51 is more than the last step's points"),
        ({"measure": "failed", "steps": ONE, "otherwise": "0"},
         "task.scale.otherwise: expected a number, got '0'"),
        ({"measure": "failed", "steps": ONE, "otherwise": -1},
         "task.scale.otherwise: points must be within 0..1, got -1.0"),
    ],
)
def test_each_refusal_is_exact(data: object, message: str) -> None:
    with pytest.raises(ScaleError) as err:
        load_scale(data, where="task.scale")
    assert str(err.value) == message or str(err.value).startswith(message), str(err.value)


def test_a_refusal_names_the_scale_by_default() -> None:
    with pytest.raises(ScaleError) as err:
        load_scale({"measure": "failed", "steps": []})
    assert str(err.value) == "scale.steps: expected a non-empty list"
