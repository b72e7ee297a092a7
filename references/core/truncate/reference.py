"""Reference: the '...' counts towards the limit; a cut result is exactly limit long."""


def solve(text, limit):
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."
