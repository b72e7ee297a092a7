"""The page of a file entrant's golf course in a night, from its result file.

An LLM entrant's golf cells link to its live replay; an entrant that handed in files
has none, so its cells link here: the same golf page, built from the result document
the night wrote (each hole's status, score and bytes, its public tests with what the
code returned, its private tests as counts, why it failed). Its sources stay in the
entrant's folder: this page neither reads nor publishes them. The document is read
as any night file a hand may have edited (size, depth and type checked, each field
as it may be shown).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.pages.fields import MAX_HOLES, as_dict, as_float, as_list
from cogolf.pages.golf_view import GolfBuilder, GolfMatch
from cogolf.pages.nights import read_json
from cogolf.pages.render import render_match, render_standalone

MAX_RESULT_BYTES = 8 * 1024 * 1024  # a night's golf result is capped so when it is read
FILES_REASON = "scored from the entrant's files"


def result_view(doc: Any, entrant: str, course: str) -> GolfMatch | None:
    """The golf page's view of one result document (None: not a golf result of this
    entrant's course, whatever its file is named)."""
    if not isinstance(doc, dict) or doc.get("model") != entrant or doc.get("course") != course:
        return None
    holes = [h for h in as_list(doc, "holes") if isinstance(h, dict)][:MAX_HOLES]
    built = GolfBuilder()
    built.feed({"kind": "header", "match_id": f"{entrant}.{course}", "holes": len(holes),
                "config": {"course": course, "model": entrant}})
    total = 0.0
    for n, hole in enumerate(holes, 1):
        built.feed({"kind": "hole_start", "hole": n, "key": hole.get("hole"),
                    "title": hole.get("title")})
        total += as_float(hole, "score")
        built.feed({"kind": "hole_score", "hole": n, "result": hole, "total": total})
    totals = as_dict(doc, "totals")
    built.feed({"kind": "result", "reason": FILES_REASON, "model": entrant,
                "score": totals.get("score") if "score" in totals else total})
    view = built.build()
    if view is not None:
        view.files = True
    return view


def result_page_html(path: Path, *, entrant: str, course: str, back: str, night: str,
                     within: str, standalone: bool = False) -> str | None:
    """The page of the result at `path` (a regular file inside `within`: NightFileError
    otherwise), or None when it is no golf result."""
    view = result_view(read_json(path, MAX_RESULT_BYTES, within), entrant, course)
    if view is None:
        return None
    up = {"back": back, "back_label": f"League night {night}"}
    return render_standalone(view, **up) if standalone else render_match(view, **up)
