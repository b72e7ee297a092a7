import pytest

from textkit import from_roman, to_roman


@pytest.mark.parametrize(
    ("number", "numeral"),
    [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"),
     (1994, "MCMXCIV"), (2024, "MMXXIV"), (3999, "MMMCMXCIX")],
)
def test_to_roman(number, numeral):
    assert to_roman(number) == numeral


@pytest.mark.parametrize("bad", [0, -1, 4000])
def test_to_roman_range(bad):
    with pytest.raises(ValueError):
        to_roman(bad)


def test_to_roman_type():
    with pytest.raises(TypeError):
        to_roman(True)


def test_from_roman_roundtrip():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_from_roman_lowercase():
    assert from_roman(" mcmxciv ") == 1994


@pytest.mark.parametrize("bad", ["", "IIII", "VX", "MMMM", "ABC"])
def test_from_roman_invalid(bad):
    with pytest.raises(ValueError):
        from_roman(bad)
