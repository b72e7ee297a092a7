"""The driver's inbox: what the seats delivered, taken from each seat in turn.

A single first-in first-out queue lets a seat that sends many frames push its
opponent's reply behind all of them, past its deadline. Here every seat has its own
queue and the driver takes from them round-robin, so an honest reply waits behind
at most one frame of the other seat. `pending(slot)` lets a seat's transport bound
how many of its raw frames wait for the intake (see `cogolf.server.seat`).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import TypeVar

from cogolf.runtime.seats import Inbound

T = TypeVar("T")


async def next_within(get: Callable[[], Awaitable[T]], seconds: float) -> T:
    """The next item within `seconds`, else TimeoutError; none when `seconds` <= 0 (the
    deadline has passed: its tick comes first). Not `asyncio.wait_for`, which on 3.11
    drops a cancellation that arrives with the item, so a stopped match played on."""
    if seconds <= 0:
        raise TimeoutError
    async with asyncio.timeout(seconds):
        return await get()


class FairInbox:
    def __init__(self) -> None:
        self._queues: dict[int, collections.deque[Inbound]] = {}
        self._order: collections.deque[int] = collections.deque()  # slots, next to serve first
        self._raw: collections.Counter[int] = collections.Counter()
        self._ready = asyncio.Event()

    def put_nowait(self, item: Inbound) -> None:
        queue = self._queues.get(item.slot)
        if queue is None:
            queue = self._queues[item.slot] = collections.deque()
            self._order.append(item.slot)
        queue.append(item)
        if item.raw is not None:
            self._raw[item.slot] += 1
        self._ready.set()

    def pending(self, slot: int) -> int:
        """Raw frames of `slot` not yet taken by the driver."""
        return self._raw[slot]

    def qsize(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def empty(self) -> bool:
        return self.qsize() == 0

    def get_nowait(self) -> Inbound:
        for _ in range(len(self._order)):
            slot = self._order[0]
            self._order.rotate(-1)
            queue = self._queues[slot]
            if queue:
                item = queue.popleft()
                if item.raw is not None:
                    self._raw[slot] -= 1
                return item
        self._ready.clear()
        raise asyncio.QueueEmpty

    async def get(self) -> Inbound:
        while True:
            try:
                return self.get_nowait()
            except asyncio.QueueEmpty:
                await self._ready.wait()
