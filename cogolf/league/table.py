"""The standings document as text, for the terminal.

Rendering reads only the JSON document, so a table printed by `league run` and
one printed later from `standings.json` are the same.
"""

from __future__ import annotations

from typing import Any

from cogolf.grid import grid as _grid
from cogolf.league.tables import render_games
from cogolf.text import clip

NAME_WIDTH = 20
TOO_FEW = "too few matches"
GAME_TITLES = {"cogolf": "Cogolf", "golf": "golf", "commit0": "Commit-0", "project": "project"}


def _signed(n: int) -> str:
    return f"{n:+d}" if n else "0"


def _tied(names: list[str], most: int = 3) -> str:
    """Who an entrant is tied with (intervals overlapping), at most `most` names shown."""
    shown = ", ".join(clip(n, NAME_WIDTH) for n in names[:most])
    return shown + (f" +{len(names) - most} more" if len(names) > most else "") or "-"


def _interval(row: dict[str, Any], anchor: str | None) -> str:
    if row.get("too_few_matches"):
        return TOO_FEW
    if row["name"] == anchor:  # 1000 by definition: the reference, not an estimate
        return "anchor"
    return f"[{row['low']:.1f}, {row['high']:.1f}]"


def _causes(causes: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in causes.items()) or "-"


def _ranks(row: dict[str, Any], game: str) -> str:
    """`4 (1)`: 4th in the game's own table, 1st among the complete entrants."""
    among = row["ranks"][game]
    own = row.get("table_ranks", {}).get(game, among)
    return str(own) if own == among else f"{own} ({among})"


def render_combined(combined: dict[str, Any]) -> list[str]:
    games = combined["games"]
    titles = [GAME_TITLES.get(g, g) for g in games]
    rows = [
        [
            str(r["rank"]),
            clip(r["entrant"], NAME_WIDTH),
            f"{r['mean_rank']:.3f}",
            *[_ranks(r, g) for g in games],
        ]
        for r in combined["table"]
    ]
    out = ["", f"Combined ({', '.join(titles)}): mean of per-game ranks among complete entrants; "
           "equal means share a rank; a game's cell is its table's rank, and in brackets the "
           "rank among complete entrants when that differs"]
    out += _grid(["#", "entrant", "mean rank", *titles], rows, left=2)
    if combined["incomplete"]:
        out.append("  incomplete (no result in every game):")
        for r in combined["incomplete"]:
            missing = ", ".join(GAME_TITLES.get(g, g) for g in r["missing"])
            out.append(f"    {r['entrant']}: missing {missing}")
    return out


def render(doc: dict[str, Any]) -> str:
    game = doc["games"]["cogolf"]
    out: list[str] = [f"Night {doc['night']}"]
    counts = game["matches"]
    scheduled = counts["scheduled"]
    out.append(
        f"  matches: {counts['played']} played, {counts['void']} void"
        + (f", {len(counts['unplayed'])} unplayed of {scheduled}" if scheduled else "")
    )
    plan = game.get("plan")
    if isinstance(plan, dict):
        out.append(f"  only planned matches count (plan revision {plan.get('revision')})")
    elif any(p.startswith("plan.json: ") for p in doc["problems"]):
        out.append("  UNPLANNED: every replay that verifies counts, planned or not "
                   "(see Problems)")
    out.append("")
    header = [
        "#",
        "entrant",
        "M",
        "W",
        "D",
        "L",
        "Pts",
        "margin",
        "br+",
        "br-",
        "par",
        "illegal",
        "fallbacks",
    ]
    rows = [
        [
            "-" if r["rank"] is None else str(r["rank"]),
            clip(r["name"], NAME_WIDTH),
            str(r["matches"]),
            str(r["wins"]),
            str(r["draws"]),
            str(r["losses"]),
            str(r["points"]),
            _signed(r["margin"]),
            str(r["breaches"]),
            str(r["breaches_taken"]),
            str(r["par_fails"]),
            str(r["illegal_tests"]),
            f"{r['fallbacks']} ({_causes(r['fallback_causes'])})" if r["fallbacks"] else "0",
        ]
        for r in game["table"]
    ]
    out += _grid(header, rows, left=2)
    out += [
        "  M matches; W/D/L won, drawn, lost; Pts 3 a win, 1 a draw; margin: its match scores",
        "  minus its opponents'; br+ breaches made (its tests that broke the opponent's code);",
        "  br- breaches taken; par: hidden par cases its code failed; illegal: its tests refused",
        "  as illegal; fallbacks: holes the fallback played for it, by cause",
    ]
    out += [
        "",
        "Ratings (Bradley-Terry, 95% likelihood interval; '=' marks a tie: intervals overlap)",
    ]
    rating = game["ratings"]
    rrows = []
    for r in rating["entrants"]:
        tied = "=" if r["tied_with"] else ""
        rrows.append(
            [
                f"{r['rank']}{tied}",
                clip(r["name"], NAME_WIDTH),
                f"{r['rating']:.1f}",
                _interval(r, rating["anchor"]),
            ]
        )
    # "tied with" is text: left-aligned after the grid's right-aligned numbers
    lines = _grid(["#", "entrant", "rating", "interval"], rrows, left=2)
    width = max(len(line) for line in lines)
    tied = ["tied with", "---------", *(_tied(r["tied_with"]) for r in rating["entrants"])]
    out += [f"{line.ljust(width)}  {t}" for line, t in zip(lines, tied, strict=True)]
    if rrows:
        out.append(
            "  # = 1 + the entrants whose interval lies wholly above this one's; tied with = "
            "the entrants whose interval overlaps it"
        )
    if any(r.get("too_few_matches") for r in rating["entrants"]):
        out.append(
            f"  {TOO_FEW}: under {rating.get('min_matches')} scored matches, when not even a "
            "clean sweep could set it apart (its interval is in standings.json)"
        )
    if rating.get("unrated"):
        out.append(f"  unrated (no scored match): {', '.join(rating['unrated'])}")
    anchor = rating["anchor"]
    out.append(
        f"  anchored: {anchor} = {rating['anchor_rating']:g}"
        if anchor
        else f"  no anchor entrant: the mean rating is {rating['anchor_rating']:g}"
    )
    names = [r["name"] for r in game["table"]]
    if len(names) > 1:
        out += ["", "Head to head (row's margin against column)"]
        short = [str(i + 1) for i in range(len(names))]
        h2h = game["head_to_head"]
        hrows = [
            [s, clip(a, NAME_WIDTH)] + ["." if a == b else _signed(h2h[a][b]) for b in names]
            for s, a in zip(short, names, strict=True)
        ]
        out += _grid(["", "entrant", *short], hrows, left=2)
    if game["void"]:
        out += ["", "Void (not scored)"]
        out += [f"  {v['match_id']}: {v['cause']}" for v in game["void"]]
    if counts["unplayed"]:
        out += ["", "Unplayed"] + [f"  {mid}" for mid in counts["unplayed"]]
    out += render_games(doc)
    # A Cogolf-only night's combined table is its Cogolf table again: not printed.
    if "combined" in doc and len(doc["combined"]["games"]) > 1:
        out += render_combined(doc["combined"])
    if doc["problems"]:
        out += ["", "Problems (files not used)"] + [f"  {p}" for p in doc["problems"]]
    return "\n".join(out)
