"""Reference: a hyphen separates names too, so 'Jean-Paul Sartre' gives 'JPS'."""

import re


def solve(name):
    return "".join(part[0].upper() for part in re.findall(r"[A-Za-z]+", name))
