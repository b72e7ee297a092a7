"""The Cogolf standings of a night, as a pure function of its records.

One document holds everything (`standings.json`): the per-entrant table, the
head-to-head margins, the ratings, the void and unplayed matches. Every list is
sorted by a key that does not depend on the order the files were read in, and
every float is rounded, so the same replays give byte-identical JSON. The
night's games scored from files (golf, Commit-0, project) add their own tables
beside this one under `games`, and `combined` ranks entrants across all of them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cogolf.game import GameTable
from cogolf.league import ratings as bt
from cogolf.league.combined import combined_table
from cogolf.league.records import NightRecords, Played
from cogolf.league.results import ResultRecords
from cogolf.league.tables import game_tables

STANDINGS_FORMAT = "cogolf-standings"
STANDINGS_VERSION = 4  # 2: solo games and the combined table; 3: the plan; 4: likelihood intervals
GAME = "cogolf"
WIN_POINTS = 3
DRAW_POINTS = 1
DEFAULT_ANCHOR = "literalist"
RATING_DECIMALS = 1


@dataclass
class Line:
    """One entrant's row of the table, accumulated match by match."""

    name: str
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0
    score_for: int = 0
    score_against: int = 0
    breaches: int = 0
    breaches_taken: int = 0
    par_fails: int = 0
    illegal_tests: int = 0
    tests_fired: int = 0
    fallbacks: int = 0
    fallback_causes: Counter[str] = field(default_factory=Counter)
    void: int = 0

    @property
    def margin(self) -> int:
        return self.score_for - self.score_against

    def add(self, played: Played, slot: int) -> None:
        r = played.result
        self.matches += 1
        if r.winner is None:
            self.draws += 1
            self.points += DRAW_POINTS
        elif r.winner == slot:
            self.wins += 1
            self.points += WIN_POINTS
        else:
            self.losses += 1
        self.score_for += r.scores[slot]
        self.score_against += r.scores[1 - slot]
        self.breaches += r.breaches[slot]
        self.breaches_taken += r.breaches_taken[slot]
        self.par_fails += r.par_fails[slot]
        self.illegal_tests += r.illegal_tests[slot]
        self.tests_fired += r.tests_fired[slot]
        self.fallbacks += r.fallbacks[slot]
        self.fallback_causes.update(r.fallback_causes[slot])

    def doc(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "matches": self.matches,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "points": self.points,
            "margin": self.margin,
            "score_for": self.score_for,
            "score_against": self.score_against,
            "breaches": self.breaches,
            "breaches_taken": self.breaches_taken,
            "par_fails": self.par_fails,
            "illegal_tests": self.illegal_tests,
            "tests_fired": self.tests_fired,
            "fallbacks": self.fallbacks,
            "fallback_causes": dict(sorted(self.fallback_causes.items())),
            "void": self.void,
        }


def entrant_names(records: NightRecords) -> list[str]:
    names: set[str] = set()
    if records.manifest is not None:
        names.update(e.name for e in records.manifest.entrants)
    if records.plan is not None:
        names.update(n for p in records.plan.matches for n in p.names)
    for rec in (*records.played, *records.void):
        names.update(rec.names)
    return sorted(names)


def head_to_head(names: Sequence[str], played: Sequence[Played]) -> dict[str, dict[str, int]]:
    """Total score margin of each entrant (row) against each opponent (column)."""
    h2h = {a: {b: 0 for b in names if b != a} for a in names}
    for p in played:
        a, b = p.names
        d = p.result.scores[0] - p.result.scores[1]
        h2h[a][b] += d
        h2h[b][a] -= d
    return h2h


def _mini_league(group: Sequence[str], played: Sequence[Played]) -> dict[str, tuple[int, int]]:
    """Points and margin of each member of a tied group, counting only games among them."""
    members = set(group)
    pts = dict.fromkeys(group, 0)
    margin = dict.fromkeys(group, 0)
    for p in played:
        a, b = p.names
        if a not in members or b not in members:
            continue
        r = p.result
        d = r.scores[0] - r.scores[1]
        margin[a] += d
        margin[b] -= d
        if r.winner is None:
            pts[a] += DRAW_POINTS
            pts[b] += DRAW_POINTS
        else:
            pts[p.names[r.winner]] += WIN_POINTS
    return {n: (pts[n], margin[n]) for n in group}


def order_table(lines: dict[str, Line], played: Sequence[Played]) -> list[tuple[int | None, Line]]:
    """Rows by points; equal points broken by head-to-head (points, then margin, among
    the tied entrants only), then total margin; rows still equal share a rank. Entrants
    with no scored match are unrated: listed last, without a rank."""
    by_points: dict[int, list[str]] = {}
    for line in lines.values():
        if line.matches:
            by_points.setdefault(line.points, []).append(line.name)
    ranked: list[tuple[int | None, Line]] = []
    for pts in sorted(by_points, reverse=True):
        group = sorted(by_points[pts])
        mini = _mini_league(group, played) if len(group) > 1 else {group[0]: (0, 0)}

        def key(name: str, mini: dict[str, tuple[int, int]] = mini) -> tuple[int, int, int]:
            return (-mini[name][0], -mini[name][1], -lines[name].margin)

        for name in sorted(group, key=lambda n: (key(n), n)):
            position: int | None = len(ranked) + 1
            if ranked and ranked[-1][1].points == pts and key(ranked[-1][1].name) == key(name):
                position = ranked[-1][0]
            ranked.append((position, lines[name]))
    ranked += [(None, lines[n]) for n in sorted(lines) if not lines[n].matches]
    return ranked


def _round(x: float) -> float:
    return round(x, RATING_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0


def rating_doc(names: Sequence[str], played: Sequence[Played], anchor: str) -> dict[str, Any]:
    index = {n: i for i, n in enumerate(names)}
    games = [
        bt.Game(index[p.names[0]], index[p.names[1]], p.result.scores[0] - p.result.scores[1])
        for p in played
    ]
    matches = Counter(n for p in played for n in p.names)
    anchor_idx = index.get(anchor)
    rated = bt.rate(len(names), games, anchor_idx) if names else []
    rows = sorted(
        (
            {
                "name": n,
                "rating": _round(r.rating),
                "low": _round(r.low),
                "high": _round(r.high),
                "matches": matches[n],
                "too_few_matches": matches[n] < bt.MIN_MATCHES,
            }
            for n, r in zip(names, rated, strict=True)
        ),
        key=lambda row: (-row["rating"], row["name"]),
    )
    # Overlap is not transitive, so no grouping into tiers is exact: each entrant lists the
    # entrants its interval overlaps, and ranks below exactly those whose interval lies wholly
    # above its own (kept monotone down the table).
    floor = 0
    for row in rows:
        above = sum(1 for o in rows if o["low"] > row["high"])
        floor = max(floor, above + 1)
        row["rank"] = floor
        row["tied_with"] = [
            o["name"]
            for o in rows
            if o is not row and o["low"] <= row["high"] and row["low"] <= o["high"]
        ]
    return {
        "model": (
            f"Bradley-Terry, margin-aware outcome (draw 0.5, win {bt.WIN_FLOOR}..1.0 at a margin "
            f"of {bt.MARGIN_CAP}+), one virtual draw per entrant, Elo scale"
        ),
        "anchor": anchor if anchor_idx is not None else None,
        "anchor_rating": bt.ANCHOR_RATING,
        "centre": "anchor" if anchor_idx is not None else "mean",
        "interval": bt.INTERVAL,
        "interval_method": "profile likelihood of the difference to the centre (chi-squared, 1 df)",
        "min_matches": bt.MIN_MATCHES,
        "entrants": rows,
    }


def compute(
    records: NightRecords,
    anchor: str | None = None,
    *,
    solo: ResultRecords | None = None,
) -> dict[str, Any]:
    """The standings document. `anchor` defaults to the manifest's, then `literalist`."""
    if anchor is None:
        anchor = records.manifest.anchor if records.manifest is not None else DEFAULT_ANCHOR
    names = entrant_names(records)
    played = sorted(records.played, key=lambda p: p.match_id)
    scored = {n for p in played for n in p.names}
    void = sorted(records.void, key=lambda v: v.match_id)
    lines = {n: Line(n) for n in names}
    for p in played:
        for slot in (0, 1):
            lines[p.names[slot]].add(p, slot)
    for v in void:
        for name in v.names:
            lines[name].void += 1
    table = [
        {"rank": pos, **line.doc(), **({} if pos is not None else {"unrated": True})}
        for pos, line in order_table(lines, played)
    ]
    done = {p.match_id for p in played} | {v.match_id for v in void}
    plan = records.plan
    if plan is not None:
        scheduled: list[str] | None = sorted(p.match_id for p in plan.matches)
    else:
        scheduled = sorted(records.manifest.matches) if records.manifest is not None else None
    cogolf = {
        "matches": {
            "scheduled": len(scheduled) if scheduled is not None else None,
            "played": len(played),
            "void": len(void),
            "unplayed": [mid for mid in scheduled if mid not in done] if scheduled else [],
        },
        # The plan every replay was screened against; None: none was (an unplanned night).
        "plan": {"revision": plan.revision, "matches": len(plan.matches)} if plan else None,
        "points": {"win": WIN_POINTS, "draw": DRAW_POINTS, "loss": 0},
        "table": table,
        "head_to_head": head_to_head(names, played),
        "ratings": {
            **rating_doc([n for n in names if n in scored], played, anchor),
            "unrated": [n for n in names if n not in scored],
        },
        "void": [{"match_id": v.match_id, "names": list(v.names), "cause": v.cause} for v in void],
        "results": [
            {
                "match_id": p.match_id,
                "names": list(p.names),
                "scores": list(p.result.scores),
                "winner": p.names[p.result.winner] if p.result.winner is not None else None,
                "reason": p.result.reason,
            }
            for p in played
        ],
    }
    problems = [*records.problems, *(solo.problems if solo is not None else [])]
    tables = {
        GAME: GameTable(cogolf, {r["name"]: (float(r["rank"]),) for r in table if r["matches"]}),
        **game_tables(solo or ResultRecords(), records.manifest, problems),
    }
    everyone = set(names)
    for t in tables.values():
        everyone.update(t.keys)
        for rows in (t.doc.get("table", []), t.doc.get("combined", [])):
            everyone.update(row["entrant"] for row in rows if "entrant" in row)
    return {
        "format": STANDINGS_FORMAT,
        "format_version": STANDINGS_VERSION,
        "night": records.night,
        "problems": sorted(problems),
        "games": {game: t.doc for game, t in tables.items()},
        "combined": combined_table(tables, sorted(everyone)),
    }


def to_json(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
