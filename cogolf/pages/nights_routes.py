"""The night pages of `cogolf serve`: `/nights`, `/nights/{name}`, its progress and matches.

Names from the URL are only ever compared with the listed night folders and
replay files (`NightFolders.find`, `replay_path`), so a request cannot name a
path. Every page carries the Content-Security-Policy header; reading files runs
in a worker thread so a large night never stalls live matches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import structlog
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from cogolf.pages.golf_result import result_page_html
from cogolf.pages.nights import NightFileError, NightFolders, list_nights
from cogolf.pages.nights_match import match_page_html, summary_html
from cogolf.pages.nights_render import render_night, render_night_list
from cogolf.pages.nights_view import build_night, progress_doc
from cogolf.pages.render import PAGE_HEADERS, not_found_page

log = structlog.get_logger("cogolf.pages")
HEADERS = PAGE_HEADERS


def night_href(name: str) -> str:
    return f"/nights/{quote(name)}"


def match_href(night: str, match_id: str) -> str:
    """Where a night's match page lives on the server (the replay's file stem is the id)."""
    return f"/nights/{quote(night)}/matches/{quote(match_id)}"


def golf_href(night: str, entrant: str, course: str) -> str:
    """Where an entrant's golf course of a night is shown: its live replay (an LLM
    entrant) or its result, hole by hole (an entrant that handed in files)."""
    return f"/nights/{quote(night)}/golf/{quote(entrant)}/{quote(course)}"


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _not_found(what: str, night: str | None = None) -> Response:
    up = {"back": night_href(night), "back_label": f"League night {night}"} if night else {}
    return _html(not_found_page(what, **up), 404)


class PageCache:
    """Finished nights' pages, rendered once: many spectators on one night cost the
    server one render. A page is keyed by the stamps of the files it is made of; a
    running or stopped night (its status depends on a live process) is never cached."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.pages: OrderedDict[tuple[object, ...], str] = OrderedDict()
        self.lock = threading.Lock()
        self.rendering = threading.Lock()

    @staticmethod
    def stamp(folders: NightFolders, name: str) -> tuple[object, ...] | None:
        progress = folders.load_progress(name)
        if progress is not None and progress.get("state") != "finished":
            return None
        out: list[object] = [name]
        for path in (
            folders.standings_path(name),
            folders.replays_dir(name),
            folders.replays_dir(name) / "golf",
            folders.replays_dir(name) / "night.json",
        ):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def get(self, folders: NightFolders, name: str, make: Callable[[], str]) -> str:
        key = self.stamp(folders, name)
        if key is None:
            return make()
        with self.lock:
            if key in self.pages:
                self.pages.move_to_end(key)
                return self.pages[key]
        # One render at a time: a crowd arriving together waits for the first one's page
        # instead of rendering it once each.
        with self.rendering:
            with self.lock:
                if key in self.pages:
                    return self.pages[key]
            page = make()
            with self.lock:
                self.pages[key] = page
                while len(self.pages) > self.size:
                    self.pages.popitem(last=False)
        return page


def night_routes(folders: NightFolders) -> list[BaseRoute]:
    async def index(request: Request) -> Response:
        nights = await run_in_threadpool(list_nights, folders)
        return _html(render_night_list(nights, night_href))

    cache = PageCache()

    async def night(request: Request) -> Response:
        name = folders.find(request.path_params["name"])
        if name is None:
            return _not_found("night")

        def page() -> str:
            view = build_night(folders, name, lambda mid: match_href(name, mid),
                               lambda e, c: golf_href(name, e, c))  # fmt: skip
            live = f"{night_href(name)}/progress.json" if view.status == "running" else None
            return render_night(view, live=live, match_base=f"{night_href(name)}/matches/")

        try:
            return _html(await run_in_threadpool(cache.get, folders, name, page))
        except Exception as exc:  # a file no one foresaw: say so, keep serving
            log.exception("night_page_failed", night=name)
            return _html(f"<!doctype html><title>Error</title><p>This night cannot be shown "
                         f"({type(exc).__name__}); see the server's log.</p>", 500)  # fmt: skip

    async def progress(request: Request) -> Response:
        name = folders.find(request.path_params["name"])
        if name is None:
            return JSONResponse({"error": "no such night"}, 404, headers=HEADERS)
        doc = await run_in_threadpool(folders.load_progress, name)
        return JSONResponse(progress_doc(doc), headers={**HEADERS, "Cache-Control": "no-store"})

    async def match(request: Request) -> Response:
        name = folders.find(request.path_params["name"])
        if name is None:
            return _not_found("night")
        mid = request.path_params["match_id"]
        void = await run_in_threadpool(folders.void_cause, name, mid)
        path = folders.replay_path(name, mid)
        if path is None:
            if void is None:
                return _not_found("match in this night", name)
            return _html(summary_html(Path(f"{mid}.ndjson"), back=night_href(name), night=name,
                                      static_root="/static/", home="/", void=void))  # fmt: skip
        within = folders.replays_base(name)
        running = await run_in_threadpool(folders.status, name) == "running"
        try:
            body = await run_in_threadpool(
                match_page_html, path, back=night_href(name), night=name, within=within,
                running=running, void=void,
            )
        except NightFileError:  # no longer a regular file of the night (swapped meanwhile)
            return _not_found("match in this night", name)
        return _html(body)

    async def golf(request: Request) -> Response:
        name = folders.find(request.path_params["name"])
        if name is None:
            return _not_found("night")
        entrant, course = request.path_params["entrant"], request.path_params["course"]
        path = await run_in_threadpool(folders.golf_replay, name, entrant, course)
        if path is None:  # not played live: the result of the entrant's files, if any
            return await golf_result(name, entrant, course)
        try:
            body = await run_in_threadpool(
                match_page_html, path, back=night_href(name), night=name,
                within=folders.replays_base(name),
            )
        except NightFileError:
            return _not_found("live golf replay in this night", name)
        return _html(body)

    async def golf_result(name: str, entrant: str, course: str) -> Response:
        path = await run_in_threadpool(folders.golf_result, name, entrant, course)
        body = None
        if path is not None:
            try:
                body = await run_in_threadpool(
                    lambda: result_page_html(path, entrant=entrant, course=course,
                                             back=night_href(name), night=name,
                                             within=folders.replays_base(name)))
            except NightFileError:
                body = None
        if body is None:
            return _not_found("golf result in this night", name)
        return _html(body)

    return [
        Route("/nights", index),
        Route("/nights/{name}", night),
        Route("/nights/{name}/progress.json", progress),
        Route("/nights/{name}/matches/{match_id}", match),
        Route("/nights/{name}/golf/{entrant}/{course}", golf),
    ]
