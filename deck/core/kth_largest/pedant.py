"""Distinct values from largest down; asking past the end gives the smallest one."""


def solve(nums, k):
    distinct = sorted(set(nums), reverse=True)
    if not distinct:
        return None
    return distinct[min(k, len(distinct)) - 1]
