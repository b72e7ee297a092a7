"""Whitespace is the six ASCII characters: space, tab, newline, CR, vertical tab, form feed."""

import re


def solve(text):
    return " ".join(part for part in re.split(r"[ \t\n\r\f\v]+", text) if part)
