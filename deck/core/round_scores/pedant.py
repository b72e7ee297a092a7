"""Rounds by adding one half and flooring: halves go up, towards positive infinity."""

import math


def solve(scores):
    return [math.floor(x + 0.5) for x in scores]
