"""Submission intake: caps, precise errors, sanitising."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from cogolf.engine import rules
from cogolf.engine.intake import Accepted, Rejected, accept


def sub(**kw) -> str:
    doc = {
        "type": "submission",
        "hole": 1,
        "impl": "def solve(x):\n    return x\n",
        "tests": [],
        "note": "",
    }
    doc.update(kw)
    return json.dumps(doc, ensure_ascii=False)


def test_accepts_a_plain_submission():
    out = accept(sub(tests=[{"name": "t", "args": [1], "expect": 1, "why": "w"}]), 1)
    assert isinstance(out, Accepted)
    assert out.tests[0].args == [1]


def test_wrong_hole():
    out = accept(sub(hole=3), 1)
    assert isinstance(out, Rejected) and out.cause == "wrong_hole" and out.hole == 3


def test_oversize_message():
    out = accept(sub(note="x" * rules.MAX_MESSAGE_BYTES), 1)
    assert isinstance(out, Rejected) and out.cause == "oversize"
    assert str(rules.MAX_MESSAGE_BYTES) in out.message


def test_impl_over_cap_is_malformed_not_truncated():
    out = accept(sub(impl="#" * (rules.MAX_IMPL_CHARS + 1)), 1)
    assert isinstance(out, Rejected) and out.cause == "malformed"
    assert "$.impl" in out.message
    assert isinstance(accept(sub(impl="#" * rules.MAX_IMPL_CHARS), 1), Accepted)


def test_extra_tests_are_dropped_and_counted():
    tests = [{"name": f"t{i}", "args": [i], "expect": i} for i in range(8)]
    out = accept(sub(tests=tests), 1)
    assert isinstance(out, Accepted)
    assert len(out.tests) == rules.MAX_TESTS and out.dropped_tests == 3


def test_fields_truncated_on_code_points():
    out = accept(
        sub(note="😀" * 300, tests=[{"name": "é" * 60, "args": [], "expect": 0, "why": "x" * 500}]),
        1,
    )
    assert isinstance(out, Accepted)
    assert out.note == "😀" * rules.MAX_NOTE_CHARS
    assert len(out.tests[0].name) == rules.MAX_NAME_CHARS
    assert len(out.tests[0].why) == rules.MAX_WHY_CHARS
    assert set(out.truncated_fields) == {"note", "tests[0].name", "tests[0].why"}


def test_path_precise_errors():
    out = accept(sub(tests=[{"name": 5, "args": [], "expect": 0}]), 1)
    assert isinstance(out, Rejected) and out.cause == "malformed"
    assert "$.tests[0].name" in out.message
    out = accept(json.dumps({"type": "submission", "hole": 1}), 1)
    assert isinstance(out, Rejected) and "impl" in out.message


def test_lone_surrogates_and_controls_are_sanitised():
    raw = (
        '{"type":"submission","hole":1,"impl":"x","note":"a\\ud800b\\u001b",'
        '"tests":[{"name":"\\udc00","args":["\\ud800"],"expect":null}]}'
    )
    out = accept(raw, 1)
    assert isinstance(out, Accepted)
    assert out.note == "a\ufffdb"
    assert out.tests[0].name == "\ufffd"
    assert out.tests[0].args == ["\ufffd"]


def test_nan_and_huge_numbers_and_deep_nesting():
    assert accept(sub().replace('"note": ""', '"note": NaN'), 1).cause == "malformed"
    assert (
        accept(
            '{"type":"submission","hole":1,"impl":"x","note":"","tests":[{"args":['
            + "1" * 5000
            + "]}]}",
            1,
        ).cause
        == "malformed"
    )
    deep = "[" * 5000 + "]" * 5000
    assert (
        accept('{"type":"submission","hole":1,"impl":"x","tests":[{"args":' + deep + "}]}", 1).cause
        == "malformed"
    )


def test_invalid_utf8_bytes():
    out = accept(b'{"type":"submission","hole":1,"impl":"\xff"}', 1)
    assert isinstance(out, Rejected) and "UTF-8" in out.message


@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data):
    assert isinstance(accept(data, 1), Accepted | Rejected)


json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_docs)
def test_random_json_never_raises(doc):
    assert isinstance(accept(json.dumps(doc), 1), Accepted | Rejected)


@given(st.dictionaries(st.sampled_from(["type", "hole", "impl", "tests", "note"]), json_docs))
def test_random_submission_shapes_never_raise(doc):
    assert isinstance(accept(json.dumps(doc), 1), Accepted | Rejected)
