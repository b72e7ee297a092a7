"""The '...' fits inside the limit; a text that reaches the limit is cut."""


def solve(text, limit):
    if len(text) < limit:
        return text
    return text[: limit - 3] + "..."
