"""Reference: a streak is a stretch of adjacent list elements, each one more than the last."""


def solve(nums):
    best = run = 0
    prev = None
    for x in nums:
        run = run + 1 if prev is not None and x == prev + 1 else 1
        best = max(best, run)
        prev = x
    return best
