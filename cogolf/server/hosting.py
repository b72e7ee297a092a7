"""What every live game's hosted match shares: files, seats, tokens, spectators, its task.

A game's hosted match (`cogolf.games.<game>.hosted`) derives from `HostedBase`
and adds its own welcome, play loop, snapshot and status document; the server
sees only the `cogolf.game.HostedGame` interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol

from cogolf.server.meta import token_matches, write_meta
from cogolf.server.seat import WebSocketSeat
from cogolf.server.spectators import Feed, Spectators


class _Meta(Protocol):
    match_id: str
    token_hashes: list[str]


class HostedBase:
    def __init__(
        self,
        meta: Any,
        *,
        seats: int,
        replays_dir: Path,
        meta_dir: Path,
        connect_timeout: float,
        task_prefix: str,
    ) -> None:
        self.meta = meta
        self.connect_timeout = connect_timeout
        self.replay_path = replays_dir / f"{meta.match_id}.ndjson"
        self.meta_path = meta_dir / f"{meta.match_id}.json"
        self.seats = [WebSocketSeat(slot) for slot in range(seats)]
        self.status = "waiting"
        self.resumed = False
        self.spectators = Spectators()
        self.task: asyncio.Task[None] | None = None
        self._task_prefix = task_prefix

    @property
    def match_id(self) -> str:
        return str(self.meta.match_id)

    def check_token(self, slot: int, token: str) -> bool:
        return token_matches(self.meta.token_hashes[slot], token)

    def save_meta(self) -> None:
        write_meta(self.meta_path, self.meta)

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"{self._task_prefix}-{self.match_id}")

    def _run(self) -> Coroutine[Any, Any, None]:
        raise NotImplementedError

    def watch(self) -> Feed:
        return self.spectators.join()

    def unwatch(self, feed: Feed) -> None:
        self.spectators.leave(feed)
