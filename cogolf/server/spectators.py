"""Spectators of one match: every journal event fanned out to every watcher.

Each watcher has a bounded queue; one that cannot keep up is dropped (its stream
ends) rather than holding events in memory or slowing the match. A match takes at
most MAX_WATCHERS spectators at a time; a watcher that never reads is also cut by
the websocket ping timeout, since it cannot answer a ping.
"""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
from starlette.websockets import WebSocket

from cogolf import messages as m

WATCH_QUEUE = 2048  # events buffered per spectator before it is dropped as too slow
MAX_WATCHERS = 32  # spectators of one match at a time

Feed = asyncio.Queue[msgspec.Struct | None]  # None ends the stream


class Spectators:
    def __init__(self, buffer: int = WATCH_QUEUE, most: int = MAX_WATCHERS) -> None:
        self._buffer = buffer
        self.most = most
        self._feeds: set[Feed] = set()

    @property
    def full(self) -> bool:
        return len(self._feeds) >= self.most

    def join(self) -> Feed:
        feed: Feed = asyncio.Queue(maxsize=self._buffer)
        self._feeds.add(feed)
        return feed

    def leave(self, feed: Feed) -> None:
        self._feeds.discard(feed)

    def event(self, record: msgspec.Struct) -> None:
        """A journal record, as written. Submissions are journalled only when their hole
        resolves, so a spectator never sees a seat's play while its hole is open."""
        self._push(m.WatchEvent(record))  # type: ignore[arg-type]

    def end(self, result: msgspec.Struct | None) -> None:
        self._push(m.WatchDone(result))  # type: ignore[arg-type]
        self._push(None)

    def _push(self, item: msgspec.Struct | None) -> None:
        for feed in list(self._feeds):
            try:
                feed.put_nowait(item)
            except asyncio.QueueFull:
                self._feeds.discard(feed)
                with contextlib.suppress(asyncio.QueueFull, asyncio.QueueEmpty):
                    feed.get_nowait()
                    feed.put_nowait(None)


async def end_when_gone(websocket: WebSocket, feed: Feed) -> None:
    """Ends `feed` when its spectator leaves or sends anything (a spectator only listens).

    Without it, a spectator that left a quiet match (one waiting for its seats) would
    leave its handler waiting for an event forever, and the server could not shut down.
    """
    with contextlib.suppress(Exception):
        await websocket.receive()
    while True:
        try:
            feed.put_nowait(None)
            return
        except asyncio.QueueFull:
            with contextlib.suppress(asyncio.QueueEmpty):
                feed.get_nowait()
