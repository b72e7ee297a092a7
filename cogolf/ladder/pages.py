"""`/ladder` and `/ladder/bots/NAME` in the browser, and `cogolf ladder publish`.

Drawn from the standings documents (`standings.py`) with the pages' own templates,
autoescaping and policy: bot names are anyone's text. The table's interval bars and
a bot's rating plot are SVG whose coordinates are computed here (no inline style or
script); `/ladder` redraws itself every 2 s from the server (`static/ladder.js`).
"""

from __future__ import annotations

import datetime
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from cogolf.pages.nights_view import rating_scale, scale_percent
from cogolf.pages.render import render_page
from cogolf.pages.routes import html, wants_html

PLOT_WIDTH = 560
PLOT_HEIGHT = 180
PLOT_PAD = 28


def _ticks(scale: tuple[float, float], count: int = 4) -> list[float]:
    lo, hi = scale
    step = next((s for s in (10, 25, 50, 100, 200, 250, 500, 1000) if (hi - lo) / s <= count), 2000)
    first = math.ceil(lo / step) * step
    return [float(v) for v in range(int(first), int(hi) + 1, step)]


def when(at: float | None) -> str:
    if at is None:
        return "never"
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass
class Bar:
    low: float
    high: float
    mid: float


def table_rows(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[float, str]]]:
    """The rows with their bars (percent of the column), and the axis' ticks."""
    rows = [dict(r) for r in doc["bots"]]
    drawn = [r for r in rows if r["rating"] is not None and not r["too_few_matches"]]
    ticks: list[tuple[float, str]] = []
    if drawn:
        scale = rating_scale([r["low"] for r in drawn], [r["high"] for r in drawn])
        ticks = [(scale_percent(v, scale), f"{v:g}") for v in _ticks(scale)]
        for r in drawn:
            r["bar"] = Bar(*(scale_percent(r[k], scale) for k in ("low", "high", "rating")))
    for r in rows:
        r.setdefault("bar", None)
        r["seen"] = when(r["last_seen"])
    return rows, ticks


@dataclass
class Plot:
    width: int
    height: int
    line: str  # polyline points of the rating
    band: str  # polygon points of the interval
    y_ticks: list[tuple[float, str]]
    points: list[tuple[float, float, str]]  # x, y, title


def rating_plot(history: list[dict[str, Any]]) -> Plot | None:
    if not history:
        return None
    lows = [h["low"] for h in history]
    highs = [h["high"] for h in history]
    lo, hi = rating_scale(lows, highs)
    n = len(history)
    span_x = (PLOT_WIDTH - 2 * PLOT_PAD) / max(n - 1, 1)

    def x(i: int) -> float:
        return PLOT_PAD + i * span_x

    def y(v: float) -> float:
        return PLOT_HEIGHT - PLOT_PAD - (v - lo) * (PLOT_HEIGHT - 2 * PLOT_PAD) / (hi - lo)

    line = " ".join(f"{x(i):.1f},{y(h['rating']):.1f}" for i, h in enumerate(history))
    upper = [f"{x(i):.1f},{y(h['high']):.1f}" for i, h in enumerate(history)]
    lower = [f"{x(i):.1f},{y(h['low']):.1f}" for i, h in reversed(list(enumerate(history)))]
    points = [
        (
            x(i),
            y(h["rating"]),
            f"after {h['match_id']}: {h['rating']:.0f} ({h['low']:.0f}–{h['high']:.0f})",
        )
        for i, h in enumerate(history)
    ]
    ticks = [(y(v), f"{v:g}") for v in _ticks((lo, hi))]
    return Plot(PLOT_WIDTH, PLOT_HEIGHT, line, " ".join(upper + lower), ticks, points)


def render_table(
    doc: dict[str, Any],
    *,
    live: bool = True,
    bot_href: str = "/ladder/bots/",
    static_root: str = "/static/",
    home: str = "/",
) -> str:
    rows, ticks = table_rows(doc)
    return render_page(
        "ladder.html",
        scripts=["ladder.js"] if live else [],
        doc=doc,
        rows=rows,
        ticks=ticks,
        live=live,
        bot_href=bot_href,
        static_root=static_root,
        home=home,
    )


def render_bot(
    data: dict[str, Any],
    *,
    match_links: bool = True,
    back: str = "/ladder",
    static_root: str = "/static/",
    home: str = "/",
) -> str:
    matches = [dict(m, when=when(m["at"])) for m in data["matches"]]
    if not match_links:
        for m in matches:
            m["url"] = None
    pauses = [
        dict(p, when=when(p["at"]), lifted=when(p["lifted_at"]) if p["lifted_at"] else "")
        for p in data["pauses"]
    ]
    return render_page(
        "ladder_bot.html",
        bot=data,
        plot=rating_plot(data["history"]),
        matches=matches,
        pauses=pauses,
        back=back,
        back_label="ladder",
        static_root=static_root,
        home=home,
    )


class LadderPages:
    """What the ladder's routes ask of the pages."""

    def wants(self, request: Request) -> bool:
        return wants_html(request)

    def table(self, doc: dict[str, Any]) -> Response:
        return html(render_table(doc))

    def bot(self, data: dict[str, Any]) -> Response:
        return html(render_bot(data))


class PublishError(ValueError):
    pass


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def publish(doc: dict[str, Any], bots: list[dict[str, Any]], out: Path) -> int:
    """The ladder as a static site: `index.html`, `bots/NAME.html`, `standings.json`,
    `static/`. Returns the number of files written. Links to match pages point at the
    servers that host them (a static site has no match pages of its own)."""
    import json
    import shutil

    from cogolf.pages.render import static_dir

    if out.is_symlink():
        raise PublishError(f"{out}: is a symbolic link")
    if out.exists() and any(out.iterdir()) and not (out / "standings.json").is_file():
        raise PublishError(f"{out}: not empty and not an earlier ladder publish")
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("bots", "static"):
        target = out / sub
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        target.mkdir()
    for name in ("style.css", "night.css"):
        shutil.copyfile(static_dir() / name, out / "static" / name)
    _write(
        out / "index.html",
        render_table(doc, live=False, bot_href="bots/", static_root="static/", home="index.html"),
    )
    _write(out / "standings.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")
    for data in bots:
        _write(
            out / "bots" / f"{data['name']}.html",
            render_bot(data, back="../index.html", static_root="../static/", home="../index.html"),
        )
    return 4 + len(bots)
