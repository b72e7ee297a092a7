"""The combined table of a night: every entrant across every game it played.

An entrant is complete when it has a result in every game of the night:
Cogolf, at least one scored match; golf, a result for every course; Commit-0,
a result for every task; project, every attempt of every task. Complete
entrants are ranked by the mean of their per-game ranks, where each game's
rank is taken among the complete entrants only (so an incomplete entrant
moves no one) with that game's own order and ties (equal keys share a rank,
1, 1, 3). Equal mean ranks share a rank too; within a shared rank, names go
alphabetically. Entrants missing a game are listed below as incomplete, fewest
missing games first. Each row also keeps the entrant's rank in each game's own
table (`table_ranks`, among every entrant of that game), which is what a reader
compares with that table; `ranks` are the ones the mean is taken of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from cogolf.game import GameTable

RULE = (
    "complete entrants (a result in every game) ranked by the mean of their per-game ranks; "
    "per-game ranks are taken among the complete entrants, equal keys sharing a rank; "
    "equal mean ranks share a rank"
)
MEAN_DECIMALS = 3


def _competition(ordered: Sequence[tuple[Any, str]]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for i, (key, name) in enumerate(ordered):
        ranks[name] = ranks[ordered[i - 1][1]] if i and key == ordered[i - 1][0] else i + 1
    return ranks


def combined_table(tables: Mapping[str, GameTable], entrants: Sequence[str]) -> dict[str, Any]:
    """Every game's table, by name in the night's order: `tables[game].keys[entrant]`
    orders the entrants complete in `game` (lower is better)."""
    games = list(tables)
    keys = {g: t.keys for g, t in tables.items()}
    complete = sorted(e for e in entrants if all(e in keys[g] for g in games))
    per_game = {
        g: _competition(sorted((keys[g][e], e) for e in complete)) for g in games
    }
    own = {g: _competition(sorted((k, e) for e, k in keys[g].items())) for g in games}
    # Fractions, so equal means compare equal exactly; the document shows them rounded.
    means = {e: Fraction(sum(per_game[g][e] for g in games), len(games)) for e in complete}
    ordered = sorted(complete, key=lambda e: (means[e], e))
    ranks = _competition([(means[e], e) for e in ordered])
    table = [
        {
            "rank": ranks[e],
            "entrant": e,
            "mean_rank": round(float(means[e]), MEAN_DECIMALS),
            "ranks": {g: per_game[g][e] for g in games},
            "table_ranks": {g: own[g][e] for g in games},
        }
        for e in ordered
    ]
    incomplete = []
    for e in sorted(set(entrants) - set(complete)):
        missing = [g for g in games if e not in keys[g]]
        incomplete.append({"entrant": e, "missing": missing,
                           "has": [g for g in games if e in keys[g]]})
    incomplete.sort(key=lambda row: (len(row["missing"]), row["entrant"]))
    return {"games": list(games), "rule": RULE, "table": table, "incomplete": incomplete}
