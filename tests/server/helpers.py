"""Running a real server on an ephemeral loopback port, and small raw websocket clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import websockets

from cogolf.deck import load
from cogolf.games.registry import LIVE
from cogolf.server.requests import CreateMatch
from cogolf.server.run import RunningServer, ServeOptions, start_server

DECK = load()


@contextlib.asynccontextmanager
async def running_server(data_dir: Path, **options: Any) -> AsyncIterator[RunningServer]:
    server = await start_server(
        ServeOptions(games=LIVE, data_dir=data_dir, decks={DECK.name: DECK}, port=0, **options)
    )
    try:
        yield server
    finally:
        await server.stop()


def create(server: RunningServer, **fields: Any) -> tuple[str, list[str]]:
    fields.setdefault("seed", 7)
    hosted, tokens = server.registry.create(CreateMatch(**fields))
    urls = [
        f"{server.ws_url}/matches/{hosted.match_id}/player?slot={s}&token={tokens[s]}"
        for s in (0, 1)
    ]
    return hosted.match_id, urls


async def recv(ws: Any, kind: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The next message (of `kind`, skipping others)."""
    while True:
        msg = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if kind is None or msg["type"] == kind:
            return msg


def literalist_play(observation: dict[str, Any], hole: int) -> str:
    from cogolf.bots.scripted import baseline_play

    play = baseline_play(DECK.public, observation["spec"]["key"], "literalist")
    return json.dumps({"type": "submission", "hole": hole, **play})


async def play_well(url: str, holes: int | None = None) -> dict[str, Any]:
    """A raw client that answers every observation with the literalist; returns `done`."""
    async with websockets.connect(url) as ws:
        while True:
            msg = await recv(ws)
            if msg["type"] == "observation":
                await ws.send(literalist_play(msg["observation"], msg["hole"]))
            elif msg["type"] == "done":
                return msg
