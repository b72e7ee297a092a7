"""The ladder inside `cogolf serve`: bots connect, the loop matches them, results are kept.

`WS /ladder` takes a bot's key in the `Authorization` header only (a URL with a
query string is refused before anything else: URLs end up in logs and histories),
then its `ready` message saying how many matches it plays at once. The loop, on
every wake-up (a bot joined, a match ended) and at least every `poll` seconds,
refreshes this server's presence rows, claims matches from the database (any
server sharing it may claim any ready bots), hosts them in the server's registry
as ordinary matches, and hands each connected bot the seats of its matches, which
may be hosted by another server: a seat is the URL every bot already plays
(`/matches/{id}/player?slot=N&token=T`). When a match ends its result, the seats'
streaks (missed seats, timeouts) and the new ratings are written in one
transaction. A bot that disconnects is only away: its matches go on with their own
deadlines and fallbacks. With every heartbeat the loop also voids the unfinished
matches of any other server whose heartbeat is older than `orphan` seconds (killed,
its machine gone): else their bots would stay "playing" and never be paired again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from cogolf.ladder import db
from cogolf.ladder.standings import bot_page_data, live_statuses, standings
from cogolf.ladder.store import (
    MAX_CONCURRENT,
    ORPHAN_SECONDS,
    Bot,
    Claimed,
    LadderError,
    Outcome,
    Store,
)
from cogolf.server.registry import Registry
from cogolf.server.requests import CreateMatch, RequestError

log = structlog.get_logger("cogolf.ladder")
_encoder = msgspec.json.Encoder()
PROTOCOL = "cogolf.ladder.v1"
READY_TIMEOUT = 10.0  # seconds a connected bot has to say `ready`
MAX_FRAME = 4096  # a bot's ladder messages are tiny
MAX_FRAMES = 60  # frames a connection may send (`ready` again, pings): then it is closed
HEARTBEAT = 2.0


class Ready(msgspec.Struct, tag="ready", tag_field="type", forbid_unknown_fields=True):
    concurrent: int = 1


class AddBot(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    owner: str | None = None


@dataclass
class MatchSettings:
    """What every ladder match is played with (`cogolf serve --ladder-*`)."""

    holes: int | None = None
    hole_deadline: float | None = None
    retry_deadline: float | None = None
    match_deadline: float | None = None


@dataclass
class Connection:
    bot: Bot
    websocket: WebSocket
    concurrent: int


def _json(doc: object, status: int = 200) -> Response:
    return Response(_encoder.encode(doc), status_code=status, media_type="application/json")


@dataclass
class LadderService:
    store: Store
    server: str  # this server's name in the database (stable for its data folder)
    admin_token: str | None = None
    public_url: str | None = None  # where bots reach this server's matches
    settings: MatchSettings = field(default_factory=MatchSettings)
    poll: float = 1.0
    orphan: float = ORPHAN_SECONDS  # another server silent this long has its matches voided
    most: int = 8  # pairings claimed at once
    ready_timeout: float = READY_TIMEOUT
    pages: Any = None  # cogolf.ladder.pages.LadderPages, when pages are served
    connections: dict[int, Connection] = field(default_factory=dict)
    _registry: Registry | None = None
    _url: str = ""
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _watching: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    _standings: tuple[int, dict[str, Any]] | None = None
    _standings_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        # A live server beats every HEARTBEAT (plus a poll, at worst): a shorter orphan
        # time would void the matches of servers that are alive.
        if not self.orphan > HEARTBEAT + self.poll:
            raise ValueError(
                f"orphan time {self.orphan:g} s: must exceed the heartbeat, {HEARTBEAT:g} s, "
                f"plus the poll, {self.poll:g} s"
            )

    # ------------------------------------------------------------ life

    async def start(self, registry: Registry, url: str) -> None:
        self._registry = registry
        self._url = self.public_url or url
        # Presence rows under this server's name are of its previous life (killed, say):
        # their bots are not connected here, and would be refused as "already connected".
        await asyncio.to_thread(self.store.forget_server, self.server)
        await asyncio.to_thread(self.store.heartbeat, self.server, self._url, [])
        for claimed in await asyncio.to_thread(self.store.hosted, self.server):
            await self._host(claimed, resumed=True)
        self._task = asyncio.create_task(self._loop(), name="ladder")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in self._watching.values():
            task.cancel()
        await asyncio.gather(*self._watching.values(), return_exceptions=True)
        for conn in list(self.connections.values()):
            with contextlib.suppress(Exception):
                await conn.websocket.close(code=1001, reason="the server is stopping")
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.store.forget_server, self.server)

    def wake(self) -> None:
        self._wake.set()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        beat = 0.0
        while True:
            try:
                if loop.time() - beat >= HEARTBEAT:
                    beat = loop.time()
                    await asyncio.to_thread(
                        self.store.heartbeat, self.server, self._url, list(self.connections)
                    )
                    voided = await asyncio.to_thread(
                        self.store.void_orphans, self.server, self.orphan
                    )
                    if voided:
                        log.warning("ladder_orphans_voided", matches=voided)
                for claimed in await asyncio.to_thread(
                    self.store.claim, self.server, self._url, most=self.most
                ):
                    await self._host(claimed)
                await self._deliver()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("ladder_tick_failed")
            # not asyncio.wait_for: on 3.11 it drops a cancellation that arrives just
            # after the event is set, and the server then never stops
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll):
                    await self._wake.wait()
            self._wake.clear()

    # ------------------------------------------------------------ matches

    async def _host(self, claimed: Claimed, *, resumed: bool = False) -> None:
        registry = self._registry
        assert registry is not None
        hosted = registry.get(claimed.match_id)
        if hosted is None:
            if resumed and claimed.status != "assigned":
                await asyncio.to_thread(
                    self.store.void,
                    claimed.match_id,
                    self.server,
                    "its server lost the match (no journal to resume)",
                )
                return
            s = self.settings
            req = CreateMatch(
                match_id=claimed.match_id,
                seed=claimed.seed,
                names=list(claimed.names),
                tokens=list(claimed.tokens),
                holes=s.holes,
                hole_deadline_seconds=s.hole_deadline,
                retry_deadline_seconds=s.retry_deadline,
                match_deadline_seconds=s.match_deadline,
            )
            try:
                hosted, _ = registry.create(req)
            except RequestError as exc:
                log.error("ladder_match_refused", match_id=claimed.match_id, error=str(exc))
                await asyncio.to_thread(self.store.void, claimed.match_id, self.server, str(exc))
                return
        await asyncio.to_thread(self.store.playing, claimed.match_id, self.server)
        self._watching[claimed.match_id] = asyncio.create_task(
            self._watch(claimed.match_id), name=f"ladder-watch-{claimed.match_id}"
        )
        self.wake()

    async def _watch(self, match_id: str) -> None:
        registry = self._registry
        assert registry is not None
        try:
            hosted = registry.get(match_id)
            while hosted is not None and hosted.task is None and hosted.status != "finished":
                await asyncio.sleep(0.05)
            if hosted is None:
                return
            if hosted.task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(hosted.task)
            result: Any = getattr(hosted, "result", None)
            if result is None:
                await asyncio.to_thread(
                    self.store.void, match_id, self.server, f"the match {hosted.status}"
                )
            else:
                absent = tuple(not s.ever_connected for s in hosted.seats)
                resumed = getattr(hosted, "resumed", False)
                outcome = Outcome(
                    scores=(int(result.scores[0]), int(result.scores[1])),
                    fallbacks=(int(result.fallbacks[0]), int(result.fallbacks[1])),
                    holes=int(result.holes_played),
                    reason=str(result.reason),
                    # After a restart a seat may have played before it and not since.
                    absent=(False, False) if resumed else (absent[0], absent[1]),
                    causes=(dict(result.fallback_causes[0]), dict(result.fallback_causes[1])),
                )
                if not await asyncio.to_thread(self.store.record, match_id, self.server, outcome):
                    # Voided meanwhile (this server was taken for gone), or already written.
                    log.warning("ladder_result_refused", match_id=match_id)
            self._standings = None
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ladder_record_failed", match_id=match_id)
        finally:
            self._watching.pop(match_id, None)
            self.wake()

    async def _deliver(self) -> None:
        if not self.connections:
            return
        seats = await asyncio.to_thread(self.store.seats_for, list(self.connections))
        sent = []
        for seat in seats:
            conn = self.connections.get(seat.bot_id)
            if conn is None:
                continue
            try:
                await conn.websocket.send_text(
                    _encoder.encode(
                        {
                            "type": "seat",
                            "match_id": seat.match_id,
                            "game": "cogolf",
                            "slot": seat.slot,
                            "url": seat.url,
                        }
                    ).decode()
                )
            except Exception:
                continue  # gone: the seat is handed over when the bot is back
            sent.append(seat)
        await asyncio.to_thread(self.store.delivered, sent)

    # ------------------------------------------------------------ routes

    def routes(self) -> list[BaseRoute]:
        return [
            WebSocketRoute("/ladder", self._connect),
            Route("/ladder/bots", self._add_bot, methods=["POST"]),
            Route("/ladder", self._table, methods=["GET"]),
            Route("/ladder/standings.json", self._table_json, methods=["GET"]),
            Route("/ladder/bots/{name}", self._bot, methods=["GET"]),
        ]

    def _is_admin(self, request: Request) -> bool:
        if self.admin_token is None:
            return False
        auth = request.headers.get("authorization", "")
        return hmac.compare_digest(auth.encode(), f"Bearer {self.admin_token}".encode())

    async def _add_bot(self, request: Request) -> Response:
        if self.admin_token is None:
            return _json({"error": "registering a bot needs the server's --admin-token"}, 403)
        if not self._is_admin(request):
            return _json(
                {"error": "registering a bot needs Authorization: Bearer <admin token>"}, 401
            )
        body = await request.body()
        if len(body) > 4096:
            return _json({"error": "request body exceeds 4096 bytes"}, 413)
        try:
            req = msgspec.json.decode(body or b"{}", type=AddBot)
            key = await asyncio.to_thread(self.store.add_bot, req.name, req.owner)
        except (msgspec.DecodeError, RecursionError) as exc:
            return _json({"error": str(exc)}, 400)
        except LadderError as exc:
            return _json({"error": str(exc)}, exc.status)
        return _json({"name": req.name, "key": key}, 201)

    async def current_standings(self) -> dict[str, Any]:
        """The standings, recomputed only after a new result (one computation at a time:
        the profile intervals take a while for many bots)."""
        async with self._standings_lock:
            seq = await asyncio.to_thread(self.store.seq)
            cached = self._standings
            if cached is None or cached[0] != seq:
                doc = await asyncio.to_thread(standings, self.store)
                self._standings = cached = (seq, doc)
        return await asyncio.to_thread(live_statuses, self.store, cached[1])

    async def _table_json(self, request: Request) -> Response:
        return _json(await self.current_standings())

    async def _table(self, request: Request) -> Response:
        doc = await self.current_standings()
        if self.pages is not None and self.pages.wants(request):
            response = self.pages.table(doc)
        else:
            response = _json(doc)
        response.headers["Vary"] = "Accept"
        return response

    async def _bot(self, request: Request) -> Response:
        name = request.path_params["name"]
        doc = await self.current_standings()
        data = await asyncio.to_thread(bot_page_data, self.store, name, doc)
        if data is None:
            response = _json({"error": "no such bot"}, 404)
        elif self.pages is not None and self.pages.wants(request):
            response = self.pages.bot(data)
        else:
            response = _json(data)
        response.headers["Vary"] = "Accept"
        return response

    async def _connect(self, ws: WebSocket) -> None:
        deny: Callable[[int, str], Any] = lambda status, message: ws.send_denial_response(  # noqa: E731
            _json({"error": message}, status)
        )
        if ws.scope.get("query_string"):
            await deny(
                400,
                "the ladder takes no query string: send the key as 'Authorization: Bearer KEY', "
                "never in the URL",
            )
            return
        auth = ws.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            await deny(401, "send the bot's key as 'Authorization: Bearer KEY'")
            return
        try:
            bot = await asyncio.to_thread(self.store.authenticate, auth[len("Bearer ") :].strip())
        except LadderError as exc:
            await deny(exc.status, str(exc))
            return
        if bot.id in self.connections:
            await deny(409, f"bot {bot.name!r} is already connected to the ladder")
            return
        await ws.accept()
        bound = log.bind(bot=bot.name)
        joined = False
        try:
            await ws.send_text(
                _encoder.encode(
                    {
                        "type": "ladder_welcome",
                        "protocol": PROTOCOL,
                        "bot": bot.name,
                        "max_concurrent": MAX_CONCURRENT,
                    }
                ).decode()
            )
            ready = await self._ready(ws)
            if ready is None:
                return
            try:
                await asyncio.to_thread(self.store.join, bot, self.server, ready.concurrent)
            except LadderError as exc:
                await ws.close(code=1008, reason=str(exc)[:120])
                return
            joined = True
            self.connections[bot.id] = Connection(bot, ws, ready.concurrent)
            bound.info("ladder_joined", concurrent=ready.concurrent)
            self.wake()
            frames = 0
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                frames += 1
                if frames > MAX_FRAMES:
                    await ws.close(code=1008, reason=f"more than {MAX_FRAMES} frames")
                    break
        except WebSocketDisconnect:
            pass
        finally:
            if joined:
                self.connections.pop(bot.id, None)
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.store.leave, bot, self.server)
                bound.info("ladder_left")

    async def _ready(self, ws: WebSocket) -> Ready | None:
        """The bot's `ready`; None (the connection closed with the reason) otherwise."""
        try:
            message = await asyncio.wait_for(ws.receive(), timeout=self.ready_timeout)
        except TimeoutError:
            await ws.close(code=1008, reason=f"no 'ready' within {self.ready_timeout:g} s")
            return None
        if message["type"] == "websocket.disconnect":
            return None
        raw = message.get("text") or message.get("bytes") or b""
        if len(raw) > MAX_FRAME:
            await ws.close(code=1009, reason=f"a ladder message is at most {MAX_FRAME} bytes")
            return None
        try:
            ready = msgspec.json.decode(raw, type=Ready)
        except (msgspec.DecodeError, RecursionError) as exc:
            await ws.close(code=1008, reason=f"expected ready: {str(exc)[:100]}")
            return None
        if not 1 <= ready.concurrent <= MAX_CONCURRENT:
            await ws.close(code=1008, reason=f"concurrent must be 1 to {MAX_CONCURRENT}")
            return None
        return ready


def server_name(data_dir: Path) -> str:
    """This server's name in a shared database: made once per data folder and kept there,
    so a restarted server finds its own matches again (two servers never share a folder)."""
    path = data_dir / "ladder-server"
    try:
        name = path.read_text(encoding="ascii").strip()
        if name:
            return name[:64]
    except (OSError, UnicodeDecodeError):
        pass
    name = f"{socket.gethostname()[:40]}-{secrets.token_hex(6)}"
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(name + "\n", encoding="ascii")
    os.replace(tmp, path)
    return name


def open_ladder(
    data_dir: Path,
    database: str | None,
    *,
    admin_token: str | None = None,
    public_url: str | None = None,
    settings: MatchSettings | None = None,
    pages: Any = None,
    poll: float = 1.0,
    orphan: float = ORPHAN_SECONDS,
) -> LadderService:
    """The ladder a server hosts: its database opened (and migrated), its name."""
    engine = db.connect(db.database_url(database, data_dir))
    return LadderService(
        Store(engine),
        server_name(data_dir),
        admin_token=admin_token,
        public_url=public_url,
        settings=settings or MatchSettings(),
        pages=pages,
        poll=poll,
        orphan=orphan,
    )
