"""HTTP and websocket endpoints of the server (starlette).

Thin adapters only: requests are validated and handed to the registry; a seat's
websocket frames go straight to its seat; spectators get a snapshot, then every
journal event as it is written. What the public endpoints serve about a match
goes through one policy (`disclosure`): while a match is live only what both
seats may know, everything after the end or with the admin token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac

import msgspec
import structlog
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from cogolf import messages as m
from cogolf.game import HostedGame
from cogolf.server.disclosure import JournalStream, View, served_journal
from cogolf.server.pages import Pages
from cogolf.server.registry import Registry
from cogolf.server.requests import CreateMatch, RequestError
from cogolf.server.spectators import end_when_gone

log = structlog.get_logger("cogolf.server")
_encoder = msgspec.json.Encoder()


def _json(doc: object, status: int = 200) -> Response:
    return Response(_encoder.encode(doc), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


# Sent with every HTTP response that does not set its own (a page sends its policy):
# a JSON document, a journal or a static file carries bot text or code, so a browser
# led to it must neither sniff it into a page nor run or frame anything in it.
SAFE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class SafeHeaders:
    """ASGI middleware adding `SAFE_HEADERS` a response lacks (websockets pass through)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_safe(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SAFE_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_safe)


def create_app(
    registry: Registry,
    *,
    admin_token: str | None = None,
    single: HostedGame | None = None,
    pages: Pages | None = None,
    routes: list[BaseRoute] | None = None,
) -> Starlette:
    def match_links(hosted: HostedGame, root: str) -> dict[str, str]:
        ws_root = "ws" + root[4:] if root.startswith("http") else root
        return {
            "watch_url": f"{ws_root}/matches/{hosted.match_id}/watch",
            "replay_url": f"{root}/matches/{hosted.match_id}/replay.ndjson",
        }

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    def is_admin(headers: Headers) -> bool:
        if admin_token is None:
            return False
        auth = headers.get("authorization", "")
        return hmac.compare_digest(auth.encode(), f"Bearer {admin_token}".encode())

    def view(hosted: HostedGame, headers: Headers) -> View:
        return View.of(hosted, admin=is_admin(headers))

    async def create_match(request: Request) -> Response:
        if admin_token is not None and not is_admin(request.headers):
            return _error(401, "creating a match needs Authorization: Bearer <admin token>")
        body = await request.body()
        if len(body) > 65536:
            return _error(413, "request body exceeds 65536 bytes")
        try:
            req = msgspec.json.decode(body or b"{}", type=CreateMatch)
        except (msgspec.DecodeError, RecursionError) as exc:
            return _error(400, str(exc))
        try:
            hosted, tokens = registry.create(req)
        except RequestError as exc:
            return _error(400, str(exc))
        root = str(request.base_url).rstrip("/")
        ws_root = "ws" + root[4:]
        seats = [
            {
                "slot": slot,
                "alias": hosted.welcome(slot).alias,
                "token": tokens[slot],
                "url": f"{ws_root}/matches/{hosted.match_id}/player"
                f"?slot={slot}&token={tokens[slot]}",
            }
            for slot in range(len(hosted.seats))  # two for Cogolf, one for golf
        ]
        return _json(
            {"match_id": hosted.match_id, "seats": seats, **match_links(hosted, root)}, 201
        )

    async def list_matches(request: Request) -> Response:
        return _json(
            [view(h, request.headers).status(h.status_doc()) for h in registry.matches.values()]
        )

    def _find(request: Request) -> HostedGame | None:
        return registry.get(request.path_params["match_id"])

    def page_view(hosted: HostedGame, request: Request) -> View:
        return view(hosted, request.headers)

    async def get_match(request: Request) -> Response:
        hosted = _find(request)
        if pages is not None and pages.wants(request):  # a browser; any other client: JSON
            response = await pages.match_page(request, hosted, page_view, registry.decks)
        elif hosted is None:
            response = _error(404, "no such match")
        else:
            response = _json(view(hosted, request.headers).status(hosted.status_doc()))
        if pages is not None:  # one address, two documents: no cache may serve one for the other
            response.headers["Vary"] = "Accept"
        return response

    async def get_replay(request: Request) -> Response:
        hosted = _find(request)
        if hosted is None or not hosted.replay_path.exists():
            return _error(404, "no replay for this match")
        seen = view(hosted, request.headers)
        if seen.raw_journal:
            return FileResponse(hosted.replay_path, media_type="application/x-ndjson")
        try:
            data = await run_in_threadpool(hosted.replay_path.read_bytes)
        except OSError:
            return _error(404, "no replay for this match")
        body = await run_in_threadpool(served_journal, data, seen)
        return Response(body, media_type="application/x-ndjson")

    async def player(websocket: WebSocket) -> None:
        match_id = websocket.path_params.get("match_id")
        hosted = registry.get(match_id) if match_id else single
        slot_text = websocket.query_params.get("slot", "")
        token = websocket.query_params.get("token", "")
        seat_count = len(hosted.seats) if hosted is not None else 0
        slot = int(slot_text) if slot_text in {str(i) for i in range(seat_count)} else None
        if hosted is None or slot is None or not hosted.check_token(slot, token):
            await websocket.send_denial_response(_error(403, "unknown match, slot or token"))
            return
        seat = hosted.seats[slot]
        if seat.claimed:
            await websocket.send_denial_response(
                _error(409, f"seat {slot} already has a live connection")
            )
            return
        if hosted.status in ("finished", "failed"):
            await websocket.send_denial_response(_error(410, "this match is over"))
            return
        if (wait := seat.cooldown_left()) > 0:
            await websocket.send_denial_response(
                _error(429, f"seat {slot} was closed for a policy violation; retry in {wait:.1f} s")
            )
            return
        seat.claimed = True
        bound = log.bind(match_id=hosted.match_id, slot=slot)
        code: int | None = None
        try:
            await websocket.accept()
            await websocket.send_text(_encoder.encode(hosted.welcome(slot)).decode())
            seat.connect(websocket)
            bound.info("seat_connected", epoch=seat.epoch)
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    code = message.get("code")
                    break
                raw = message.get("text")
                close = await seat.deliver(raw if raw is not None else message.get("bytes") or b"")
                if close is not None:
                    code, reason = close
                    bound.warning("seat_closed", code=code, reason=reason)
                    await websocket.close(code=code, reason=reason)
                    break
                # Frames already read arrive without a pause: yield, so a flood cannot
                # hold the loop while the opponent's reply waits.
                await asyncio.sleep(0)
        except WebSocketDisconnect as exc:
            code = exc.code
        finally:
            seat.claimed = False
            seat.disconnect(websocket, code)
            bound.info("seat_disconnected", code=code)

    async def watch(websocket: WebSocket) -> None:
        hosted = registry.get(websocket.path_params["match_id"])
        if hosted is None:
            await websocket.send_denial_response(_error(404, "no such match"))
            return
        if hosted.spectators.full:
            await websocket.send_denial_response(
                _error(503, f"this match has its maximum of {hosted.spectators.most} spectators")
            )
            return
        await websocket.accept()
        queue = hosted.watch()
        seen = view(hosted, websocket.headers)
        stream = JournalStream(seen)

        async def send(doc: object) -> None:
            await websocket.send_text(_encoder.encode(doc).decode())

        gone = asyncio.create_task(end_when_gone(websocket, queue))
        try:
            await send(seen.snapshot(hosted.snapshot()))
            if hosted.status in ("finished", "failed"):
                await send({"type": "done", "result": seen.result(hosted.result)})
            else:
                while (item := await queue.get()) is not None:
                    # every item is filtered here, where it leaves for this spectator
                    if isinstance(item, m.WatchEvent):
                        for rec in stream.feed(msgspec.to_builtins(item.event)):
                            await send({"type": "event", "event": rec})
                    elif isinstance(item, m.WatchDone):
                        await send({"type": "done", "result": seen.result(item.result)})
            await websocket.close(code=1000)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            gone.cancel()
            hosted.unwatch(queue)
            with contextlib.suppress(Exception):
                await websocket.close()

    extra = list(routes or [])
    routes = [
        *extra,
        Route("/healthz", healthz),
        Route("/matches", create_match, methods=["POST"]),
        Route("/matches", list_matches, methods=["GET"]),
        Route("/matches/{match_id}", get_match),
        Route("/matches/{match_id}/replay.ndjson", get_replay),
        WebSocketRoute("/matches/{match_id}/player", player),
        WebSocketRoute("/matches/{match_id}/watch", watch),
    ]
    if pages is not None:
        routes += pages.routes(lambda: list(registry.matches.values()), page_view)
    if single is not None:
        routes.append(WebSocketRoute("/player", player))
    app = Starlette(routes=routes)
    app.add_middleware(SafeHeaders)
    return app
