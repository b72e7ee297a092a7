"""Starting and stopping a server: the sandbox, the registry, uvicorn.

`start_server` is what `cogolf serve`, `cogolf play`, the league and the tests
all use, so there is one way a server comes up: descriptors raised to the hard
limit, sandbox started first (refusing a weak one unless told) behind its batch
queue, unfinished matches resumed, then the socket opened with its connection
guard. The connection cap leaves a reserve of descriptors for the sandbox and the
journals, so clients can never take the last ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import resource
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.game import HostedGame, LiveGame
from cogolf.runtime.batch_queue import QueuedSandbox
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import Sandbox
from cogolf.server.addons import Addon
from cogolf.server.app import create_app
from cogolf.server.guard import ConnectionGuard, protocols
from cogolf.server.pages import Pages
from cogolf.server.registry import Registry
from cogolf.server.requests import CreateMatch


@dataclass
class ServeOptions:
    data_dir: Path  # matches/ and replays/ live here unless given separately
    decks: dict[str, Deck]
    host: str = "127.0.0.1"
    port: int = 8080
    admin_token: str | None = None
    sandbox_mode: str = "fork"
    accept_weak_sandbox: bool = False
    connect_timeout: float = 30.0
    single: CreateMatch | None = None  # --single: one match, also answered at /player
    sandbox: Sandbox | None = None  # an already started sandbox to share
    replays_dir: Path | None = None
    meta_dir: Path | None = None
    resume: bool = True  # host again the unfinished matches found in meta_dir
    # The live games to host, by name: usually `cogolf.games.registry.LIVE`.
    games: Mapping[str, LiveGame] = field(default_factory=dict)
    # Per-game settings by game name, e.g. golf's results folder and run limits
    # (a GolfSettings); a game without an entry uses its defaults.
    settings: dict[str, Any] = field(default_factory=dict)
    max_connections: int = 1000  # lowered to what the descriptor limit allows
    max_connections_per_address: int = 256
    header_timeout: float = 10.0  # seconds for a connection's request headers
    descriptor_reserve: int = 128  # descriptors never given to connections (see `backlog`)
    max_sandbox_batches: int | None = None  # batches run at once (default 2 per core, >= 4)
    pages: Pages | None = None  # the browser's pages (`cogolf.pages.routes.SITE`), if served
    addons: list[Addon] = field(default_factory=list)  # parts hosted beside (the ladder)


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft


@dataclass
class RunningServer:
    url: str  # http://host:port
    registry: Registry
    single: HostedGame | None
    single_tokens: list[str]
    _server: uvicorn.Server
    _task: asyncio.Task[None]
    _sandbox: Sandbox
    _own_sandbox: bool
    guard: ConnectionGuard | None = None
    addons: list[Addon] = field(default_factory=list)
    _closed: bool = field(default=False)

    @property
    def ws_url(self) -> str:
        return "ws" + self.url[4:]

    def request_exit(self) -> None:
        """Ask uvicorn to shut down (what a signal does); `wait` then returns."""
        self._server.should_exit = True

    async def wait(self) -> None:
        await self._task

    async def stop(self) -> None:
        if self._closed:
            return
        self._closed = True
        for addon in self.addons:
            await addon.stop()
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.registry.close()
        if self._own_sandbox:
            await self._sandbox.close()


class ListenError(OSError):
    """The server cannot listen where it was asked to; the message says why and what to do."""


_LISTEN_HINTS = {
    errno.EADDRINUSE: "the address is already in use (is another server running there?); "
    "choose another --port, or 0 for any free one",
    errno.EACCES: "permission denied (ports below 1024 need privileges): choose a higher --port",
    errno.EADDRNOTAVAIL: "this machine has no such address: check --host",
}


def listen_socket(host: str, port: int, backlog: int = 64) -> socket.socket:
    """The listening socket, opened here so that a failure is one clear error, before
    the sandbox or anything else has started."""
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        family = socket.AF_INET  # a host name, e.g. localhost
    try:
        return socket.create_server((host, port), family=family, backlog=backlog)
    except socket.gaierror:
        raise ListenError(f"cannot listen on {host}:{port}: the host {host!r} does not resolve "
                          "(check --host)") from None  # fmt: skip
    except OverflowError:
        raise ListenError(f"cannot listen on port {port}: ports are 0 to 65535") from None
    except OSError as exc:
        why = _LISTEN_HINTS.get(exc.errno or 0, exc.strerror or str(exc))
        raise ListenError(f"cannot listen on {host}:{port}: {why}") from None


async def start_server(options: ServeOptions) -> RunningServer:
    """Raises ListenError when the address cannot be listened on (nothing started then)."""
    listener = listen_socket(options.host, options.port)
    try:
        return await _start(options, listener)
    except BaseException:
        listener.close()
        raise


async def _start(options: ServeOptions, listener: socket.socket) -> RunningServer:
    descriptors = raise_descriptor_limit()
    own = options.sandbox is None
    inner = options.sandbox or make_sandbox(
        options.sandbox_mode, accept_weak=options.accept_weak_sandbox
    )
    if own:
        await inner.start()
    sandbox = QueuedSandbox(inner, max_batches=options.max_sandbox_batches)
    registry = Registry(
        replays_dir=options.replays_dir or options.data_dir / "replays",
        meta_dir=options.meta_dir or options.data_dir / "matches",
        decks=options.decks,
        sandbox=sandbox,
        connect_timeout=options.connect_timeout,
        games=options.games,
        settings=options.settings,
    )
    if options.resume:
        registry.resume_all()
    single, tokens = None, []
    if options.single is not None:
        existing = registry.get(options.single.match_id or "")
        if existing is not None:
            single = existing
            tokens = list(options.single.tokens or [])
        else:
            single, tokens = registry.create(options.single)
    app = create_app(
        registry,
        admin_token=options.admin_token,
        single=single,
        pages=options.pages,
        routes=[r for addon in options.addons for r in addon.routes()],
    )
    room = max(8, descriptors - options.descriptor_reserve)
    guard = ConnectionGuard(
        max_connections=min(options.max_connections, room),
        max_per_address=options.max_connections_per_address,
        header_timeout=options.header_timeout,
    )
    http_protocol, ws_protocol = protocols(guard)
    config = uvicorn.Config(
        app,
        http=http_protocol,
        ws=ws_protocol,
        host=options.host,
        port=options.port,
        # Frames up to twice the cap are read, so the seat can close an oversize one
        # with a reason that says what happened; larger ones are cut by the transport.
        ws_max_size=2 * rules.MAX_MESSAGE_BYTES,
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        log_config=None,
        access_log=False,
        lifespan="off",
        # Connections still open this long after a shutdown signal are cut, so the
        # server always exits (the matches' journals are closed by `stop`).
        timeout_graceful_shutdown=3.0,
        # asyncio accepts up to `backlog` sockets in one go before any is refused, so
        # this bounds how far a burst can overshoot the cap into the reserve.
        backlog=64,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        if task.done():
            await task  # surfaces a bind error
            raise RuntimeError("the server stopped while starting")
        await asyncio.sleep(0.01)
    sock = server.servers[0].sockets[0]
    host, port = sock.getsockname()[:2]
    url = f"http://{host}:{port}"
    for addon in options.addons:
        await addon.start(registry, url)
    return RunningServer(
        url=url,
        registry=registry,
        single=single,
        single_tokens=tokens,
        _server=server,
        _task=task,
        _sandbox=sandbox,
        _own_sandbox=own,
        guard=guard,
        addons=list(options.addons),
    )
