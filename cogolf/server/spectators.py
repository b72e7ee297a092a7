"""Spectators of one match: every journal event fanned out to every watcher.

Each watcher has a bounded queue; one that cannot keep up is dropped (its stream
ends) rather than holding events in memory or slowing the match.
"""

from __future__ import annotations

import asyncio
import contextlib

import msgspec

from cogolf import messages as m

WATCH_QUEUE = 2048  # events buffered per spectator before it is dropped as too slow

Feed = asyncio.Queue[msgspec.Struct | None]  # None ends the stream


class Spectators:
    def __init__(self, buffer: int = WATCH_QUEUE) -> None:
        self._buffer = buffer
        self._feeds: set[Feed] = set()

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
