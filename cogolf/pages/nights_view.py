"""What a night page shows, computed from the night's files: the view model.

Everything a template needs is decided here (bar geometry, heat classes, links,
labels), so the templates stay plain and the same view serves `/nights/{name}`
and the published site. Every value from a file is treated as untrusted: shapes
are checked field by field (a wrong one becomes a listed problem, never a crash)
and text is left for the templates to escape.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogolf.pages.nights import (
    MATCH_ID,
    REPLAY_SUFFIX,
    NightFileError,
    NightFolders,
    read_json,
)

HEAT_STEPS = 4  # heat classes heat-n4..heat-p4 either side of zero
MAX_GOLF_FILES = 2000
GOLF_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,250}\.json")  # how results are named
MAX_STAMPED = 5000  # replays of a night without standings ordered by time; more by name
MAX_PLAYING = 64  # matches in play a page lists
MAX_ATTEMPTS_SHOWN = 20  # attempts of a project task shown under its points
MAX_TEXT = 200  # of a text a page polls for (real names are at most 48 characters)
MAX_GOLF_BYTES = 2 * 1024 * 1024  # one golf result file (real ones are a few KiB)
MAX_GOLF_TOTAL = 64 * 1024 * 1024  # all of a night's golf files one render reads
MAX_MIN_MATCHES = 1000  # a "too few matches" rule beyond this is no rule the league writes

Href = Callable[[str], str]  # match id -> link to its page


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: object, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return float(value)


def _int(value: object) -> int:
    return int(_num(value))


def signed(value: float) -> str:
    text = f"{value:+g}" if value else "0"
    return text


@dataclass
class Bar:
    """A rating with its 95% interval, in percent of the chart's width."""

    low: float
    high: float
    mid: float
    anchor: float | None


@dataclass
class Row:
    rank: int | None
    name: str
    matches: int
    wins: int
    draws: int
    losses: int
    points: int
    margin: int
    void: int
    breaches: int
    breaches_taken: int
    par_fails: int
    fallbacks: int
    rating: float | None = None
    low: float | None = None
    high: float | None = None
    tied: int = 0
    too_few: bool = False  # too few matches to say: no interval is drawn
    bar: Bar | None = None


@dataclass
class Cell:
    value: int | None  # None on the diagonal
    heat: str
    title: str


@dataclass
class MatchLine:
    match_id: str
    names: tuple[str, str]
    scores: tuple[int, int] | None
    winner: str | None
    outcome: str  # "win" | "draw" | "void" | "unplayed"
    note: str
    href: str | None


@dataclass
class GolfHole:
    hole: str
    title: str
    bytes: int
    score: float
    status: str
    tests: str


@dataclass
class Night:
    name: str
    status: str
    date: str
    rows: list[Row] = field(default_factory=list)
    scale: tuple[float, float] = (0.0, 1.0)
    ticks: list[tuple[float, str]] = field(default_factory=list)
    anchor: str | None = None
    min_matches: int | None = None  # the standings' "too few matches" rule
    h2h_names: list[str] = field(default_factory=list)
    h2h: list[list[Cell]] = field(default_factory=list)
    matches: list[MatchLine] = field(default_factory=list)
    counts: dict[str, int | None] = field(default_factory=dict)
    golf: dict[str, Any] | None = None
    commit0: dict[str, Any] | None = None
    project: dict[str, Any] | None = None
    combined: dict[str, Any] | None = None
    progress: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    has_standings: bool = False
    recent: list[tuple[str, str]] = field(default_factory=list)  # before standings: (id, href)


def rating_scale(lows: list[float], highs: list[float]) -> tuple[float, float]:
    lo, hi = min(lows), max(highs)
    pad = max((hi - lo) * 0.05, 10.0)
    return lo - pad, hi + pad


def scale_percent(value: float, scale: tuple[float, float]) -> float:
    lo, hi = scale
    return round(100.0 * (value - lo) / (hi - lo), 2) if hi > lo else 50.0


def _ticks(scale: tuple[float, float]) -> list[tuple[float, str]]:
    lo, hi = scale
    span = hi - lo
    step = next((s for s in (10, 25, 50, 100, 200, 250, 500, 1000) if span / s <= 4), 2000)
    first = math.ceil(lo / step) * step
    return [(scale_percent(v, scale), f"{v:g}") for v in range(int(first), int(hi) + 1, step)]


def heat_class(value: int, biggest: int) -> str:
    if value == 0 or biggest == 0:
        return "heat-0"
    step = max(1, min(HEAT_STEPS, math.ceil(HEAT_STEPS * abs(value) / biggest)))
    return f"heat-{'p' if value > 0 else 'n'}{step}"


def _rows(cogolf: dict[str, Any]) -> tuple[list[Row], dict[str, Any]]:
    ratings = _dict(cogolf.get("ratings"))
    rated = {
        r["name"]: r
        for r in _list(ratings.get("entrants"))
        if isinstance(r, dict) and isinstance(r.get("name"), str)
    }
    rows = []
    for t in _list(cogolf.get("table")):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        r = rated.get(t["name"], {})
        rank = t.get("rank")
        rating = _num(r["rating"]) if "rating" in r else None
        rows.append(
            Row(
                rank=rank if type(rank) is int else None,
                name=t["name"],
                matches=_int(t.get("matches")),
                wins=_int(t.get("wins")),
                draws=_int(t.get("draws")),
                losses=_int(t.get("losses")),
                points=_int(t.get("points")),
                margin=_int(t.get("margin")),
                void=_int(t.get("void")),
                breaches=_int(t.get("breaches")),
                breaches_taken=_int(t.get("breaches_taken")),
                par_fails=_int(t.get("par_fails")),
                fallbacks=_int(t.get("fallbacks")),
                rating=rating,
                low=None if rating is None else _num(r.get("low"), rating),
                high=None if rating is None else _num(r.get("high"), rating),
                tied=len(_list(r.get("tied_with"))),
                too_few=r.get("too_few_matches") is True,
            )
        )
    return rows, ratings


def _bars(night: Night, ratings: dict[str, Any]) -> None:
    # `_rows` gives a rated row its low and high (the rating itself when absent). A row
    # with too few matches has no bar, and its wide interval does not set the scale.
    rated = [(r, r.rating, r.low, r.high) for r in night.rows if not r.too_few]
    rows = [(r, v, lo, hi) for r, v, lo, hi in rated if v is not None and lo is not None
            and hi is not None]  # fmt: skip
    if not rows:
        return
    anchor_rating = _num(ratings.get("anchor_rating"), 1000.0)
    anchor = ratings.get("anchor")
    night.anchor = anchor if isinstance(anchor, str) else None
    extra = [anchor_rating] if night.anchor else []
    scale = rating_scale([lo for *_, lo, _ in rows] + extra, [hi for *_, hi in rows] + extra)
    night.scale = scale
    night.ticks = _ticks(scale)
    for r, value, lo, hi in rows:
        r.bar = Bar(
            low=scale_percent(lo, scale),
            high=scale_percent(hi, scale),
            mid=scale_percent(value, scale),
            anchor=scale_percent(anchor_rating, scale) if night.anchor else None,
        )


def _h2h(night: Night, cogolf: dict[str, Any]) -> None:
    matrix = _dict(cogolf.get("head_to_head"))
    names = [r.name for r in night.rows if r.name in matrix]
    biggest = max(
        (abs(_int(v)) for row in matrix.values() if isinstance(row, dict) for v in row.values()),
        default=0,
    )
    night.h2h_names = names
    for a in names:
        cells = []
        row = _dict(matrix.get(a))
        for b in names:
            if a == b:
                cells.append(Cell(None, "heat-self", a))
                continue
            v = _int(row.get(b))
            cells.append(Cell(v, heat_class(v, biggest), f"{a} against {b}: margin {signed(v)}"))
        night.h2h.append(cells)


def _matches(night: Night, cogolf: dict[str, Any], href: Href, replays: set[str]) -> None:
    for r in _list(cogolf.get("results")):
        if not isinstance(r, dict) or not isinstance(r.get("match_id"), str):
            continue
        names = [str(n) for n in _list(r.get("names"))[:2]] + ["?", "?"]
        scores = [_int(s) for s in _list(r.get("scores"))[:2]] + [0, 0]
        winner = r.get("winner") if isinstance(r.get("winner"), str) else None
        mid = r["match_id"]
        night.matches.append(
            MatchLine(
                mid, (names[0], names[1]), (scores[0], scores[1]), winner,
                "win" if winner else "draw", str(r.get("reason", "")),
                href(mid) if mid in replays else None,
            )
        )  # fmt: skip
    for v in _list(cogolf.get("void")):
        if not isinstance(v, dict) or not isinstance(v.get("match_id"), str):
            continue
        names = [str(n) for n in _list(v.get("names"))[:2]] + ["?", "?"]
        mid = v["match_id"]
        night.matches.append(
            # always linked: the page says why the match is void, with or without a replay
            MatchLine(mid, (names[0], names[1]), None, None, "void", str(v.get("cause", "")),
                      href(mid))
        )  # fmt: skip
    played = _dict(cogolf.get("matches"))
    for mid in _list(played.get("unplayed")):
        if isinstance(mid, str):
            night.matches.append(MatchLine(mid, ("", ""), None, None, "unplayed", "", None))
    night.matches.sort(key=lambda m: m.match_id)
    night.counts = {
        "scheduled": played.get("scheduled") if type(played.get("scheduled")) is int else None,
        "played": _int(played.get("played")),
        "void": _int(played.get("void")),
    }


def _golf_holes(
    folders: NightFolders, night: str, problems: list[str]
) -> dict[tuple[str, str], list[GolfHole]]:
    """Hole-by-hole golf detail from the result files (the standings keep totals only)."""
    out: dict[tuple[str, str], list[GolfHole]] = {}
    folder = folders.replays_dir(night) / "golf"
    try:
        names = sorted(e.name for e in os.scandir(folder) if GOLF_FILE.fullmatch(e.name))
    except OSError:
        return out
    budget = MAX_GOLF_TOTAL
    for name in names[:MAX_GOLF_FILES]:
        path = folder / name
        try:
            budget -= _size(path)
            if budget < 0:
                problems.append(f"golf/: more than {MAX_GOLF_TOTAL} bytes of result files; "
                                f"the rest are not shown")  # fmt: skip
                break
            doc = read_json(path, MAX_GOLF_BYTES, within=folders.replays_base(night))
        except NightFileError as exc:
            problems.append(f"golf/{exc}")
            continue
        if not isinstance(doc, dict):
            continue
        model, course = doc.get("model"), doc.get("course")
        if not isinstance(model, str) or not isinstance(course, str):
            continue
        holes = []
        for h in _list(doc.get("holes")):
            if not isinstance(h, dict):
                continue
            holes.append(
                GolfHole(
                    hole=str(h.get("hole", "")),
                    title=str(h.get("title", "")),
                    bytes=_int(h.get("bytes")),
                    score=round(_num(h.get("score")), 2),
                    status=str(h.get("status", "")),
                    tests=f"{_int(h.get('tests_passed'))}/{_int(h.get('tests_total'))}",
                )
            )
        out[(model, course)] = holes
    return out


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


GolfHref = Callable[[str, str], str]  # entrant, course -> its live replay's or result's page


def _golf(
    night: Night, doc: dict[str, Any], folders: NightFolders, golf_href: GolfHref | None
) -> None:
    courses = [c for c in _list(doc.get("courses")) if isinstance(c, str)]
    holes = _golf_holes(folders, night.name, night.problems)
    per_course = {}
    for c in courses:
        rows: list[dict[str, Any]] = []
        for r in _list(_dict(doc.get("per_course")).get(c)):
            if not isinstance(r, dict):
                continue
            name = str(r.get("entrant", ""))
            rows.append(
                {
                    "rank": r.get("rank") if type(r.get("rank")) is int else None,
                    "entrant": name,
                    "score": round(_num(r.get("score")), 2),
                    "bytes": _int(r.get("raw_bytes")),
                    "tests": f"{_int(r.get('tests_passed'))}/{_int(r.get('tests_total'))}",
                    "holes": f"{_int(r.get('holes_passed'))}/{_int(r.get('holes_total'))}",
                    "fallbacks": _int(r.get("fallbacks")),
                    "detail": holes.get((name, c), []),
                    # an LLM entrant played it live: its replay holds each hole's source;
                    # a file entrant's page is its result, hole by hole (`golf_result`)
                    "replay": golf_href(name, c) if golf_href is not None and (
                        folders.golf_replay(night.name, name, c) is not None
                        or folders.golf_result(night.name, name, c) is not None) else None,
                }
            )
        hole_names: list[str] = []
        for r in rows:
            for h in r["detail"]:
                if h.hole not in hole_names:
                    hole_names.append(h.hole)
        for r in rows:
            by = {h.hole: h for h in r["detail"]}
            r["cells"] = [by.get(h) for h in hole_names]
            r["links"] = [f"{r['replay']}#hole-{i}" if r["replay"] else None
                          for i in range(1, len(hole_names) + 1)]  # fmt: skip
        per_course[c] = {"rows": rows, "holes": hole_names}
    combined = []
    for r in _list(doc.get("combined")):
        if isinstance(r, dict):
            combined.append(
                {
                    "rank": r.get("rank") if type(r.get("rank")) is int else None,
                    "entrant": str(r.get("entrant", "")),
                    "score": round(_num(r.get("score")), 2),
                    "courses": {c: round(_num(v), 2) for c, v in _dict(r.get("courses")).items()},
                    "missing": [str(x) for x in _list(r.get("missing"))],
                }
            )
    night.golf = {
        "courses": courses,
        "per_course": per_course,
        "combined": combined,
        "void": _void(doc),
    }


def _void(doc: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {"entrant": str(v.get("entrant", "")), "item": str(v.get("item", "")),
         "cause": str(v.get("cause", ""))}
        for v in _list(doc.get("void")) if isinstance(v, dict)
    ]  # fmt: skip


def _commit0_why(d: dict[str, Any]) -> list[str]:
    """`0/48`, then the status and the first note when the run did not complete."""
    counts = f"{_int(d.get('passed'))}/{_int(d.get('total'))} tests"
    status = str(d.get("status", ""))[:MAX_TEXT]
    if status in ("", "ok"):
        return [counts]
    note = str(d.get("note", ""))[:MAX_TEXT]
    return [f"{counts} · {status}", *([note] if note else [])]


def _attempt_text(b: dict[str, Any]) -> str:
    """`#2 0.50 F1/1 S17/18`: an attempt's points, floor and signal checks passed/total."""
    parts = [f"#{_int(b.get('attempt'))}", f"{_num(b.get('points')):.2f}"]
    for label, letter in (("floor", "F"), ("signal", "S")):
        pair = _list(b.get(label))
        if len(pair) == 2:
            parts.append(f"{letter}{_int(pair[0])}/{_int(pair[1])}")
    status = str(b.get("status", ""))[:MAX_TEXT]
    if status not in ("", "ok"):
        parts.append(status)
    agent = _agent_text(b.get("agent"))
    return " ".join(parts) + (f" · {agent}" if agent else "")


def _cost_text(value: object) -> str:
    return f"{_num(value):.4f}" if isinstance(value, int | float) else "–"


def _agent_text(agent: object) -> str:
    """`agent ok, 1234 tok, cost 0.0123, 42 s`: what an agent's attempt spent (its status,
    tokens, cost and time); empty for a result handed in as files."""
    if not isinstance(agent, dict):
        return ""
    status = str(agent.get("status", ""))[:MAX_TEXT] or "?"
    tokens = _int(agent.get("input_tokens")) + _int(agent.get("output_tokens"))
    cost = agent.get("cost")
    spent = f", cost {_cost_text(cost)}" if isinstance(cost, int | float) else ""
    return f"agent {status}, {tokens} tok{spent}, {_num(agent.get('seconds')):.0f} s"


def _why(task: str, detail: dict[str, Any], breakdown: dict[str, Any],
         agents: dict[str, Any]) -> list[str]:
    """The lines under a task's number: Commit-0's counts and status, or each project
    attempt's points and checks; an agent's status, tokens, cost and time with each."""
    if task in detail or task in agents:
        agent = _agent_text(agents.get(task))
        return [*(_commit0_why(_dict(detail[task])) if task in detail else []),
                *([agent] if agent else [])]
    return [_attempt_text(_dict(b)) for b in _list(breakdown.get(task))[:MAX_ATTEMPTS_SHOWN]]


def _per_task_table(doc: dict[str, Any], value: str) -> dict[str, Any]:
    tasks = [t for t in _list(doc.get("tasks")) if isinstance(t, str)]
    rows = []
    for r in _list(doc.get("table")):
        if not isinstance(r, dict):
            continue
        per = _dict(r.get("per_task"))
        detail, breakdown = _dict(r.get("detail")), _dict(r.get("breakdown"))
        agents = _dict(r.get("agent"))  # Commit-0's, by task; a project's is per attempt
        rows.append({
            "rank": r.get("rank") if type(r.get("rank")) is int else None,
            "entrant": str(r.get("entrant", "")),
            "value": round(_num(r.get(value)), 3),
            "per_task": [None if per.get(t) is None else round(_num(per.get(t)), 3)
                         for t in tasks],
            # why each number is what it is, shown under it (no hover needed)
            "why": [_why(t, detail, breakdown, agents) for t in tasks],
            "complete": bool(r.get("complete")),
            "cost": _cost_text(r.get("cost")),  # the entrant's agents' total, if any
        })  # fmt: skip
    return {
        "tasks": tasks,
        "rows": rows,
        "costly": any(isinstance(_dict(r).get("cost"), int | float)
                      for r in _list(doc.get("table"))),
        "void": _void(doc),
        "out_of": _int(doc.get("out_of")) or None,
    }


def _combined(doc: dict[str, Any]) -> dict[str, Any]:
    games = [g for g in _list(doc.get("games")) if isinstance(g, str)]
    rows = []
    for r in _list(doc.get("table")):
        if isinstance(r, dict):
            ranks = _dict(r.get("ranks"))
            own = _dict(r.get("table_ranks")) or ranks  # older standings: the combined ones
            rows.append(
                {
                    "rank": r.get("rank") if type(r.get("rank")) is int else None,
                    "entrant": str(r.get("entrant", "")),
                    "mean_rank": round(_num(r.get("mean_rank")), 3),
                    "ranks": [ranks.get(g) if type(ranks.get(g)) is int else None for g in games],
                    "table_ranks": [
                        own.get(g) if type(own.get(g)) is int else None for g in games
                    ],
                }
            )
    incomplete = [
        {"entrant": str(r.get("entrant", "")),
         "missing": [str(g) for g in _list(r.get("missing"))]}
        for r in _list(doc.get("incomplete")) if isinstance(r, dict)
    ]  # fmt: skip
    return {
        "games": games,
        "rule": str(doc.get("rule", "")),
        "rows": rows,
        "incomplete": incomplete,
    }


def _recent_replays(folders: NightFolders, name: str, count: int = 50) -> list[str]:
    """The latest replays of a night without standings yet, newest first."""
    folder = folders.replays_dir(name)
    ids = folders.replay_ids(name)
    if len(ids) > MAX_STAMPED:  # a stat each would cost seconds: the last by name instead
        return sorted(ids, reverse=True)[:count]
    stamped = []
    for mid in ids:
        try:
            stamped.append(((folder / f"{mid}{REPLAY_SUFFIX}").lstat().st_mtime, mid))
        except OSError:
            continue
    return [mid for _, mid in sorted(stamped, reverse=True)[:count]]


def build_night(
    folders: NightFolders, name: str, href: Href, golf_href: GolfHref | None = None
) -> Night:
    """The view of one night from its files; unreadable parts become listed problems.
    `golf_href` links an LLM entrant's live golf replay (None: not linked)."""
    summary = folders.summary(name)
    night = Night(name=name, status=summary.status, date=summary.date)
    progress = folders.load_progress(name)
    night.progress = progress_doc(progress) if progress is not None else None
    if night.progress is not None:
        night.progress["links"] = [(mid, href(mid)) for mid in night.progress["playing"]]
    try:
        doc = folders.load_standings(name)
    except NightFileError as exc:
        night.problems.append(str(exc))
        doc = None
    if doc is None:
        night.recent = [(mid, href(mid)) for mid in _recent_replays(folders, name)]
        return night
    night.has_standings = True
    night.problems += [str(p) for p in _list(doc.get("problems"))]
    games = _dict(doc.get("games"))
    cogolf = _dict(games.get("cogolf"))
    night.rows, ratings = _rows(cogolf)
    least = ratings.get("min_matches")
    night.min_matches = least if type(least) is int and 0 < least <= MAX_MIN_MATCHES else None
    _bars(night, ratings)
    _h2h(night, cogolf)
    _matches(night, cogolf, href, folders.replay_ids(name))
    if "golf" in games:
        _golf(night, _dict(games["golf"]), folders, golf_href)
    if "commit0" in games:
        night.commit0 = _per_task_table(_dict(games["commit0"]), "mean_pass_rate")
    if "project" in games:
        night.project = _per_task_table(_dict(games["project"]), "total")
    if len(games) > 1:
        night.combined = _combined(_dict(doc.get("combined")))
    return night


def clock_text(seconds: float) -> str:
    """`1:02:03` or `2:03`, as the command line prints it."""
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def progress_doc(progress: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of a progress file a page polls for (numbers, names and match ids only)."""
    p = dict(progress or {})
    eta = p.get("eta_seconds")
    eta = _num(eta) if eta is not None else None
    solo = _dict(p.get("solo"))
    playing = [m for m in _list(p.get("playing"))[:MAX_PLAYING]
               if isinstance(m, str) and MATCH_ID.fullmatch(m)]  # fmt: skip
    return {
        "eta_seconds": eta,
        "eta": clock_text(eta) if eta is not None else "",
        "elapsed": clock_text(_num(p.get("elapsed_seconds"))),
        "playing": playing,
        "solo": {"done": _int(solo.get("done")), "total": _int(solo.get("total"))}
        if solo else None,
        "state": str(p.get("state", "none"))[:MAX_TEXT],
        "done": _int(p.get("done")),
        "total": _int(p.get("total")),
        "void": _int(p.get("void")),
        "updated_at": str(p.get("updated_at", ""))[:MAX_TEXT],
        "leaders": [
            {"name": str(r.get("name", ""))[:MAX_TEXT], "points": _int(r.get("points")),
             "margin": _int(r.get("margin"))}
            for r in _list(p.get("leaders"))[:10] if isinstance(r, dict)
        ],
    }  # fmt: skip
