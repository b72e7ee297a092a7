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


def _nested(n: int, *, inner: object = 0, kind: str = "list") -> object:
    v = inner
    for _ in range(n):
        v = [v] if kind == "list" else {"k": v}
    return v


@pytest.mark.parametrize("kind", ["list", "object"])
def test_depth_cap_exactly(kind: str) -> None:
    # A scalar inside MAX_DEPTH containers is the deepest value accepted, one more is refused.
    assert canonical(_nested(values.MAX_DEPTH, kind=kind)) == _nested(values.MAX_DEPTH, kind=kind)
    with pytest.raises(NotAValue) as err:
        canonical(_nested(values.MAX_DEPTH + 1, kind=kind))
    step = "[0]" if kind == "list" else ".k"
    assert err.value.path == "$" + step * (values.MAX_DEPTH + 1)
    assert err.value.reason == f"nesting deeper than {values.MAX_DEPTH}"
    # An empty container counts as a level with nothing below it.
    empty = [] if kind == "list" else {}
    assert canonical(_nested(values.MAX_DEPTH, inner=empty, kind=kind))
    with pytest.raises(NotAValue):
        canonical(_nested(values.MAX_DEPTH + 1, inner=empty, kind=kind))


def test_integer_bits_exactly() -> None:
    last = 2**values.MAX_INT_BITS - 1
    assert last.bit_length() == values.MAX_INT_BITS
    assert canonical([last, -last]) == [last, -last]
    for first in (2**values.MAX_INT_BITS, -(2**values.MAX_INT_BITS)):
        with pytest.raises(NotAValue) as err:
            canonical({"n": [first]})
        assert (err.value.path, err.value.reason) == (
            "$.n[0]",
            f"integer larger than {values.MAX_INT_BITS} bits",
        )


@pytest.mark.parametrize(
    ("bad", "path", "reason"),
    [
        ([1, math.inf], "$[1]", "non-finite float"),
        ({"a": {"b": math.nan}}, "$.a.b", "non-finite float"),
        ({"a": {2: "x"}}, "$.a", "object key of type int"),
        ([[{None: 1}]], "$[0][0]", "object key of type NoneType"),
        ({"s": {1}}, "$.s", "set is not a value"),
        ([b"x"], "$[0]", "bytes is not a value"),
    ],
)
def test_each_refusal_says_where_and_why(bad: object, path: str, reason: str) -> None:
    with pytest.raises(NotAValue) as err:
        canonical(bad)
    assert (err.value.path, err.value.reason) == (path, reason)
    assert str(err.value) == f"{reason} at {path}"
    assert values.is_value(bad) is False


def test_a_path_prefix_is_kept() -> None:
    with pytest.raises(NotAValue) as err:
        canonical([0, [math.inf]], path="args")
    assert err.value.path == "args[1][0]"


def test_objects_keep_their_canonical_members() -> None:
    assert canonical({"a": (1, (2.5,)), "b": None}) == {"a": [1, [2.5]], "b": None}
    assert values.is_value({"a": [1, "x", None, True, 2.5]}) is True


def test_bools_never_equal_each_other_unless_the_same() -> None:
    assert values_equal(True, False) is False
    assert values_equal(False, True) is False
    assert values_equal([True], [False]) is False


def test_non_integral_floats_keep_their_fraction() -> None:
    assert fingerprint(1.5) != fingerprint(1)
    assert fingerprint([0.25]) == "[0.25]"
    assert fingerprint(-0.0) == fingerprint(0) == "0"


def test_compact_json_is_the_measured_form() -> None:
    assert values.compact_json({"a": [1, "é", None]}) == '{"a":[1,"é",null]}'
    with pytest.raises(ValueError):
        values.compact_json([math.nan])


def test_short_text_limit_exactly() -> None:
    fits = "x" * 118  # 120 characters with its quotes
    assert values.short_text(fits) == f'"{fits}"'
    cut = values.short_text(fits + "y")
    assert cut == f'"{fits}' + "…"
    assert len(cut) == 120
    assert values.short_text({"é": [1.0, -0.0]}) == '{"é":[1,0]}'
    assert values.short_text([1, 2], limit=5) == "[1,2]"
    assert values.short_text([1, 22], limit=5) == "[1,2…"
