"""Rendering night pages from their view model with Jinja2 (autoescaped templates).

One environment for every night page; the caller says where static files and
links point, so the same templates serve `cogolf serve` and a published site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import jinja2

from cogolf.pages.nights import NightSummary
from cogolf.pages.nights_view import Night

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"

# No inline script or handler, nothing from another origin: every script and style is
# one of our files, so an escaped name that somehow became markup still could not run.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_night(
    night: Night,
    *,
    static_root: str = "/static/",
    home: str = "/",
    live: str | None = None,
    scripts: bool = True,
    csp_meta: str | None = None,
) -> str:
    """`live`: the progress URL a running night's page polls; `csp_meta`: the policy a
    page without response headers (a published file) carries in a meta tag."""
    return environment().get_template("night.html").render(
        night=night, static_root=static_root, home=home, live=live, scripts=scripts,
        csp_meta=csp_meta,
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
    return (
        environment()
        .get_template(name)
        .render(nights=nights, night_href=night_href, static_root=static_root, home=home)
    )
