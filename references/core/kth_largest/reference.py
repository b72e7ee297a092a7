"""Reference: repeated values count once; the k-th largest distinct value."""


def solve(nums, k):
    distinct = sorted(set(nums), reverse=True)
    return distinct[k - 1] if k <= len(distinct) else None
