import pytest

from textkit import slugify, unique_slug


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World!", "hello-world"),
        ("  spaces   everywhere  ", "spaces-everywhere"),
        ("Crème Brûlée", "creme-brulee"),
        ("already-a-slug", "already-a-slug"),
        ("!!!", ""),
        ("Ünïcödé 2024", "unicode-2024"),
    ],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_slugify_separator():
    assert slugify("a b c", separator="_") == "a_b_c"


def test_slugify_max_length_cuts_at_boundary():
    assert slugify("the quick brown fox", max_length=12) == "the-quick"


def test_slugify_max_length_single_word():
    assert slugify("supercalifragilistic", max_length=5) == "super"


def test_unique_slug_free():
    assert unique_slug("Hello", set()) == "hello"


def test_unique_slug_taken():
    assert unique_slug("Hello", {"hello", "hello-2"}) == "hello-3"


def test_unique_slug_empty_text():
    assert unique_slug("???", {"item"}) == "item-2"
