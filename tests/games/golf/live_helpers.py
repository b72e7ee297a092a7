"""A real server hosting golf matches on an ephemeral loopback port, and raw seat clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from cogolf.games.golf.settings import GolfSettings
from cogolf.games.registry import LIVE
from cogolf.sandbox import make_sandbox
from cogolf.server.requests import CreateMatch
from cogolf.server.run import RunningServer, ServeOptions, start_server
from tests.games.golf.policies import SOLUTIONS
from tests.games.golf.runners import FAST


@contextlib.asynccontextmanager
async def golf_server(data: Path, **options: Any) -> AsyncIterator[RunningServer]:
    """Golf needs no Cogolf deck and never starts the Cogolf sandbox."""
    options.setdefault("resume", False)
    server = await start_server(
        ServeOptions(
            games=LIVE,
            data_dir=data,
            decks={},
            port=0,
            sandbox=make_sandbox("spawn"),
            settings={"golf": GolfSettings(results_dir=data / "results", limits=FAST)},
            **options,
        )
    )
    try:
        yield server
    finally:
        await server.stop()


def create(server: RunningServer, **fields: Any) -> tuple[str, str]:
    fields.setdefault("game", "golf")
    fields.setdefault("course", "python")
    hosted, tokens = server.registry.create(CreateMatch(**fields))
    url = f"{server.ws_url}/matches/{hosted.match_id}/player?slot=0&token={tokens[0]}"
    return hosted.match_id, url


async def recv(ws: Any, kind: str | None = None, timeout: float = 15.0) -> dict[str, Any]:
    """The next message (of `kind`, skipping others)."""
    while True:
        msg = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if kind is None or msg["type"] == kind:
            return msg


def reference_source(course: str, observation: dict[str, Any]) -> str:
    return (SOLUTIONS / course / observation["task"]["file_name"]).read_bytes().decode()


async def answer(ws: Any, msg: dict[str, Any]) -> None:
    obs = msg["observation"]
    source = reference_source(obs["course"], obs)
    await ws.send(json.dumps({"type": "submission", "hole": msg["hole"], "source": source}))


async def play_reference(ws: Any, until_hole: int | None = None) -> dict[str, Any] | None:
    """Answer every observation with the reference file; returns `done` (None: stopped early)."""
    while True:
        msg = await recv(ws)
        if msg["type"] == "observation":
            if until_hole is not None and msg["hole"] > until_hole:
                return None
            await answer(ws, msg)
        elif msg["type"] == "done":
            return msg
