"""Words are runs of letters, counted exactly as written (case kept apart)."""

import re
from collections import Counter


def solve(text):
    return dict(Counter(re.findall(r"[A-Za-z]+", text)))
