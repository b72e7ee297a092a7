"""Submission intake: caps, precise errors, sanitising."""

from __future__ import annotations

import json

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from cogolf.engine import rules
from cogolf.engine.intake import (
    Accepted,
    AcceptedTest,
    Rejected,
    accept,
    decode_for_hole,
    decode_json,
    encode_play,
    message_size,
)
from cogolf.jsondepth import MAX_JSON_DEPTH
from cogolf.messages import Submission


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


def _padded(total_bytes: int) -> str:
    """A submission exactly `total_bytes` long (UTF-8), padded in its note."""
    bare = len(sub(note="").encode())
    return sub(note="n" * (total_bytes - bare))


def test_message_size_cap_exactly():
    last = _padded(rules.MAX_MESSAGE_BYTES)
    assert len(last.encode()) == rules.MAX_MESSAGE_BYTES
    assert isinstance(accept(last, 1), Accepted)
    assert isinstance(accept(last.encode(), 1), Accepted)
    first = _padded(rules.MAX_MESSAGE_BYTES + 1)
    out = accept(first, 1)
    assert isinstance(out, Rejected) and out.cause == "oversize"
    cap = rules.MAX_MESSAGE_BYTES
    assert out.message == f"message is {cap + 1} bytes; the cap is {cap} bytes"
    # measured in UTF-8 bytes, not characters: a lone surrogate counts its three bytes
    assert message_size("é\ud800") == 5 and message_size(b"ab") == 2


def test_each_text_cap_exactly():
    at_caps = accept(
        sub(
            note="n" * rules.MAX_NOTE_CHARS,
            tests=[{"name": "a" * rules.MAX_NAME_CHARS, "args": [], "expect": 0,
                    "why": "w" * rules.MAX_WHY_CHARS}] * rules.MAX_TESTS,
            fallback={"cause": "policy_raised", "detail": "d" * rules.MAX_FALLBACK_DETAIL_CHARS},
        ),
        1,
    )
    assert isinstance(at_caps, Accepted)
    assert at_caps.truncated_fields == () and at_caps.dropped_tests == 0
    assert len(at_caps.tests) == rules.MAX_TESTS
    assert (at_caps.fallback_cause, len(at_caps.fallback_detail)) == (
        "policy_raised", rules.MAX_FALLBACK_DETAIL_CHARS
    )
    past = accept(
        sub(
            note="n" * (rules.MAX_NOTE_CHARS + 1),
            tests=[{"name": "a" * (rules.MAX_NAME_CHARS + 1), "args": [], "expect": 0,
                    "why": "w" * (rules.MAX_WHY_CHARS + 1)}] * (rules.MAX_TESTS + 1),
            fallback={"cause": "policy_raised",
                      "detail": "d" * (rules.MAX_FALLBACK_DETAIL_CHARS + 1)},
        ),
        1,
    )
    assert isinstance(past, Accepted)
    assert past.dropped_tests == 1 and len(past.tests) == rules.MAX_TESTS
    assert past.truncated_fields == (
        *(f"tests[{i}].{f}" for i in range(rules.MAX_TESTS) for f in ("name", "why")),
        "note",
        "fallback.detail",
    )
    assert past.note == "n" * rules.MAX_NOTE_CHARS
    assert past.tests[0].name == "a" * rules.MAX_NAME_CHARS
    assert past.tests[0].why == "w" * rules.MAX_WHY_CHARS
    assert past.fallback_detail == "d" * rules.MAX_FALLBACK_DETAIL_CHARS
    plain = accept(sub(), 1)
    assert isinstance(plain, Accepted)
    assert (plain.fallback_cause, plain.fallback_detail) == (None, "")


def test_the_impl_cap_counts_cleaned_characters():
    # control characters are dropped before the cap is measured
    ok = accept(sub(impl="#" * rules.MAX_IMPL_CHARS + "\x1b"), 1)
    assert isinstance(ok, Accepted) and ok.impl == "#" * rules.MAX_IMPL_CHARS
    out = accept(sub(impl="é" * (rules.MAX_IMPL_CHARS + 1)), 1)
    assert isinstance(out, Rejected) and out.hole == 1
    assert out.message == (
        f"impl is {rules.MAX_IMPL_CHARS + 1} characters; the cap is {rules.MAX_IMPL_CHARS}"
        " - at `$.impl`"
    )


def test_the_wrong_hole_is_named():
    out = accept(sub(hole=3), 1)
    assert isinstance(out, Rejected)
    assert out.message == "submission is for hole 3; hole 1 is open"


def test_surrogates_in_keys_and_nested_strings_are_repaired():
    doc = decode_json('{"a\\ud800": ["x\\udc00", {"k": "\\ud801"}], "b": "\\udfff"}')
    assert doc == {"a\ufffd": ["x\ufffd", {"k": "\ufffd"}], "b": "\ufffd"}
    kept = decode_json('["\\ud800"]', repair_surrogates=False)
    assert kept == ["\ud800"]
    assert decode_json('"\\ud800"') == "\ufffd"
    assert decode_json(b"[1.5, 2]") == [1.5, 2]


def test_json_refusals_say_why():
    cases = {
        b"\xff": "message is not UTF-8 (byte 0)",
        "[NaN]": "message is not usable JSON: NaN is not valid JSON",
        "[1e999]": "message is not usable JSON: number 1e999 is out of range",
        "[1,": "message is not JSON: Expecting value at line 1 column 4",
    }
    for raw, message in cases.items():
        try:
            decode_json(raw)
        except ValueError as exc:
            assert str(exc) == message
        else:
            raise AssertionError(f"{raw!r} decoded")


def test_encode_play_refuses_what_json_cannot_say():
    assert encode_play({"a": "é"}) == '{"a": "é"}'
    bad = encode_play({"a": float("nan")})
    assert isinstance(bad, Rejected) and bad.cause == "malformed"
    assert bad.message.startswith("submission is not JSON: ")


def test_the_refusals_name_the_depth_and_clip_a_long_number():
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    for raw, message in (
        (deep, f"message nests deeper than {MAX_JSON_DEPTH} levels"),
        ("[" + "9" * 50 + "e999]",
         f"message is not usable JSON: number {'9' * 40} is out of range"),
    ):
        try:
            decode_json(raw)
        except ValueError as exc:
            assert str(exc) == message
        else:
            raise AssertionError(f"{raw!r} decoded")


def test_a_frame_may_keep_its_lone_surrogates_when_asked():
    raw = json.dumps(
        {"type": "submission", "hole": 1, "impl": "\ud800", "tests": [], "note": ""}
    )
    kept = decode_for_hole(raw, Submission, 1, repair_surrogates=False)
    assert isinstance(kept, Submission) and kept.impl == "\ud800"
    repaired = decode_for_hole(raw, Submission, 1)
    assert isinstance(repaired, Submission) and repaired.impl == "\ufffd"


def test_an_accepted_play_keeps_its_hole_and_each_test_whole():
    test = {"name": "t", "args": [1, {"k": [2]}], "expect": {"v": [3.5, None]}, "why": "w"}
    out = accept(sub(hole=4, tests=[test]), 4)
    assert isinstance(out, Accepted) and out.hole == 4
    assert out.tests == (AcceptedTest("t", [1, {"k": [2]}], {"v": [3.5, None]}, "w"),)


def test_encode_play_takes_a_struct():
    play = Submission(hole=2, impl="x", tests=[], note="n")
    assert json.loads(encode_play(play)) == msgspec.to_builtins(play)
