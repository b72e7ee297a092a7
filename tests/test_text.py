"""The sanitiser: idempotent, and its output is always strict UTF-8."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogolf.text import clean, clip

any_text = st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF))


@given(any_text)
def test_clean_is_idempotent_and_strict_utf8(s):
    once = clean(s)
    assert clean(once) == once
    once.encode("utf-8")  # raises on any lone surrogate
    assert all(ch in "\n\t" or ord(ch) >= 0x20 for ch in once)


@given(any_text, st.integers(min_value=0, max_value=50))
def test_clip_respects_the_cap(s, cap):
    out = clip(s, cap)
    assert len(out) <= cap
    assert clip(out, cap) == out


def test_examples():
    assert clean("a\ud800b") == "a\ufffdb"
    assert clean("x\x1b[31my\n\tz\x7f") == "x[31my\n\tz"
    assert clip("😀😀😀", 2) == "😀😀"
