"""The pages `cogolf serve` adds to its JSON API: `/`, `/matches/{id}` for a browser,
and the stylesheet and scripts under `/static`.

A page reads the same data the public endpoints serve, through the same policy
(`server.disclosure.View`): the match's journal, cut to what may be seen now.
`GET /matches/{id}` stays the JSON document for every client that does not ask
for HTML (`Accept: text/html`), so the API is unchanged.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from markupsafe import escape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from cogolf.game import HostedGame
from cogolf.pages.fields import as_float, as_int, as_list, as_str, str_list
from cogolf.pages.nights import NightFolders, list_nights
from cogolf.pages.nights_routes import match_href, night_href, night_routes
from cogolf.pages.nights_view import progress_doc
from cogolf.pages.render import (
    PAGE_HEADERS,
    MatchRow,
    not_found_page,
    render_index,
    render_match,
    static_dir,
)
from cogolf.pages.view import PageError, build_view, deck_specs, decode_lines, disclosed
from cogolf.server.disclosure import ENDED, View
from cogolf.server.pages import ViewOf

RECENT = 50  # finished matches listed on `/`
LIVE_SHOWN = 100  # live matches listed on `/` (anyone may create matches: the page stays small)


def wants_html(request: Request) -> bool:
    """Whether the client names `text/html` as acceptable (a browser). `text/html;q=0`
    refuses it, and `*/*` alone is any client, which gets the JSON document."""
    for media_range in request.headers.get("accept", "").split(",")[:64]:
        kind, *params = (part.strip() for part in media_range.split(";"))
        if kind.lower() != "text/html":
            continue
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


def html(body: str, status: int = 200) -> Response:
    return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)


def _row(doc: dict[str, Any]) -> MatchRow:
    game = as_str(doc, "game", limit=40) or "cogolf"
    aliases = str_list(doc, "aliases", limit=120)
    names = str_list(doc, "names", limit=120)
    seats = [
        f"{a} ({n})" if n else a for a, n in zip(aliases, names + [""] * len(aliases), strict=False)
    ]
    scores = [as_float({"s": s}, "s") for s in as_list(doc, "scores")]
    status = as_str(doc, "status", limit=40)
    winner = ""
    if status == "finished" and game != "golf" and len(scores) == 2 and len(seats) == 2:
        winner = "draw" if scores[0] == scores[1] else seats[0 if scores[0] > scores[1] else 1]
    return MatchRow(
        match_id=as_str(doc, "match_id", limit=200),
        game=game,
        seats=" v ".join(seats),
        hole=f"{as_int(doc, 'hole')} / {as_int(doc, 'holes')}",
        score=" : ".join(f"{s:+g}" if game != "golf" else f"{s:g}" for s in scores),
        status=status,
        winner=winner,
    )


def match_rows(docs: Iterable[dict[str, Any]]) -> tuple[list[MatchRow], list[MatchRow], int]:
    """The most recent live matches, the most recent finished ones, and how many live
    matches are left out, from `GET /matches` documents."""
    live: list[dict[str, Any]] = []
    ended: list[dict[str, Any]] = []
    for doc in docs:
        (ended if doc.get("status") in ENDED else live).append(doc)
    for docs_ in (live, ended):
        docs_.sort(key=lambda d: as_float(d, "created_at"), reverse=True)
    shown = [_row(d) for d in live[:LIVE_SHOWN]]
    return shown, [_row(d) for d in ended[:RECENT]], len(live) - len(shown)


def match_page_body(
    path: Path, seen: View, snapshot: dict[str, Any], status: str, decks: dict[str, Any]
) -> str:
    """The page of one hosted match from its journal, as `seen` may see it (off the event
    loop); the spectators' snapshot stands in for a journal not yet written."""
    try:
        records = disclosed(decode_lines(path.read_bytes(), path.name), full=seen.full)
    except (OSError, PageError):
        records = []
    deck_name = records[0].get("deck_name") if records else None
    deck = decks.get(deck_name) if isinstance(deck_name, str) else None
    view = build_view(
        records, specs=deck_specs(deck), snapshot=None if records else snapshot, status=status
    )
    if view is None:
        raise PageError("this match has no journal yet")
    return render_match(view, live=status not in ENDED)


def page_routes(
    matches: Callable[[], Iterable[HostedGame]],
    view_of: ViewOf,
    index_extra: Callable[[], dict[str, Any]] | None = None,
) -> list[BaseRoute]:
    """`/` and the static files; `index_extra` returns more template variables for `/`
    (league nights), off the event loop."""

    def render(live: list[MatchRow], finished: list[MatchRow], more_live: int) -> str:
        extra = index_extra() if index_extra else {}
        return render_index(live, finished, more_live=more_live, **extra)

    async def index(request: Request) -> Response:
        docs = [view_of(h, request).status(h.status_doc()) for h in matches()]
        live, finished, more_live = match_rows(docs)
        return html(await run_in_threadpool(render, live, finished, more_live))

    return [
        Route("/", index),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]


class Rendered:
    """Match pages already drawn, by what they were drawn from (the journal's size and
    time, the view, the status): a client asking for a page again and again costs a
    file's `stat`, not a render. Renders also take turns, one at a time, so a flood of
    page requests cannot crowd the event loop (and the seats' deadlines) out of the
    interpreter with dozens of rendering threads."""

    MOST = 64  # pages kept (a 9-hole page is about 100 kB)

    def __init__(self) -> None:
        self.pages: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._turns: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            WeakKeyDictionary()
        )

    def turn(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        return self._turns.setdefault(loop, asyncio.Semaphore(1))

    def get(self, key: tuple[Any, ...] | None) -> str | None:
        if key is None or key not in self.pages:
            return None
        self.pages.move_to_end(key)
        return self.pages[key]

    def put(self, key: tuple[Any, ...] | None, body: str) -> None:
        if key is not None:
            self.pages[key] = body
            while len(self.pages) > self.MOST:
                self.pages.popitem(last=False)


RENDERED = Rendered()


def _drawn_from(path: Path, seen: View, status: str) -> tuple[Any, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None  # no journal yet: the page is drawn from the snapshot, never kept
    return (str(path), st.st_size, st.st_mtime_ns, seen, status)


async def match_page(
    request: Request, hosted: HostedGame | None, view_of: ViewOf, decks: dict[str, Any]
) -> Response:
    if hosted is None:
        return html(not_found_page("match", hint="it may have been on another server"), 404)
    seen = view_of(hosted, request)
    snapshot = seen.snapshot(hosted.snapshot())  # on the loop: the match's state is its own
    status = hosted.status
    async with RENDERED.turn():
        key = _drawn_from(hosted.replay_path, seen, status)
        body = RENDERED.get(key)
        if body is None:
            try:
                body = await run_in_threadpool(
                    match_page_body, hosted.replay_path, seen, snapshot, status, decks
                )
            except PageError as exc:
                message = f"<!doctype html><title>Not ready</title><p>{escape(str(exc))}</p>"
                return html(message, 503)
            RENDERED.put(key, body)
    return html(body)


def _not_found_route() -> BaseRoute:
    """Last of all: any other address, a styled page with a way home (JSON for an API
    client)."""

    async def not_found(request: Request) -> Response:
        if wants_html(request):
            return html(not_found_page("page"), 404)
        return JSONResponse({"error": "not found"}, 404, headers=PAGE_HEADERS)

    return Route("/{path:path}", not_found)


class Site:
    """The pages as the server takes them (`cogolf.server.pages.Pages`); with `nights`,
    the league nights' pages too and a list of them on `/`."""

    def __init__(self, nights: NightFolders | None = None) -> None:
        self.nights = nights

    def wants(self, request: Request) -> bool:
        return wants_html(request)

    def routes(
        self, matches: Callable[[], Iterable[HostedGame]], view_of: ViewOf
    ) -> list[BaseRoute]:
        if self.nights is None:
            return [*page_routes(matches, view_of), _not_found_route()]
        folders = self.nights

        def nights_on_index() -> dict[str, Any]:
            nights = list_nights(folders)
            # The matches running nights are playing now (on their own servers): each links
            # to its night's match page, which follows the journal as it grows.
            playing = [
                (n.name, mid, match_href(n.name, mid))
                for n in nights
                if n.status == "running"
                for mid in progress_doc(folders.load_progress(n.name))["playing"]
            ]
            return {"nights": nights, "night_href": night_href, "night_live": playing[:50]}

        return [
            *page_routes(matches, view_of, nights_on_index),
            *night_routes(folders),
            _not_found_route(),
        ]

    async def match_page(
        self, request: Request, hosted: HostedGame | None, view_of: ViewOf, decks: dict[str, Any]
    ) -> Response:
        return await match_page(request, hosted, view_of, decks)


SITE = Site()  # match pages only (no league nights)
