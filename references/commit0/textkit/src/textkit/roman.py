"""Roman numerals between 1 and 3999."""

import re


def _build_table() -> list[tuple[int, str]]:
    """Value/symbol pairs from largest to smallest, subtractive forms included."""
    symbols = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]
    table: list[tuple[int, str]] = []
    for i, (value, symbol) in enumerate(symbols):
        table.append((value, symbol))
        if i % 2 == 0 and i + 2 < len(symbols):
            smaller_value, smaller = symbols[i + 2]
            table.append((value - smaller_value, smaller + symbol))
        elif i % 2 == 1:
            smaller_value, smaller = symbols[i + 1]
            table.append((value - smaller_value, smaller + symbol))
    return table


_TABLE = _build_table()
_VALID = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")


def to_roman(number: int) -> str:
    """The Roman numeral for `number`; ValueError outside 1..3999, TypeError for non-ints."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError("to_roman needs an int")
    if not 1 <= number <= 3999:
        raise ValueError("to_roman needs 1..3999")
    out = []
    for value, symbol in _TABLE:
        count, number = divmod(number, value)
        out.append(symbol * count)
    return "".join(out)


def from_roman(numeral: str) -> int:
    """The value of a canonical Roman numeral (case-insensitive); ValueError otherwise."""
    text = numeral.strip().upper()
    if not text or not _VALID.fullmatch(text):
        raise ValueError(f"not a Roman numeral: {numeral!r}")
    total = 0
    for value, symbol in _TABLE:
        while text.startswith(symbol):
            total += value
            text = text[len(symbol) :]
    return total
