"""Starting and stopping a server: the sandbox, the registry, uvicorn.

`start_server` is what `cogolf serve`, `cogolf play`, the league and the tests
all use, so there is one way a server comes up: sandbox started first (refusing a
weak one unless told), unfinished matches resumed, then the socket opened.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.game import HostedGame, LiveGame
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import Sandbox
from cogolf.server.app import create_app
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
    _closed: bool = field(default=False)

    @property
    def ws_url(self) -> str:
        return "ws" + self.url[4:]

    async def wait(self) -> None:
        await self._task

    async def stop(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.registry.close()
        if self._own_sandbox:
            await self._sandbox.close()


async def start_server(options: ServeOptions) -> RunningServer:
    own = options.sandbox is None
    sandbox = options.sandbox or make_sandbox(
        options.sandbox_mode, accept_weak=options.accept_weak_sandbox
    )
    if own:
        await sandbox.start()
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
    app = create_app(registry, admin_token=options.admin_token, single=single)
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        ws_max_size=rules.MAX_MESSAGE_BYTES,
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        log_config=None,
        access_log=False,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            await task  # surfaces a bind error
            raise RuntimeError("the server stopped while starting")
        await asyncio.sleep(0.01)
    sock = server.servers[0].sockets[0]
    host, port = sock.getsockname()[:2]
    return RunningServer(
        url=f"http://{host}:{port}",
        registry=registry,
        single=single,
        single_tokens=tokens,
        _server=server,
        _task=task,
        _sandbox=sandbox,
        _own_sandbox=own,
    )
