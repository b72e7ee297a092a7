"""Reference: a score exactly halfway rounds away from zero (2.5 -> 3, -2.5 -> -3)."""

import math


def solve(scores):
    out = []
    for x in scores:
        a = abs(x)
        whole = math.floor(a)
        r = whole + 1 if a - whole >= 0.5 else whole
        out.append(int(-r if x < 0 else r))
    return out
