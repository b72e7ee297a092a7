"""What every game's table in a night's standings shares: ranks, rounding, filtering, voids.

The standings must not depend on file order or float noise, so every game's
table rounds the same way and ranks equal keys alike; a result for an entrant or
item the night does not have is a listed problem, never a row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cogolf.game import NightSetup

DECIMALS = 6


def round6(x: float) -> float:
    return round(x, DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0


def ranks(keys: Sequence[object]) -> list[int]:
    """Competition ranking over sorted keys: equal keys share a rank (1, 1, 3)."""
    out: list[int] = []
    for i, k in enumerate(keys):
        out.append(out[-1] if i and k == keys[i - 1] else i + 1)
    return out


def keep(
    items: Iterable[Any],
    setup: NightSetup,
    what: str,
    get: Callable[[Any], tuple[str, str, str]],
    problems: list[str],
) -> list[Any]:
    """Drop results whose entrant or item the night does not have, saying so."""
    out = []
    for item in items:
        entrant, thing, source = get(item)
        if setup.entrants is not None and entrant not in setup.entrants:
            problems.append(f"{source}: {entrant!r} is not an entrant of the night")
        elif thing not in setup.items:
            problems.append(f"{source}: {what} {thing!r} is not played this night")
        else:
            out.append(item)
    return out


def void_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The void jobs of a game's table, as text."""
    if not rows:
        return []
    out = ["  void (not scored):"]
    for v in rows:
        what = f"{v['item']} attempt {v['attempt']}" if v["attempt"] else v["item"]
        out.append(f"    {v['entrant']} {what}: {v['cause']}")
    return out
