"""The value at position k of nums sorted from largest down, repeats included."""


def solve(nums, k):
    ordered = sorted(nums, reverse=True)
    return ordered[k - 1] if k <= len(ordered) else None
