"""A streak is a set of consecutive values present anywhere in the list, in any order."""


def solve(nums):
    values = set(nums)
    best = 0
    for x in values:
        if x - 1 not in values:
            n = 1
            while x + n in values:
                n += 1
            best = max(best, n)
    return best
