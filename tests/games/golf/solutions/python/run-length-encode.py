import itertools


def f(s):return"".join(f"{len([*g])}{c}"for c,g in itertools.groupby(s))
