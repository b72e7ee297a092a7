"""Adjacent elements; a repeated value does not break the streak and adds to it."""


def solve(nums):
    best = run = 0
    prev = None
    for x in nums:
        run = run + 1 if prev is not None and x in (prev, prev + 1) else 1
        best = max(best, run)
        prev = x
    return best
