"""Names are separated by spaces only; a hyphenated name is one name."""


def solve(name):
    return "".join(part[0].upper() for part in name.split())
