import pytest

from textkit import dedent_block, wrap


def test_wrap_basic():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_wrap_collapses_whitespace():
    assert wrap("  a   b \n c  ", 80) == ["a b c"]


def test_wrap_long_word():
    assert wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]


def test_wrap_exact_width():
    assert wrap("abc def", 7) == ["abc def"]


def test_wrap_empty():
    assert wrap("", 5) == []


def test_wrap_bad_width():
    with pytest.raises(ValueError):
        wrap("x", 0)


def test_dedent_block():
    assert dedent_block("    a\n      b\n\n    c") == "a\n  b\n\nc"


def test_dedent_block_blank_lines_emptied():
    assert dedent_block("  a\n   \n  b") == "a\n\nb"


def test_dedent_block_no_indent():
    assert dedent_block("a\n b") == "a\n b"
