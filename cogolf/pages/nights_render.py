"""Rendering night pages from their view model with Jinja2 (autoescaped templates).

The match pages' environment (`render.ENV`) renders them too; the caller says where
static files and links point, so the same templates serve `cogolf serve` and a
published site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cogolf.pages.nights import NightSummary
from cogolf.pages.nights_view import Night
from cogolf.pages.render import ENV

# A published page without script and without response headers: its policy in a meta tag.
STATIC_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'"
)


def render_night(
    night: Night,
    *,
    static_root: str = "/static/",
    home: str = "/",
    live: str | None = None,
    scripts: bool = True,
    csp_meta: str | None = None,
    match_base: str = "",
) -> str:
    """`live`: the progress URL a running night's page polls; `csp_meta`: the policy a
    page without response headers (a published file) carries in a meta tag; `match_base`:
    where the night's match pages are (`<match_base><match id>`), for the matches in play."""
    return ENV.get_template("night.html").render(
        night=night, static_root=static_root, home=home, live=live, night_script=scripts,
        csp_meta=csp_meta or "", match_base=match_base,
    )  # fmt: skip


def render_night_list(
    nights: Sequence[NightSummary],
    night_href: Callable[[str], str],
    *,
    static_root: str = "/static/",
    home: str = "/",
    page: bool = True,
) -> str:
    """The nights index page, or (page=False) only the `night_list.html` section for `/`."""
    name = "night_index.html" if page else "night_list.html"
    return ENV.get_template(name).render(
        nights=nights, night_href=night_href, static_root=static_root, home=home
    )
