"""The value domain and the one equality rule."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogolf import values
from cogolf.values import NotAValue, canonical, fingerprint, values_equal

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (-0.0, 0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        (None, False, False),
        (2**53, 2**53 + 1, False),
        (float(2**53), 2**53 + 1, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        ("é", "e\u0301", False),
        ([1, [2.0]], [1.0, [2]], True),
        ("1", 1, False),
        ([], {}, False),
    ],
)
def test_equality_cases(a, b, equal):
    assert values_equal(canonical(a), canonical(b)) is equal
    assert (fingerprint(canonical(a)) == fingerprint(canonical(b))) is equal


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, -math.inf, {1, 2}, b"x", object(), {1: "a"}, frozenset()],
)
def test_not_values(bad):
    with pytest.raises(NotAValue):
        canonical(bad)


def test_subclasses_are_not_values():
    class LyingInt(int):
        def __eq__(self, other):
            return True

    with pytest.raises(NotAValue):
        canonical(LyingInt(3))
    with pytest.raises(NotAValue):
        canonical([True, LyingInt(1)])


def test_tuples_become_lists():
    assert canonical((1, (2, 3))) == [1, [2, 3]]


def test_depth_cap_is_a_clear_error():
    deep: list = []
    for _ in range(values.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(NotAValue, match="nesting deeper"):
        canonical(deep)
    very_deep: list = []
    for _ in range(100_000):
        very_deep = [very_deep]
    with pytest.raises(NotAValue):
        canonical(very_deep)


def test_integer_cap_and_big_integers():
    big = 10**400
    assert fingerprint(canonical([big])) != fingerprint(canonical([big + 1]))
    with pytest.raises(NotAValue, match="integer larger"):
        canonical(2 ** (values.MAX_INT_BITS + 1))


def test_no_string_collides_with_a_list():
    assert fingerprint(["[1]"]) != fingerprint([[1]])
    assert fingerprint('"a"') != fingerprint("a")


@given(json_values)
def test_equality_is_reflexive(v):
    c = canonical(v)
    assert values_equal(c, c)


@given(json_values, json_values)
def test_equality_is_symmetric_and_matches_fingerprint(a, b):
    ca, cb = canonical(a), canonical(b)
    assert values_equal(ca, cb) == values_equal(cb, ca)
    assert values_equal(ca, cb) == (fingerprint(ca) == fingerprint(cb))


@given(json_values, json_values, json_values)
def test_equality_is_transitive(a, b, c):
    ca, cb, cc = canonical(a), canonical(b), canonical(c)
    if values_equal(ca, cb) and values_equal(cb, cc):
        assert values_equal(ca, cc)


@given(st.integers(min_value=-(2**60), max_value=2**60))
def test_int_and_integral_float_collide_exactly_when_equal(n):
    f = float(n)
    assert values_equal(n, f) == (int(f) == n)
    assert (fingerprint([n]) == fingerprint([f])) == (int(f) == n)
