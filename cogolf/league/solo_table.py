"""The solo games' tables and the combined table, as text, from the standings document."""

from __future__ import annotations

from typing import Any

from cogolf.games.project.results import attempt_cells
from cogolf.league.grid import grid
from cogolf.text import clip

NAME_WIDTH = 20
GAME_TITLES = {"cogolf": "Cogolf", "golf": "golf", "commit0": "Commit-0", "project": "project"}


def _void(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    out = ["  void (not scored):"]
    for v in rows:
        what = f"{v['item']} attempt {v['attempt']}" if v["attempt"] else v["item"]
        out.append(f"    {v['entrant']} {what}: {v['cause']}")
    return out


def _golf(game: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for course in game["courses"]:
        rows = [
            [
                str(r["rank"]),
                clip(r["entrant"], NAME_WIDTH),
                f"{r['score']:.2f}",
                str(r["raw_bytes"]),
                f"{r['penalty']:.2f}",
                f"{_pct(r['tests_passed'], r['tests_total'])} "
                f"({r['tests_passed']}/{r['tests_total']})",
                f"{r['holes_passed']}/{r['holes_total']}",
            ]
            for r in game["per_course"][course]
        ]
        out += ["", f"Golf: {course} (score = bytes + penalty x (1 - correctness)^2)"]
        out += grid(["Rank", "Entrant", "Score", "Raw Bytes", "Penalty", "Correctness",
                     "Holes Passed"], rows, left=2)
    if len(game["courses"]) > 1:
        out += ["", f"Golf combined ({', '.join(game['courses'])}): total score"]
        rows = [
            [
                str(r["rank"]) if r["rank"] is not None else "-",
                clip(r["entrant"], NAME_WIDTH),
                f"{r['score']:.2f}",
                *[f"{r['courses'][c]:.2f}" if c in r["courses"] else "-"
                  for c in game["courses"]],
                ", ".join(r.get("missing") or []) or "",
            ]
            for r in game["combined"]
        ]
        out += grid(["#", "entrant", "total", *game["courses"], "missing"], rows, left=2)
    return out + _void(game["void"])


def _pct(p: int, t: int) -> str:
    return f"{100.0 * p / t:.0f}%" if t else "0%"


def _commit0(game: dict[str, Any]) -> list[str]:
    tasks = game["tasks"]
    rows = [
        [
            str(r["rank"]),
            clip(r["entrant"], NAME_WIDTH),
            f"{r['mean_pass_rate']:.3f}",
            *["-" if r["per_task"][t] is None else f"{r['per_task'][t]:.3f}" for t in tasks],
        ]
        for r in game["table"]
    ]
    out = ["", "Commit-0: mean pass rate over the night's libraries ('-': no result, counts 0)"]
    return out + grid(["#", "entrant", "mean", *tasks], rows, left=2) + _void(game["void"])


def _project(game: dict[str, Any]) -> list[str]:
    tasks, n = game["tasks"], game["out_of"]
    rows = [
        [
            str(r["rank"]),
            clip(r["entrant"], NAME_WIDTH),
            *[f"{r['per_task'][t]:.2f}/{n}" + ("" if r["attempts"][t] == n else
                                               f" ({r['attempts'][t]} run)") for t in tasks],
            f"{r['total']:.2f}/{n * len(tasks)}",
        ]
        for r in game["table"]
    ]
    out = ["", f"Project: points per task, the sum of {n} attempts"]
    out += grid(["#", "entrant", *tasks, "total"], rows, left=2)
    detail = [
        [clip(r["entrant"], NAME_WIDTH), t, *attempt_cells(r.get("breakdown", {}).get(t, []), n)]
        for r in game["table"]
        for t in tasks
    ]
    if detail:
        out += ["", "  per attempt: points, floor (F) and signal (S) checks passed/total"]
        out += grid(["entrant", "task", *[f"#{i}" for i in range(1, n + 1)]], detail, left=2)
    return out + _void(game["void"])


def _combined(combined: dict[str, Any]) -> list[str]:
    games = combined["games"]
    titles = [GAME_TITLES.get(g, g) for g in games]
    rows = [
        [
            str(r["rank"]),
            clip(r["entrant"], NAME_WIDTH),
            f"{r['mean_rank']:.3f}",
            *[str(r["ranks"][g]) for g in games],
        ]
        for r in combined["table"]
    ]
    out = ["", f"Combined ({', '.join(titles)}): mean of per-game ranks among complete entrants; "
           "equal means share a rank"]
    out += grid(["#", "entrant", "mean rank", *titles], rows, left=2)
    if combined["incomplete"]:
        out.append("  incomplete (no result in every game):")
        for r in combined["incomplete"]:
            missing = ", ".join(GAME_TITLES.get(g, g) for g in r["missing"])
            out.append(f"    {r['entrant']}: missing {missing}")
    return out


def render_solo(doc: dict[str, Any]) -> list[str]:
    games = doc["games"]
    out: list[str] = []
    if "golf" in games:
        out += _golf(games["golf"])
    if "commit0" in games:
        out += _commit0(games["commit0"])
    if "project" in games:
        out += _project(games["project"])
    # A Cogolf-only night's combined table is its Cogolf table again: not printed.
    if "combined" in doc and len(doc["combined"]["games"]) > 1:
        out += _combined(doc["combined"])
    return out
