"""Trims the ends; each inner whitespace character becomes one space."""


def solve(text):
    return "".join(" " if c.isspace() else c for c in text.strip())
