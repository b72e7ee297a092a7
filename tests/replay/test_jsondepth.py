"""The nesting measure agrees with a real parse, and stays fast on hostile text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cogolf.engine.intake import accept
from cogolf.jsondepth import MAX_JSON_DEPTH, too_deep

tricky = st.sampled_from(['a"[', "\\", '\\"[{', "x\\\\", "]]", "{", '"'])


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@st.composite
def nested(draw: st.DrawFn) -> Any:
    value: Any = draw(st.one_of(st.integers(), tricky, st.text(max_size=3)))
    for _ in range(draw(st.integers(0, 130))):
        shape = draw(st.integers(0, 2))
        side = draw(st.lists(tricky, max_size=2))
        value = [value, *side] if shape == 0 else {draw(tricky): value} if shape == 1 else [value]
    return value


@settings(max_examples=300, deadline=None)
@given(value=nested(), ascii_only=st.booleans())
def test_too_deep_is_exactly_deeper_than_the_cap(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert too_deep(text) == (depth(value) > MAX_JSON_DEPTH)


def test_unclosed_brackets_count():
    assert too_deep(b"[" * 4_000_000) and too_deep(b'{"a":' * 150)
    assert not too_deep(b"[" * 50 + b"]" * 60) and not too_deep(b"[1," * 99 + b"2")


def test_intake_refuses_what_no_replay_could_read_back():
    deep = "[" * 101 + "]" * 101
    for text in (
        '{"type":"submission","hole":1,"impl":"x","tests":[{"args":' + deep + "}]}",
        '{"type":"submission","hole":1,"impl":"x","tests":[{"args":[1],"expect":1e999}]}',
        '{"type":"submission","hole":1,"impl":"x","tests":[{"args":[-1E400],"expect":1}]}',
    ):
        got = accept(text, 1)
        assert got.cause == "malformed", got
    ok = '{"type":"submission","hole":1,"impl":"x","tests":[{"args":[1e308],"expect":1}]}'
    assert accept(ok, 1).tests[0].args == [1e308]
