"""A match driver stops when cancelled, even at the moment a seat's frame arrives.

The drivers wait for their inbox with `next_within`; on Python 3.11 the
`asyncio.wait_for` they used returned the frame and dropped a cancellation that came
with it, so a server stopping mid-match waited for that match's deadlines. Every gap
between the frame and the cancellation is tried; the deadline rule stays: a wait
already past its deadline takes nothing (the tick comes first).
"""

from __future__ import annotations

import asyncio

import pytest

from cogolf.runtime.inbox import FairInbox, next_within
from cogolf.runtime.seats import Inbound


def test_a_driver_loop_ends_when_cancelled_as_a_frame_arrives() -> None:
    async def go() -> None:
        for gap in range(8):
            inbox = FairInbox()
            taken: list[Inbound] = []

            async def driver(inbox: FairInbox = inbox, taken: list[Inbound] = taken) -> None:
                while True:
                    taken.append(await next_within(inbox.get, 30.0))

            task = asyncio.create_task(driver())
            await asyncio.sleep(0.01)  # waiting for its first frame
            inbox.put_nowait(Inbound(slot=0, raw="{}"))
            for _ in range(gap):
                await asyncio.sleep(0)
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=2.0)
            assert done, f"the driver went on after a cancel {gap} steps after a frame"
            # a frame is taken or left for a next reader, never lost
            assert len(taken) + inbox.qsize() == 1

    asyncio.run(go())


def test_the_wait_takes_a_waiting_frame_but_none_past_its_deadline() -> None:
    async def go() -> None:
        inbox = FairInbox()
        inbox.put_nowait(Inbound(slot=1, raw="{}"))
        with pytest.raises(TimeoutError):
            await next_within(inbox.get, 0.0)
        assert inbox.qsize() == 1
        assert (await next_within(inbox.get, 1e-3)).slot == 1
        with pytest.raises(TimeoutError):
            await next_within(inbox.get, 0.05)

    asyncio.run(go())
