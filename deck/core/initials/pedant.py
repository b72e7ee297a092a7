"""Hyphens and spaces separate names; short lowercase particles after the first are skipped."""

import re


def solve(name):
    parts = re.findall(r"[A-Za-z]+", name)
    kept = [p for i, p in enumerate(parts) if i == 0 or not (p.islower() and len(p) <= 3)]
    return "".join(p[0].upper() for p in kept)
