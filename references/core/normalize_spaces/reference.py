"""Reference: whitespace is Unicode whitespace (str.isspace), so U+00A0 and U+3000 count."""


def solve(text):
    return " ".join(text.split())
