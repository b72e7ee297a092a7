"""Counts values from a up to b, bounds included."""


def solve(nums, a, b):
    return sum(1 for x in nums if a <= x <= b)
