"""Reference: a word is a maximal run of ASCII letters; everything else separates."""

import re
from collections import Counter


def solve(text):
    return dict(Counter(re.findall(r"[a-z]+", text.lower())))
