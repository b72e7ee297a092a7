"""Keeps the first limit characters and appends '...' after them."""


def solve(text, limit):
    if len(text) <= limit:
        return text
    return text[:limit] + "..."
