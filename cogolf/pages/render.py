"""Rendering the view model as HTML: autoescaped Jinja templates inside the package.

Every string from a bot (names, notes, whys, values, source) reaches a page only
through autoescaping; the pages' scripts are files served from `/static` (or,
in a stand-alone file, inline with their hash in the policy), so the
Content-Security-Policy can forbid every inline script, inline handler and
outside origin.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from cogolf.pages.cogolf_view import SpecLookup
from cogolf.pages.view import MatchView, view_from_file

# Served with every page: scripts and styles only from this server, no inline
# handler or script, no frames, no forms, nothing fetched from elsewhere
# ('self' covers the spectators' websocket of the same host).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("cogolf.pages", "templates"),
    autoescape=True,  # every template, whatever its name
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_PAGE_DEFAULTS: dict[str, Any] = {
    "csp_meta": "",
    "inline_css": "",
    "inline_js": "",
    "standalone": False,
}


def static_dir() -> Path:
    return Path(str(resources.files("cogolf.pages") / "static"))


def _static(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


@dataclass
class MatchRow:
    """One line of the match list on `/`."""

    match_id: str
    game: str
    seats: str
    hole: str
    score: str
    status: str


def page_title(view: MatchView) -> str:
    if view.game == "golf":
        return f"golf {view.course}: {view.match_id}"
    return f"{view.aliases[0]} v {view.aliases[1]}: {view.match_id}"


def render_match(view: MatchView, *, live: bool = False) -> str:
    """The match page as `cogolf serve` serves it (scripts and styles from /static)."""
    return ENV.get_template("match.html").render(
        **_PAGE_DEFAULTS, view=view, live=live, page_title=page_title(view)
    )


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_standalone(view: MatchView) -> str:
    """The same match page as one file: style and script inline, allowed by their
    hashes, so the policy still forbids anything else inline or from outside."""
    css, js = _static("style.css"), _static("match.js")
    csp = (
        f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return ENV.get_template("match.html").render(
        view=view,
        live=False,
        page_title=page_title(view),
        csp_meta=csp,
        inline_css=css,
        inline_js=js,
        standalone=True,
    )


def standalone_from_file(path: Path, specs: SpecLookup | None = None) -> str:
    """A journal file's stand-alone match page (raises `PageError` naming the line)."""
    return render_standalone(view_from_file(path, specs=specs))


def render_index(live: list[MatchRow], finished: list[MatchRow]) -> str:
    return ENV.get_template("index.html").render(**_PAGE_DEFAULTS, live=live, finished=finished)
