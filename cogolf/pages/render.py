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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from cogolf.deck import Deck, PublicDeck
from cogolf.pages.golf_view import GolfMatch
from cogolf.pages.view import MatchView, deck_specs, view_from_file

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
# What `base.html` reads, for a page served by `cogolf serve`; `standalone_page` overrides.
ENV.globals.update(
    csp_meta="",  # the policy of a stand-alone file (a served page gets it as a header)
    inline_css="",
    inline_scripts=[],
    scripts=[],  # script modules under /static to load
    standalone=False,
    static_root="/static/",  # where style.css and the scripts are (a published site: relative)
    home="/",  # the brand's link
    back="",  # a link up (a night's match page: to the night), with `back_label`
    back_label="",
)


_TOKEN_END = re.compile(r"([,:\[\]{}])")


def tokens(value: Any) -> markupsafe.Markup:
    """A value's text, escaped, with a line-break opportunity after each `,` `:` bracket
    and brace: long test values wrap between their tokens, not inside a number or word."""
    escaped = str(markupsafe.escape(str(value)))  # holds no `<`: inserting tags is safe
    return markupsafe.Markup(_TOKEN_END.sub(r"\1<wbr>", escaped))


ENV.filters["tokens"] = tokens


def static_dir() -> Path:
    return Path(str(resources.files("cogolf.pages") / "static"))


def _static(name: str) -> str:
    return (static_dir() / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(template: str, *, scripts: Sequence[str] = (), **context: Any) -> str:
    """A page as `cogolf serve` serves it: style and `scripts` (names under
    `static/`) loaded from /static, the policy sent as a header (`PAGE_HEADERS`)."""
    return ENV.get_template(template).render(scripts=list(scripts), **context)


def standalone_page(template: str, *, scripts: Sequence[str] = (), **context: Any) -> str:
    """The same page as one file that opens without a server: the stylesheet and the
    `scripts` inline, allowed by their hashes in a `<meta>` policy that still forbids
    anything else inline or from elsewhere."""
    css = _static("style.css")
    inline = [_static(name) for name in scripts]
    script_src = " ".join(_sha256(js) for js in inline) or "'none'"
    csp = (
        f"default-src 'none'; script-src {script_src}; style-src {_sha256(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return ENV.get_template(template).render(
        csp_meta=csp, inline_css=css, inline_scripts=inline, standalone=True, **context
    )


@dataclass
class MatchRow:
    """One line of the match list on `/`."""

    match_id: str
    game: str
    seats: str
    hole: str
    score: str
    status: str
    winner: str = ""  # a finished two-seat match's winner (its seat), or "draw"


def page_title(view: MatchView) -> str:
    if isinstance(view, GolfMatch):
        return f"golf {view.course}: {view.match_id}"
    return f"{view.aliases[0]} v {view.aliases[1]}: {view.match_id}"


def render_match(view: MatchView, *, live: bool = False, **context: Any) -> str:
    """The match page as `cogolf serve` serves it; `context`: page defaults to override
    (`back`, `back_label`)."""
    return render_page(
        "match.html",
        scripts=["match.js"],
        view=view,
        live=live,
        page_title=page_title(view),
        **context,
    )


def render_standalone(view: MatchView, **context: Any) -> str:
    """The match page as one self-contained file (`cogolf replay FILE --html`)."""
    return standalone_page(
        "match.html",
        scripts=["match.js"],
        view=view,
        live=False,
        page_title=page_title(view),
        **context,
    )


def standalone_from_file(path: Path, deck: Deck | PublicDeck | None = None) -> str:
    """A journal file's self-contained match page; `deck` supplies a Cogolf match's
    spec texts. Raises `PageError` naming the file and line of a journal it cannot show."""
    return render_standalone(view_from_file(path, specs=deck_specs(deck)))


def not_found_page(what: str, **context: Any) -> str:
    """The 404 page: what was not found, and a way home (and up, with `back`)."""
    return render_page("not_found.html", what=what, hint=context.pop("hint", ""), **context)


def render_index(live: list[MatchRow], finished: list[MatchRow], **context: Any) -> str:
    """`/`; `context` reaches the template (for more sections, e.g. league nights)."""
    return render_page("index.html", scripts=["index.js"], live=live, finished=finished, **context)
